"""Identifiers as the micromobility and warehouse sets (``tests/data``, written blind to the
router) type them: one of a few prefixes in any case (pb2280 for ``^(EB|PB|SC)-[0-9]{4}$``),
a rider's own vehicle and the group's others from one sentence, a code typed without its
separator (tnt30118 for ``^[A-Z]{3}-[0-9]{5}$``), bins moved "out of" one "into" another,
order numbers listed without their prefix, and a list's values as identifiers a tool takes.
"""

from __future__ import annotations

from datetime import date

import pytest

from gateway.routing.choose import identifier_parameters, identifier_values, takes_none_of
from gateway.routing.extract import ArgumentExtractor
from tests.gateway.routing.conftest import extracted, object_schema

VEHICLE = {"type": "string", "pattern": "^(EB|PB|SC)-[0-9]{4}$"}
UNLOCK = object_schema(
    {
        "vehicle_id": VEHICLE,
        "group_vehicle_ids": {"type": "array", "items": VEHICLE, "maxItems": 4},
    },
    ["vehicle_id"],
)
SERVICE = object_schema(
    {
        "vehicleIds": {"type": "array", "items": VEHICLE, "minItems": 1},
        "expectedBackAt": {"type": "string", "format": "date-time"},
    },
    ["vehicleIds"],
)


@pytest.mark.parametrize(
    ("query", "own", "group"),
    [
        ("unlock sc 4412", "SC-4412", None),
        ("我跟我老婆一起骑，我骑pb1290 她骑pb1291，一起开锁", "PB-1290", ["PB-1291"]),
        (
            "group ride! unlock EB-1101 for me plus EB-1102 and EB-1107",
            "EB-1101",
            ["EB-1102", "EB-1107"],
        ),
    ],
)
def test_one_of_a_few_prefixes_and_the_others_of_a_group(
    query: str, own: str, group: list[str] | None
) -> None:
    found = extracted(query, UNLOCK)
    assert found["vehicle_id"] == own
    assert found.get("group_vehicle_ids") == group


def test_a_list_of_a_few_prefixes_typed_in_lower_case() -> None:
    found = extracted("把 pb2280、pb2281、pb2285 这三辆先下线", SERVICE)
    assert found["vehicleIds"] == ["PB-2280", "PB-2281", "PB-2285"]


def test_an_ids_prefix_and_a_year_make_no_id() -> None:
    found = extracted("deactivate scooter SC-5019 until 2026-12-09T08:00:00+01:00", SERVICE)
    assert found["vehicleIds"] == ["SC-5019"]  # not SC-2026 as well


MOVE = object_schema(
    {
        "skuCode": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{5}$"},
        "fromBin": {"type": "string", "pattern": "^[A-Z]-[0-9]{2}-[0-9]-[A-Z]$"},
        "toBin": {"type": "string", "pattern": "^[A-Z]-[0-9]{2}-[0-9]-[A-Z]$"},
        "qty": {"type": "integer", "minimum": 1},
        "lotNo": {"type": "string", "description": "批次号"},
    },
    ["skuCode", "fromBin", "toBin", "qty"],
)


def test_a_code_typed_without_its_separator() -> None:
    found = extracted("tnt30118 从 D-02-4-A 调 3 件到拣货位 D-02-1-A，补货用", MOVE)
    assert found["skuCode"] == "TNT-30118"
    assert "lotNo" not in found  # the code is the SKU's, not a lot number too
    assert extracted("TNT 30118 从 D-02-4-A 调 3 件到 D-02-1-A", MOVE)["skuCode"] == "TNT-30118"


def test_out_of_one_bin_into_another() -> None:
    found = extracted("relocate all 12 pcs of mug-00517 out of c-11-1-a into C-12-1-A", MOVE)
    assert (found["fromBin"], found["toBin"]) == ("C-11-1-A", "C-12-1-A")


WAVE = object_schema(
    {
        "orders": {"type": "array", "items": {"type": "string", "pattern": "^SO-[0-9]{6}$"}},
        "priority": {"type": "integer", "minimum": 1, "maximum": 9},
    }
)


@pytest.mark.parametrize(
    ("query", "orders"),
    [
        ("cut a wave for orders 885001 885002 885007 now", ["SO-885001", "SO-885002", "SO-885007"]),
        ("这几单先释放波次：886300 886301，优先级给2", ["SO-886300", "SO-886301"]),
    ],
)
def test_order_numbers_listed_without_their_prefix(query: str, orders: list[str]) -> None:
    assert extracted(query, WAVE)["orders"] == orders


def test_a_short_number_or_a_day_is_no_listed_order() -> None:
    assert "orders" not in extracted("wave of 12 orders on 20261208, priority 2", WAVE)


def test_a_lists_values_are_identifiers_a_tool_takes() -> None:
    extractor = ArgumentExtractor(lambda: date(2026, 12, 7))
    query = "deactivate SC-5019 and EB-1101"
    assert identifier_parameters(SERVICE) == ["vehicleIds"]
    assert identifier_values(extractor, query, SERVICE) == {"SC-5019", "EB-1101"}
    assert not takes_none_of(extractor, query, SERVICE, {"SC-5019"})
    assert takes_none_of(extractor, query, MOVE, {"SC-5019"})


RETURN = object_schema(
    {
        "rma": {"type": "string", "description": "退货授权号（RMA号）"},
        "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{5}$"},
    },
    ["rma", "sku"],
)


def test_a_code_in_capitals_is_written_as_its_own_system_writes_it() -> None:
    # RMA60331 is the return's number, not an SKU RMA-60331 typed without its dash
    found = extracted("RMA60331 came back today: 2x TSH-10422, still sealed", RETURN)
    assert (found["rma"], found["sku"]) == ("RMA60331", "TSH-10422")
    assert "sku" not in extracted("RMA60590 arrived, 5 units all perfect", RETURN)
