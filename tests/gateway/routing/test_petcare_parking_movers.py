"""Arguments found by the pet-care, parking and removals sets (``tests/data/petcare``,
``parking``, ``movers``, written blind to the router):

- a postcode after "from" / "to" (or an arrow) is read whole ("SW11 2AB", not SW11), and
  its digits are no count of rooms;
- an order line whose thing is one of an enum's options: each option written as it is,
  with its count ("25 BOX-M, 10 BOX-L, 6 TAPE"), else the option a size or a word names
  ("40 small boxes" of BOX-S, 中纸箱 of BOX-M, "two wardrobe boxes" of WARDROBE);
- a weekday beside its date ("Saturday the 19th of December") names that date;
- "the 1st of next month", "8 in the morning", "forty-five minutes", 半个钟;
- two numbers joined by another separator than the option's ("24/7" of ``24_7``);
- a date's month (12月10号) is no count of months.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing import temporal
from tests.gateway.routing.conftest import extracted, object_schema

QUOTE = object_schema(
    {
        "from_postcode": {"type": "string", "description": "Postcode you move out of."},
        "to_postcode": {"type": "string", "description": "Postcode of the new property."},
        "rooms": {"type": "integer", "minimum": 1, "maximum": 12},
        "volume_m3": {"type": "number", "minimum": 1, "maximum": 200},
    },
    required=["from_postcode", "to_postcode"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "roughly what would a move from SW11 2AB to BN1 4GH cost? We've got 4 rooms",
            {"from_postcode": "SW11 2AB", "to_postcode": "BN1 4GH", "rooms": 4},
        ),
        (
            "Get me an estimate from BS3 4LP to BS16 1QY for two rooms",
            {"from_postcode": "BS3 4LP", "to_postcode": "BS16 1QY", "rooms": 2},
        ),
        (
            "quote pls: M14 5RT -> LS6 2AA, approx 18 cubic meters",
            {"from_postcode": "M14 5RT", "to_postcode": "LS6 2AA", "volume_m3": 18},
        ),
    ],
)
def test_a_postcode_is_read_whole(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, QUOTE) == expected


PACKING = object_schema(
    {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {
                        "type": "string",
                        "enum": ["BOX-S", "BOX-M", "BOX-L", "WARDROBE", "BUBBLE", "TAPE"],
                    },
                    "qty": {"type": "integer", "minimum": 1, "maximum": 200},
                },
                "required": ["sku", "qty"],
            },
        }
    }
)


@pytest.mark.parametrize(
    ("query", "lines"),
    [
        (
            "Order packing supplies: 25 BOX-M, 10 BOX-L, 6 TAPE",
            [("BOX-M", 25), ("BOX-L", 10), ("TAPE", 6)],
        ),
        ("Can I order 40 small boxes and 3 rolls of bubble wrap?", [("BOX-S", 40), ("BUBBLE", 3)]),
        ("i need two wardrobe boxes", [("WARDROBE", 2)]),
        ("我要买20个中纸箱", [("BOX-M", 20)]),
        ("send me 15 medium boxes", [("BOX-M", 15)]),
    ],
)
def test_an_order_line_takes_the_option_it_names(query: str, lines: list[tuple[str, int]]) -> None:
    found = extracted(query, PACKING)["items"]
    assert [(line["sku"], line["qty"]) for line in found] == lines


def test_an_order_line_no_option_is_read_in_is_left_for_validation() -> None:
    """A thing no option is read in stays as written: the call is refused, not sent with
    a line silently dropped."""
    found = extracted("send 3 crates of bananas", PACKING)["items"]
    assert found == [{"sku": "crates of bananas", "qty": 3}]


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("quote QT-583920 for Saturday the 19th of December", "quote QT-583920 for the 2026-12-19"),
        ("from the 1st of next month", "from 2027-01-01"),
        ("the day after tomorrow, 8 in the morning", "2026-12-09 , 08:00"),
        ("3 in the afternoon", "15:00"),
        ("9 at night", "21:00"),
    ],
)
def test_days_and_clocks_in_words(text: str, resolved: str) -> None:
    assert temporal.resolve(text, date(2026, 12, 7)) == resolved


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("top up PS-300871 with forty-five minutes", 45), ("给PS-402290加半个钟", 30), ("五分钟", 5)],
)
def test_a_length_in_words(text: str, minutes: int) -> None:
    found = temporal.duration(text, "minute")
    assert found is not None
    assert found[0] == minutes


PERMIT = object_schema(
    {
        "permit_type": {"type": "string", "enum": ["24_7", "weekday_daytime", "nights_weekends"]},
        "start_date": {"type": "string", "format": "date"},
        "months": {"type": "integer", "minimum": 1, "maximum": 12},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "a monthly permit starting January 1, 24/7",
            {"permit_type": "24_7", "start_date": "2027-01-01"},
        ),
        ("月卡，全天24小时，12月10号开始", {"start_date": "2026-12-10"}),
        ("月卡办3个月，12月10号开始", {"start_date": "2026-12-10", "months": 3}),
    ],
)
def test_joined_numbers_and_a_dates_month(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, PERMIT) == expected


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("until the end of january", "until 2027-01-31"),
        ("starting in march", "starting in 2027-03"),
        ("sales for january", "sales for 2026-01"),  # a month alone: the one gone by
    ],
)
def test_a_month_to_come(text: str, resolved: str) -> None:
    assert temporal.resolve(text, date(2026, 12, 7)) == resolved


VISIT = object_schema(
    {
        "service": {"type": "string", "enum": ["walk_30", "walk_60", "drop_in", "overnight"]},
        "stars": {"type": "integer", "minimum": 1, "maximum": 5},
        "tip_amount": {"type": "number", "minimum": 0},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Can someone walk PET-0412 tomorrow? 30 min is fine", {"service": "walk_30"}),
        ("an hour walk for Max please", {"service": "walk_60"}),
        (
            "leave a 4 star review and add a ten dollar tip",
            {"stars": 4, "tip_amount": 10},
        ),
    ],
)
def test_an_option_of_a_word_and_a_number_and_a_tip_beside_stars(
    query: str, expected: dict[str, Any]
) -> None:
    assert extracted(query, VISIT) == expected
