"""Requests of a warehouse desk (``tests/data/warehouse``, written blind to the router), on
its own catalogue: a stock move takes the SKU and both bins, so the returns log that takes
the SKU alone no longer fits as well ("shift" and 挪 are no words of either tool's); an SKU
typed without its separator; order numbers listed without their prefix.
"""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("warehouse")


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        (
            "把 B-07-3-C 的 SHO-44120 挪 20 双到 B-07-1-C",
            {"skuCode": "SHO-44120", "fromBin": "B-07-3-C", "toBin": "B-07-1-C", "qty": 20},
        ),
        (
            "tnt30118 从 D-02-4-A 调 3 件到拣货位 D-02-1-A，补货用",
            {"skuCode": "TNT-30118", "fromBin": "D-02-4-A", "toBin": "D-02-1-A", "qty": 3},
        ),
    ],
)
async def test_the_tool_that_takes_every_identifier_fits_best(
    gateway: httpx.AsyncClient, query: str, arguments: dict[str, object]
) -> None:
    body = (await dry_run(gateway, query, "ops")).json()
    assert body.get("tool_id") == "stock_move", body
    assert body["arguments"] == arguments


async def test_order_numbers_listed_bare_are_the_waves(gateway: httpx.AsyncClient) -> None:
    query = "cut a wave for orders 885001 885002 885007 now, priority 1"
    body = (await dry_run(gateway, query, "ops")).json()
    assert body.get("tool_id") == "wave_release", body
    assert body["arguments"]["orders"] == ["SO-885001", "SO-885002", "SO-885007"]
