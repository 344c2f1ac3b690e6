"""Arguments of an energy utility's requests, found by the utility set
(``tests/data/utility``, written blind to the router): an address asked for in parts, an
account number that is no amount, counts and days of the month in Chinese numerals, a
range of two clocks, a meter reading in kWh, and a flag whose description says what each
value means.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.routing.conftest import extracted, object_schema

MOVE = object_schema(
    {
        "move_out_date": {"type": "string", "format": "date"},
        "new_address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "postcode": {"type": "string"},
            },
            "required": ["street", "postcode"],
        },
        "final_reading": {"type": "number", "minimum": 0},
    },
    ["move_out_date"],
)


@pytest.mark.parametrize(
    ("query", "address"),
    [
        (
            "keys handed back on 31 dec. new address is Flat 3, 22 Victoria Road, Bristol, BS1 6AA",
            {"street": "Flat 3, 22 Victoria Road", "city": "Bristol", "postcode": "BS1 6AA"},
        ),
        (
            "moving out 2027-01-09, into 14 Elm Grove, Leeds, LS8 1PQ",
            {"street": "14 Elm Grove", "city": "Leeds", "postcode": "LS8 1PQ"},
        ),
        (
            "我下周五搬家，新地址 88 Oxford Road, Manchester, M13 9PL",
            {"street": "88 Oxford Road", "city": "Manchester", "postcode": "M13 9PL"},
        ),
        (
            "moving on 2027-01-09 to 14 Harbour Road, Leith, Edinburgh EH6 6LX",
            {"street": "14 Harbour Road", "city": "Edinburgh", "postcode": "EH6 6LX"},
        ),
    ],
)
def test_an_address_in_parts_takes_each_part(query: str, address: dict[str, str]) -> None:
    arguments = extracted(query, MOVE)
    assert arguments["new_address"] == address
    assert "final_reading" not in arguments  # the house number is no meter reading


def test_a_single_address_parameter_keeps_the_whole_address() -> None:
    tool = object_schema({"address": {"type": "string"}})
    assert extracted("send it to 22 Elm Street, Manchester M1 2AB", tool) == {
        "address": "22 Elm Street, Manchester M1 2AB"
    }


PLAN = object_schema(
    {
        "instalments": {"type": "integer", "minimum": 2, "maximum": 12},
        "amount": {"type": "number", "minimum": 1},
        "account_number": {"type": "string", "pattern": "^[0-9]{10}$"},
    },
    ["instalments"],
)
DEBIT = object_schema(
    {
        "day_of_month": {"type": "integer", "minimum": 1, "maximum": 28},
        "account_number": {"type": "string", "pattern": "^[0-9]{10}$"},
    },
    ["day_of_month"],
)


@pytest.mark.parametrize(
    ("query", "tool", "arguments"),
    [
        (
            "户号 6620014587 欠的 845.50 元，分 5 期还可以吗",
            PLAN,
            {"instalments": 5, "amount": 845.5, "account_number": "6620014587"},
        ),
        ("帮我办个分期吧，两期就行", PLAN, {"instalments": 2}),
        (
            "change dd date to 1st of the month pls acct 2093318870",
            DEBIT,
            {"day_of_month": 1, "account_number": "2093318870"},
        ),
        (
            "直接借记的扣款日期能不能改成每个月二十五号？户号1100234599",
            DEBIT,
            {"day_of_month": 25, "account_number": "1100234599"},
        ),
    ],
)
def test_an_account_number_is_no_amount_and_chinese_numerals_count(
    query: str, tool: dict[str, Any], arguments: dict[str, Any]
) -> None:
    assert extracted(query, tool) == arguments


def test_a_sum_in_chinese_numerals_is_an_amount() -> None:
    tool = object_schema({"amount": {"type": "number", "minimum": 0.01}})
    assert extracted("用支付宝付五百块", tool) == {"amount": 500}


def test_a_day_of_the_month_is_not_read_from_a_building() -> None:
    """三号楼 is building 3, not the third of the month."""
    assert "day_of_month" not in extracted("三号楼的扣款日期", DEBIT)


CHARGER = object_schema(
    {
        "start_time": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
        "end_time": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
        "days": {
            "type": "array",
            "items": {"type": "string", "enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]},
        },
    },
    ["start_time", "end_time"],
)


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        (
            "only charge the car on saturdays and sundays 10:00-16:00",
            {"start_time": "10:00", "end_time": "16:00", "days": ["sat", "sun"]},
        ),
        ("charge 9:30-16:00", {"start_time": "09:30", "end_time": "16:00"}),
        (
            "set my charger to run from 00:30 to 05:00 on weeknights",
            {
                "start_time": "00:30",
                "end_time": "05:00",
                "days": ["mon", "tue", "wed", "thu", "fri"],
            },
        ),
    ],
)
def test_a_range_of_two_clocks_and_weeknights(query: str, arguments: dict[str, Any]) -> None:
    assert extracted(query, CHARGER) == arguments


def test_a_meter_reading_in_kwh_is_the_reading() -> None:
    tool = object_schema(
        {
            "reading": {
                "type": "number",
                "description": "The number on the display (kWh for electricity)",
            }
        }
    )
    assert extracted("电表读数 5620.7 度，昨天抄的", tool) == {"reading": 5620.7}
    # a unit the parameter says nothing of is still another measure's
    dose = object_schema({"count": {"type": "integer", "description": "how many boxes"}})
    assert extracted("the 20 mg tablets", dose) == {}


PREFERENCES = object_schema(
    {
        "paperless": {
            "type": "boolean",
            "description": "true = bills by email only, false = paper bills by post",
        },
        "marketing_opt_in": {"type": "boolean", "description": "Consent to offers and promotions"},
    }
)


@pytest.mark.parametrize(
    ("query", "paperless"),
    [
        ("I'd prefer paper bills by post again", False),
        ("send my bills by email only from now on", True),
        ("what's my balance", None),
    ],
)
def test_a_flag_takes_the_value_whose_description_the_request_says(
    query: str, paperless: bool | None
) -> None:
    assert extracted(query, PREFERENCES).get("paperless") == paperless


def test_with_says_yes_only_to_a_flag_about_what_follows_it() -> None:
    """ "not good with computers" consents to no marketing; "pay with alipay" saves no card;
    "a spot with an EV charger" asks for one."""
    assert "marketing_opt_in" not in extracted(
        "I'd prefer paper bills by post again, I'm not good with computers", PREFERENCES
    )
    card = object_schema({"save_payment_method": {"type": "boolean", "default": False}})
    assert extracted("pay INV-533870 with alipay, 500", card) == {}
    parking = object_schema({"ev_charging": {"type": "boolean"}})
    assert extracted("can I get a garage spot with an EV charger?", parking) == {
        "ev_charging": True
    }
