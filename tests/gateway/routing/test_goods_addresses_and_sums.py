"""Arguments the pharmacy and FinOps sets (``tests/data/pharmacy``, ``tests/data/finops``,
written blind to the router) still missed after their first round: what a shop is asked
to have, a flat and a state in a street address, a list of ids typed with their prefix in
lower case, a question the user brings to a consultation, a number whose unit is not the
parameter's, a sum in millions, and a budget's period written after its sum.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.routing.conftest import extracted, object_schema

STOCK = object_schema(
    {
        "store_number": {"type": "integer", "minimum": 1, "maximum": 9999},
        "product": {"type": "string", "description": "商品名称或关键词，如 布洛芬 200mg"},
        "min_qty": {"type": "integer", "minimum": 1, "maximum": 500},
        "radius_km": {"type": "number", "minimum": 0.5, "maximum": 50},
    },
    ["product"],
)


@pytest.mark.parametrize(
    ("query", "product"),
    [
        ("do you have Claritin in stock at store 1052? need 3 boxes", "Claritin"),
        ("any Flonase left at the Lamar store?", "Flonase"),
        ("got melatonin at 1188? need 6 bottles", "melatonin"),
        ("0219店有没有儿童退烧药，没有的话看看附近5公里内的店", "儿童退烧药"),
        ("想买个电子体温计，2040店现在有货不", "电子体温计"),
        ("412店还有布洛芬吗", "布洛芬"),
    ],
)
def test_what_a_shop_is_asked_to_have(query: str, product: str) -> None:
    assert extracted(query, STOCK)["product"] == product


def test_a_question_that_names_no_goods_fills_none() -> None:
    assert "product" not in extracted("do you have any idea when store 1052 opens?", STOCK)


def test_a_dose_is_no_radius_and_an_age_no_store() -> None:
    dosed = extracted("is there nicorette gum 4mg at store 3301, like 10 packs", STOCK)
    assert "radius_km" not in dosed
    assert dosed["store_number"] == 3301
    near = extracted("布洛芬 附近3公里 有没有", STOCK)
    assert near["radius_km"] == 3
    aged = extracted("any ibuprofen for my 84 yo mom", STOCK)
    assert "store_number" not in aged
    assert "min_qty" not in aged


def test_an_age_fills_an_age() -> None:
    schema = object_schema({"age": {"type": "integer", "minimum": 0, "maximum": 120}}, ["age"])
    assert extracted("book a flu shot for my 84 yo dad", schema) == {"age": 84}


DELIVERY = object_schema(
    {
        "rxNumbers": {
            "type": "array",
            "items": {"type": "string", "pattern": "^RX[0-9]{7}$"},
            "description": "Prescriptions to deliver, each RX + 7 digits",
        },
        "address": {
            "type": "object",
            "properties": {
                "line1": {"type": "string"},
                "line2": {"type": "string"},
                "city": {"type": "string"},
                "state": {"type": "string"},
                "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
            },
            "required": ["line1", "city", "zip"],
        },
    },
    ["rxNumbers"],
)


@pytest.mark.parametrize(
    ("query", "address"),
    [
        (
            "deliver RX2209775 to 88 Pine St Apt 4B, Round Rock TX 78664, no signature",
            {
                "line1": "88 Pine St",
                "line2": "Apt 4B",
                "city": "Round Rock",
                "state": "TX",
                "zip": "78664",
            },
        ),
        (
            "send RX5520981 to 12 Oak Ave, Unit 3, Austin, TX 78704 tomorrow",
            {"line1": "12 Oak Ave", "line2": "Unit 3", "city": "Austin", "state": "TX"}
            | {"zip": "78704"},
        ),
        (
            "RX5520981 送到家，地址 1420 Oak Ridge Dr, Austin 78704",
            {"line1": "1420 Oak Ridge Dr", "city": "Austin", "zip": "78704"},
        ),
    ],
)
def test_a_flat_and_a_state_in_a_street_address(query: str, address: dict[str, str]) -> None:
    assert extracted(query, DELIVERY)["address"] == address


def test_a_flat_without_a_part_for_it_is_not_read_as_the_town() -> None:
    schema = object_schema(
        {"street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"}},
        ["street"],
    )
    assert extracted("ship to 88 Pine St Apt 4B, Round Rock TX 78664", schema)["street"] == (
        "88 Pine St"
    )


def test_a_list_of_ids_typed_with_their_prefix_in_lower_case() -> None:
    found = extracted("deliver rx 4471023 and rx 4471031 to my home this friday", DELIVERY)
    assert found["rxNumbers"] == ["RX4471023", "RX4471031"]


CONSULT = object_schema(
    {
        "topic": {"type": "string", "description": "想咨询的问题，自由填写"},
        "mode": {"type": "string", "enum": ["电话", "视频", "到店"]},
    },
    ["topic", "mode"],
)


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        ("想跟药师视频聊一下，最近吃降糖药老是头晕", "最近吃降糖药老是头晕"),
        (
            "I'd like a pharmacist to phone me back about side effects of my new blood pressure"
            " med",
            "side effects of my new blood pressure med",
        ),
        (
            "set up a video consult with a pharmacist to go over my mom's meds",
            "set up a video consult with a pharmacist to go over my mom's meds",
        ),
    ],
)
def test_a_question_brought_to_a_consultation(query: str, topic: str) -> None:
    assert extracted(query, CONSULT)["topic"] == topic


def test_a_name_described_as_free_text_is_no_question() -> None:
    vendor = object_schema(
        {"name": {"type": "string", "description": "Vendor name or fragment, free text."}},
        ["name"],
    )
    assert extracted("它的发票 INV-2026-00055 呢", vendor) == {}


BUDGET = object_schema(
    {
        "amount": {"type": "number", "exclusiveMinimum": 0},
        "period": {"type": "string", "enum": ["monthly", "quarterly", "annual"]},
    },
    ["amount", "period"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "set up a budget for team Orion - 8.5k a month in GBP",
            {"amount": 8500, "period": "monthly"},
        ),
        ("I want a yearly cap of 1.2M dollars", {"amount": 1200000, "period": "annual"}),
        ("a budget of $2M per quarter", {"amount": 2000000, "period": "quarterly"}),
        ("budget 1.5 million a year", {"amount": 1500000, "period": "annual"}),
        ("$300/mo budget for the data team", {"amount": 300, "period": "monthly"}),
    ],
)
def test_a_sum_in_millions_and_its_period_after_it(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, BUDGET) == expected


def test_a_lower_case_m_after_a_number_is_no_million() -> None:
    schema = object_schema({"height": {"type": "number", "description": "in metres"}}, [])
    assert extracted("the mast is 5m tall", schema) == {"height": 5}
