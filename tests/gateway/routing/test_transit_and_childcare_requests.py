"""Arguments of a transport operator's and a nursery's requests, found by the transit
and childcare sets (``tests/data/transit``, ``tests/data/childcare``, written blind to
the router): a sum of money in words, an account number after its label or an
abbreviation of it, a journey's two ends ("North Point to Airport", 从北角到中环), a card
number typed in groups, a range of zones for an object's ``from`` and ``to``, days
listed under one month ("21 and 22 December", 12月28号和29号), and a switch's two sides
named in Chinese (开启 / 关闭). Then, on the transit catalogue, a tool missing required
values no longer fits as well as one that has all of its own: "top up TC40213377 with
50 dollars" is no season ticket.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
import pytest

from gateway.routing import temporal
from gateway.routing.extract import english_number
from tests.gateway.routing.conftest import blind_set, dry_run, extracted, object_schema

CATALOGUE = blind_set("transit")
MONDAY = date(2026, 12, 7)  # the "today" the sets were written for

PAYMENT = object_schema(
    {
        "invoiceNumber": {"type": "string", "pattern": "^INV-[0-9]{6}$"},
        "amount": {"type": "number", "minimum": 1, "maximum": 5000},
    },
    ["invoiceNumber", "amount"],
)


@pytest.mark.parametrize(
    ("query", "amount"),
    [
        ("settle inv 215530 — twelve hundred and fifty dollars via bank transfer", 1250),
        ("Please take nine hundred and eighty dollars fifty for INV-220117", 980.5),
        ("Put a hundred bucks on INV-220117", 100),
        ("I need to load twenty-five dollars onto INV-220117", 25),
        ("pay INV-220117 two thousand five hundred euros", 2500),
    ],
)
def test_a_sum_of_money_in_words(query: str, amount: float) -> None:
    assert extracted(query, PAYMENT)["amount"] == amount


def test_a_sum_in_words_outside_the_bounds_is_no_amount() -> None:
    assert "amount" not in extracted("pay INV-220117 ten thousand dollars", PAYMENT)


@pytest.mark.parametrize(
    ("words", "number"),
    [
        ("twelve hundred and fifty", 1250),
        ("a hundred", 100),
        ("two thousand five hundred", 2500),
        ("ninety nine", 99),
        ("and", None),
    ],
)
def test_english_number_words(words: str, number: int | None) -> None:
    assert english_number(words.split()) == number


BALANCE = object_schema(
    {
        "family_account": {"type": "string", "description": "Family account number."},
        "month": {"type": "string", "pattern": "^\\d{4}-(0[1-9]|1[0-2])$"},
    },
    ["family_account"],
)


@pytest.mark.parametrize(
    ("query", "account"),
    [
        ("balance on family account 37002 pls", "37002"),
        ("what was our November bill, acct 31188", "31188"),
        ("查一下家庭账户 20533 现在还欠多少学费", "20533"),
        ("账户 41876 十月份的账单是多少钱", "41876"),
    ],
)
def test_an_account_number_after_its_label(query: str, account: str) -> None:
    assert extracted(query, BALANCE)["family_account"] == account


def test_a_bare_number_with_no_label_is_no_account() -> None:
    assert "family_account" not in extracted("how much do I owe for 3 kids", BALANCE)


JOURNEY = object_schema(
    {
        "from_station": {"type": "string", "description": "Departure station name."},
        "to_station": {"type": "string", "description": "Arrival station name."},
        "travel_date": {"type": "string", "format": "date"},
    },
    ["from_station", "to_station"],
)


@pytest.mark.parametrize(
    ("query", "ends"),
    [
        ("My father travels North Point to Airport on Thursday", ("North Point", "Airport")),
        ("Kowloon Bay to Central, 17:45 next Monday", ("Kowloon Bay", "Central")),
        ("老人行动不便，本周六下午两点半从观塘到中环，要人接一下", ("观塘", "中环")),
        ("昨天从北角到中环晚点了半小时", ("北角", "中环")),
        ("12月20日 下午3点，沙田到机场，需要轮椅", ("沙田", "机场")),
        ("后天 07:50 从 Central 去 Harbour Gate，需要有人带路", ("Central", "Harbour Gate")),
    ],
)
def test_a_journeys_two_ends(query: str, ends: tuple[str, str]) -> None:
    found = extracted(query, JOURNEY)
    assert (found.get("from_station"), found.get("to_station")) == ends


EXTRA_DAYS = object_schema(
    {
        "child_id": {"type": "string", "pattern": "^CH\\d{5}$"},
        "dates": {
            "type": "array",
            "items": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
        },
    },
    ["child_id", "dates"],
)


@pytest.mark.parametrize(
    ("query", "dates"),
    [
        ("给 ch44102 加12月28号和29号两天，下午班", ["2026-12-28", "2026-12-29"]),
        ("Book ch31502 in for 21 and 22 December, mornings only", ["2026-12-21", "2026-12-22"]),
        ("CH31502 on Dec 21, 22 and 23 please", ["2026-12-21", "2026-12-22", "2026-12-23"]),
        ("CH31502 要 12月1日、2日和3日", ["2026-12-01", "2026-12-02", "2026-12-03"]),
    ],
)
def test_days_listed_under_one_month(query: str, dates: list[str]) -> None:
    assert extracted(query, EXTRA_DAYS)["dates"] == dates


def test_a_count_after_a_day_is_no_second_day() -> None:
    assert temporal.resolve("Jan 5 and 6 people", MONDAY) == "2027-01-05 and 6 people"


ZONES = {
    "type": "object",
    "properties": {
        "from": {"type": "integer", "minimum": 1, "maximum": 6},
        "to": {"type": "integer", "minimum": 1, "maximum": 6},
    },
    "required": ["from", "to"],
}
TICKET = object_schema(
    {"ticketRef": {"type": "string", "pattern": "^ST\\d{6}$"}, "newZones": ZONES}, ["ticketRef"]
)


@pytest.mark.parametrize(
    ("query", "zones"),
    [
        ("change st-118342 to cover zones 1-4 instead", {"from": 1, "to": 4}),
        ("ST 551203 能不能改成下周一生效，再把区间改成2-6区", {"from": 2, "to": 6}),
        ("ST551203 一区到二区", {"from": 1, "to": 2}),
    ],
)
def test_a_range_of_numbers_fills_a_pair_inside_an_object(
    query: str, zones: dict[str, int]
) -> None:
    assert extracted(query, TICKET)["newZones"] == zones


@pytest.mark.parametrize("query", ["ST551203 from 10-12am", "ST551203 zones 5-2", "ST551203 8-9"])
def test_a_clock_a_reversed_or_an_unbounded_range_is_none(query: str) -> None:
    assert "newZones" not in extracted(query, TICKET)


CARD = object_schema({"card_number": {"type": "string", "pattern": "^TC\\d{8}$"}}, ["card_number"])


@pytest.mark.parametrize(
    "query",
    [
        "what is my balance? The number is TC 1045 8820.",
        "帮我看看 TC-1045-8820 这张卡的余额",
        "balance of tc 1045 8820",
    ],
)
def test_a_card_number_typed_in_groups(query: str) -> None:
    assert extracted(query, CARD)["card_number"] == "TC10458820"


AUTO_RENEW = object_schema(
    {
        "domain": {"type": "string", "description": "域名，例如 example.cn"},
        "action": {"type": "string", "enum": ["开启", "关闭"], "description": "开启或关闭自动续费"},
    },
    ["domain", "action"],
)


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("turn on auto-renew for redmaple.com", {"domain": "redmaple.com", "action": "开启"}),
        ("Stop automatically renewing OldSite.net", {"domain": "oldsite.net", "action": "关闭"}),
        ("帮我把 lanting-art.cn 的自动续期关掉", {"domain": "lanting-art.cn", "action": "关闭"}),
        ("mingdeschool.cn 以后别再自动扣钱续期了", {"domain": "mingdeschool.cn", "action": "关闭"}),
    ],
)
def test_a_switch_named_in_chinese_and_a_domain_name(query: str, arguments: dict[str, Any]) -> None:
    assert extracted(query, AUTO_RENEW) == arguments


CHECK = object_schema(
    {
        "domain": {"type": "string", "pattern": "^[a-z0-9-]{1,63}(\\.[a-z0-9-]{1,63})+$"},
        "also_check_tlds": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[a-z]{2,24}$"},
        },
    },
    ["domain"],
)


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        (
            "check if NorthPeakLabs.com is free, and also try .net and .co",
            {"domain": "northpeaklabs.com", "also_check_tlds": ["net", "co"]},
        ),
        (
            "xiaomaobakery.com 还能买吗？顺便查下 .net 和 .shop 的",
            {"domain": "xiaomaobakery.com", "also_check_tlds": ["net", "shop"]},
        ),
        # a list whose pattern every word matches takes no words: it had listed "same",
        # "thing", "for" …
        ("same thing for mossgardenstudio.co.uk", {"domain": "mossgardenstudio.co.uk"}),
    ],
)
def test_a_domain_and_the_extensions_written_with_their_dot(
    query: str, arguments: dict[str, Any]
) -> None:
    assert extracted(query, CHECK) == arguments


def test_an_email_address_holds_no_domain_to_take() -> None:
    found = extracted("给 lanting-art.cn 设置 hr@ 转发到 hr.lanting@gmail.com", AUTO_RENEW)
    assert found["domain"] == "lanting-art.cn"


async def test_a_tool_with_all_its_values_fits_better_than_one_without(
    gateway: httpx.AsyncClient,
) -> None:
    """Both take the card; only the top-up has everything it needs (the season ticket
    lacks its zones and period), and it uses the amount too."""
    body = (await dry_run(gateway, "top up TC40213377 with 50 dollars", "rider")).json()
    assert body.get("tool_id") == "card_top_up", body
    assert body["arguments"] == {"card_number": "TC40213377", "amount": 50}
