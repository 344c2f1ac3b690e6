"""An order acts on a thing ("withdraw my damage claim", "cancel the roaming pass"). A
tool whose own words never name that thing is not what the order is for when another
tool of the catalogue is named for it, however close the verb brings the two
(``vocabulary.acted_on``, ``OBJECT_PENALTY``): the claim tool does not cancel, the
pickup tool does not hold claims, so the request is refused."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.vocabulary import OBJECT_PENALTY, acted_on, object_gap
from tests.gateway.routing.conftest import dry_run, manifest

PICKUP = {"type": "string", "pattern": "^PU-\\d{6}$", "description": "pickup, e.g. PU-204518"}
TRACKING = {"type": "string", "pattern": "^CX\\d{10}$", "description": "e.g. CX4820019375"}
CATALOGUE = [
    manifest(
        "cancel_pickup",
        "DELETE",
        "Cancel a courier pickup you booked, so no driver comes to collect.",
        {"pickup_id": PICKUP},
    ),
    manifest(
        "file_claim",
        "POST",
        "File a claim for a parcel that arrived damaged or never arrived.",
        {"tracking_number": TRACKING, "details": {"type": "string"}},
    ),
    manifest(
        "track_shipment",
        "GET",
        "Where a parcel is now and when it will be delivered.",
        {"tracking_number": TRACKING},
    ),
]


@pytest.mark.parametrize(
    "query",
    [
        "can you cancel the claim I filed, the parcel showed up",
        "cancel my shipment, I don't want to send it anymore",
        "cancel my claim, the parcel turned up this morning",
    ],
)
async def test_an_order_for_a_thing_another_tool_is_named_for_is_refused(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("cancel my pickup PU-204518, nothing to send today", "cancel_pickup"),
        ("please cancel the collection PU-204518", "cancel_pickup"),
        ("file a claim for CX4820019375, the box was crushed", "file_claim"),
    ],
)
async def test_an_order_for_the_tools_own_thing_still_reaches_it(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id


def test_what_an_order_acts_on() -> None:
    cancel = frozenset({"cancel"})
    assert acted_on("I'd like to withdraw my damage claim, turns out it works") == (
        frozenset({"cancel", "withdraw"}),
        "claim",
    )
    assert acted_on("cancel the hotel I added to booking 6PNX3K") == (cancel, "hotel")
    assert acted_on("change the card we pay our invoices with") == (frozenset({"update"}), "card")
    assert acted_on("cancel shipment CX4820019375") == (cancel, "shipment")
    # no action verb standing as an order, or nothing after it but a value
    assert acted_on("what is the status of my claim") is None
    assert acted_on("cancel PU-204518") is None
    # a word that also names an action says nothing of the thing ("reschedule booking …")
    assert acted_on("reschedule booking 72819304 to May") is None


def test_only_a_tool_that_takes_the_action_loses_for_another_thing() -> None:
    pickup, claim, travel = (
        CATALOGUE[0],
        CATALOGUE[1],
        manifest("light_travel_time", "POST", "How long light takes to travel a distance.", {}),
    )
    order = acted_on("cancel my claim, the parcel turned up")
    assert object_gap(order, pickup, frozenset({"cancel", "pickup", "courier"})) == OBJECT_PENALTY
    # the claim is the tool's own thing; or the tool does not cancel at all (the action
    # gap's business, not this one's)
    assert object_gap(order, claim, frozenset({"claim", "parcel"})) == 0.0
    assert object_gap(order, travel, frozenset({"light", "travel"})) == 0.0
