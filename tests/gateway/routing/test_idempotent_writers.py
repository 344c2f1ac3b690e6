"""An idempotent POST that changes something (a feature flag's setter, a scaler) is held
to an order's verb as any writer is: safe to repeat is not read-only. Before, such a tool
counted as a reader by its method and was exempt, so "create a new feature flag" went to
the flag *setter*. Raising or lowering a number is changing it, and scaling it.
Catalogue: tests/data/devops, written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("devops")


@pytest.mark.parametrize(
    "query",
    [
        "create a new feature flag called checkout.apple-pay",
        "删除 checkout.old-banner 这个功能开关",
    ],
)
async def test_an_order_an_idempotent_writer_does_not_do_is_refused(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "idempotent")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize(
    "query",
    ["increase user-profile replicas to 4 plz", "scale checkout-web to 10 pods"],
)
async def test_its_own_orders_still_reach_it(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "idempotent")
    assert response.json().get("tool_id") == "scale_service", response.text
