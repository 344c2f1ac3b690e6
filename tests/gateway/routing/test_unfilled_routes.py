"""A weak route the request gives too little to run is no route (``ROUTE_UNFILLED_THRESHOLD``).

Below 0.36 confidence, a best guess whose tool would lack a required argument is more
often a request no tool serves than the right tool asked without its values: "Book me a
train from Manchester to York" reaches a ferry's booking lookup at 0.32 only on
"book". Such a request is answered ``no_matching_tool``, and the answer names the
closest tool and what it lacks. A confident route that lacks an argument is still that
tool's ``invalid_arguments`` (the caller is asked for the value), and a weak route that
has all it needs still runs. The catalogue is the ferry set (``tests/data/ferry``),
written blind to the router.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.app import create_app
from gateway.routing.service import RouterSettings
from gateway.settings import Settings
from reach_common.embeddings import Embedder
from tests.conftest import Backends, app_client
from tests.gateway.routing.conftest import blind_set, dry_run
from tests.gateway.routing.test_run import settings_for

CATALOGUE = blind_set("ferry")


@pytest.mark.parametrize(
    ("query", "closest", "lacking"),
    [
        ("Book me a train from Manchester to York on Friday", "booking_lookup", "booking_ref"),
        ("convert 150 USD to yen", "wallet_topup", "accountNumber"),
        ("Can you find me a hotel in Ardmoor for two nights?", "cabin_availability", "sailing_id"),
        ("帮我订一张去成都的机票", "booking_lookup", "booking_ref"),
    ],
)
async def test_a_weak_route_that_cannot_run_is_no_route(
    gateway: httpx.AsyncClient, query: str, closest: str, lacking: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    body = response.json()
    assert response.status_code == 404, body
    assert body["reason"] == "no_matching_tool"
    assert body.get("tool_id") is None
    assert f"The closest, {closest} (" in body["message"], body["message"]
    assert repr(lacking) in body["message"]
    assert f"but {lacking} missing and" in body["route"]["why"]
    assert body["route"]["closest"] == {"tool_id": closest, "missing": [lacking]}


@pytest.mark.parametrize(
    ("query", "tool_id", "lacking"),
    [
        ("put forty quid in my travel wallet", "wallet_topup", "accountNumber"),
        ("I've lost something on one of your ships", "lost_property_report", "item_type"),
    ],
)
async def test_a_confident_route_still_asks_for_what_it_lacks(
    gateway: httpx.AsyncClient, query: str, tool_id: str, lacking: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    body = response.json()
    assert response.status_code == 422, body
    assert body["reason"] == "invalid_arguments"
    assert body["tool_id"] == tool_id
    assert body["route"]["confidence"] >= RouterSettings().unfilled_threshold
    assert repr(lacking) in body["message"]


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("SL2096 还有海景房吗", "cabin_availability"),
        ("can you get me on SL5102 with my motorbike? just me", "booking_create"),
    ],
)
async def test_a_weak_route_with_all_it_needs_still_runs(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    body = (await dry_run(gateway, query, "u1")).json()
    assert body.get("success") is True, body
    assert body["tool_id"] == tool_id
    assert body["route"]["confidence"] < RouterSettings().unfilled_threshold


async def test_at_the_route_threshold_the_setting_changes_nothing(
    gateway: httpx.AsyncClient, backends: Backends, shop_url: str, embedder: Embedder
) -> None:
    settings = settings_for(backends, shop_url)
    settings.tool_auto_discovery = False
    settings.route_unfilled_threshold = settings.route_threshold
    # a second gateway on the same registry (the module's catalogue, registered by ``gateway``)
    async with app_client(create_app(settings, embedder=embedder)) as client:
        response = await dry_run(client, "convert 150 USD to yen", "u1")
    body = response.json()
    assert response.status_code == 422, body
    assert body["tool_id"] == "wallet_topup"
    assert "'accountNumber'" in body["message"]


def test_the_setting_is_bounded() -> None:
    assert Settings().route_unfilled_threshold == RouterSettings().unfilled_threshold
    with pytest.raises(ValueError, match="route_unfilled_threshold"):
        Settings(route_unfilled_threshold=1.5)
