"""Currencies named in words, symbols and codes of either case fill currency parameters
(``routing/currencies.py``), the source and the target each by what the request says."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gateway.routing.currencies import currency_value, mentioned, role_of, takes_a_currency
from tests.gateway.routing.conftest import dry_run, manifest

CODE = {"type": "string", "pattern": "^[A-Z]{3}$"}
CATALOGUE = [
    manifest(
        "fx_quote",
        "GET",
        "Quote the exchange rate between two currencies, and what an amount converts to.",
        {
            "sell_currency": {**CODE, "description": "ISO 4217 code of the currency you hand over"},
            "buy_currency": {**CODE, "description": "ISO 4217 code of the currency you receive"},
            "amount": {"type": "number", "description": "how much you hand over"},
        },
        required=["sell_currency", "buy_currency"],
        name="汇率换算",
    ),
    manifest(
        "wire_send",
        "POST",
        "Send a wire payment to a payee's bank account.",
        {
            "payee": {"type": "string", "description": "the payee's name, e.g. Maria Lopez"},
            "amount": {"type": "number"},
            "currency": {"type": "string", "enum": ["EUR", "GBP", "USD", "CHF"]},
        },
    ),
]


def both(query: str) -> tuple[str | None, str | None]:
    source = currency_value(query, "from_currency", CODE)
    target = currency_value(query, "to_currency", CODE, [source])
    return source, target


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("usd to eur?", ("USD", "EUR")),
        ("how many yen would I get for 500 pounds", ("GBP", "JPY")),
        ("what's your cash rate for buying Thai baht with GBP", ("GBP", "THB")),
        ("convert 250 Swiss francs to US dollars", ("CHF", "USD")),
        ("how many HKD is one GBP today", ("GBP", "HKD")),
        ("今天美元兑人民币汇率多少", ("USD", "CNY")),
        ("1000欧元能换多少港币", ("EUR", "HKD")),
        ("€200 in Polish zloty please", ("EUR", "PLN")),
        ("rate eur -> usd", ("EUR", "USD")),
        # An English cue after a name is a whole word: "tomorrow" and "total" say nothing.
        ("I need JPY tomorrow for 300 USD", ("USD", "JPY")),
        ("what's the EUR equivalent of my USD total", ("USD", "EUR")),
    ],
)
def test_the_source_and_the_target_follow_what_the_request_says(
    query: str, expected: tuple[str, str]
) -> None:
    assert both(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "we won the deal, ALL of it",  # "won" and "ALL" are words here, not KRW and ALL
        "try the gold plan",  # nor "try" (TRY) and "gold" (XAU)
        "order 5 units of SKU2024001",
    ],
)
def test_words_that_are_also_codes_or_names_are_not_currencies(query: str) -> None:
    assert mentioned(query) == ()


def test_a_single_currency_is_the_first_named_and_one_the_schema_takes() -> None:
    enum = {"type": "string", "enum": ["EUR", "GBP"]}
    assert currency_value("send 120 quid to Tom", "currency", enum) == "GBP"
    assert currency_value("send 120 dollars to Tom", "currency", enum) is None  # not offered
    assert currency_value("send 120 dollars or euros", "currency", enum) == "EUR"
    assert currency_value("send Korean won", "currency", {"type": "string"}) == "KRW"


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("结果账单上收了我 320 元加油费", "CNY"),
        ("清洁费200元我不认", "CNY"),
        ("多扣了 50 块钱", "CNY"),
        ("收了我 30 美元的过路费", "USD"),  # a currency named is that one
        ("退了两块蛋糕", None),  # no amount of money
    ],
)
def test_an_amount_in_yuan_is_in_cny(query: str, code: str | None) -> None:
    spec = {"type": "string", "pattern": "^[A-Z]{3}$", "description": "币种，如 CNY、USD"}
    assert currency_value(query, "currency", spec) == code


def test_only_currency_parameters_and_their_roles() -> None:
    assert takes_a_currency("ccy", {"type": "string"})
    assert takes_a_currency("sell_ccy", {"type": "string"})
    assert not takes_a_currency("concurrency_mode", {"type": "string"})
    assert takes_a_currency("unit", {"type": "string", "description": "ISO 4217 code"})
    assert takes_a_currency("币种", {"type": "string"})
    assert not takes_a_currency("country", {"type": "string", "pattern": "^[A-Z]{3}$"})
    assert not takes_a_currency("currency", {"type": "integer"})
    names = ("from_currency", "baseCurrency", "buy_ccy", "currencyTo", "total_currency", "ccy")
    assert [role_of(n) for n in names] == ["from", "from", "to", "to", None, None]


@pytest.mark.parametrize(
    ("query", "tool_id", "expected"),
    [
        (
            "how many euros do I get for 300 Swiss francs",
            "fx_quote",
            {"sell_currency": "CHF", "buy_currency": "EUR", "amount": 300},
        ),
        ("1000日元能换多少美元", "fx_quote", {"sell_currency": "JPY", "buy_currency": "USD"}),
        (
            "wire 450 pounds to Maria Lopez",
            "wire_send",
            {"currency": "GBP", "amount": 450},
        ),
    ],
)
async def test_a_routed_call_gets_its_currencies(
    gateway: httpx.AsyncClient, query: str, tool_id: str, expected: dict[str, Any]
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == tool_id
    assert expected.items() <= body["arguments"].items()
