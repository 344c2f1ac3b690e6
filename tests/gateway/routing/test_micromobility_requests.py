"""Requests of a bike-share desk (``tests/data/micromobility``, written blind to the
router), on its own catalogue: "buy" orders what the tool named 购买骑行卡 ("purchase, buy
ride card" in the dictionary) does; a rider's vehicle and the group's others; vehicles
listed for a staff tool whose list is all it requires (a list's values are identifiers
it takes, not ones it leaves).
"""

from __future__ import annotations

import httpx

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("micromobility")


async def test_buying_is_what_a_chinese_name_says(gateway: httpx.AsyncClient) -> None:
    body = (await dry_run(gateway, "buy a monthly pass", "rider")).json()
    assert body.get("tool_id") == "pass_purchase", body
    assert body["arguments"] == {"pass_type": "月卡"}


async def test_a_group_ride_unlocks_the_riders_and_the_others(gateway: httpx.AsyncClient) -> None:
    query = "group ride! unlock EB-1101 for me plus EB-1102 and EB-1107 for my 2 friends"
    body = (await dry_run(gateway, query, "rider")).json()
    assert body.get("tool_id") == "ride_unlock", body
    assert body["arguments"] == {
        "vehicle_id": "EB-1101",
        "group_vehicle_ids": ["EB-1102", "EB-1107"],
    }


async def test_a_list_of_vehicles_is_the_staff_tools(gateway: httpx.AsyncClient) -> None:
    query = "deactivate scooter SC-5019 until 2026-12-09T08:00:00+01:00, waiting on parts"
    body = (await dry_run(gateway, query, "ops")).json()
    # the status is not said ("deactivate" names none of its options): asked for, on the
    # right tool, with the one vehicle and the time it is back
    assert body.get("reason") == "invalid_arguments", body
    assert body["tool_id"] == "fleet_set_service_status", body
    assert body["arguments"] == {
        "vehicleIds": ["SC-5019"],
        "expectedBackAt": "2026-12-09T08:00:00+01:00",
    }
