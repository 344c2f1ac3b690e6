"""Two currencies named in Chinese reach a converter described only in English
(``Router._converter``): currencies, like identifiers, do not depend on the language."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gateway.routing.currencies import takes_a_pair
from gateway.routing.service import _VALUES
from gateway.routing.text import cjk_share
from tests.gateway.routing.conftest import blind_set, dry_run

# A bank's tools written blind to the router: the rate tool is described only in
# English, the transaction history also in Chinese.
CATALOGUE = blind_set("banking")
RATE_TOOL = next(m for m in CATALOGUE if m["tool_id"] == "get_exchange_rate")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("今天美元兑人民币汇率多少", {"from_currency": "USD", "to_currency": "CNY"}),
        # a Chinese request that begins with an amount is still a Chinese request
        ("1000欧元能换多少港币", {"from_currency": "EUR", "to_currency": "HKD", "amount": 1000}),
    ],
)
async def test_two_currencies_in_chinese_reach_the_english_converter(
    gateway: httpx.AsyncClient, query: str, expected: dict[str, Any]
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "get_exchange_rate", body["route"]
    assert expected.items() <= body["arguments"].items()


async def test_two_currencies_with_no_conversion_stay_with_the_words(
    gateway: httpx.AsyncClient,
) -> None:
    # Dollars and euros, neither converted into: a question about the account's history.
    response = await dry_run(gateway, "上个月美元和欧元的交易流水", "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == "list_account_transactions"


def test_a_converter_requires_a_source_and_a_target_currency() -> None:
    assert takes_a_pair(RATE_TOOL["input_schema"])
    one = {"properties": {"currency": {"type": "string"}}, "required": ["currency"]}
    assert not takes_a_pair(one)
    optional_target = {
        "properties": {"base": {"type": "string"}, "quote_currency": {"type": "string"}},
        "required": ["base"],
    }
    assert not takes_a_pair(optional_target)
    base_quote = {**optional_target, "required": ["base", "quote_currency"]}
    assert not takes_a_pair(base_quote)  # "base" alone does not say it is a currency
    pair = {
        "properties": {"base_currency": {"type": "string"}, "quote_currency": {"type": "string"}},
        "required": ["base_currency", "quote_currency"],
    }
    assert takes_a_pair(pair)


def test_values_in_chinese_text_end_where_the_chinese_begins() -> None:
    assert cjk_share(_VALUES.sub(" ", "1000欧元能换多少港币")) == 1.0
    assert cjk_share(_VALUES.sub(" ", "SKU2024001还有多少库存")) == 1.0
    assert _VALUES.sub(" ", "check SKU2024001 stock").split() == ["check", "stock"]
