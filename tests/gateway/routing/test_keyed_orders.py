"""An order whose verb names one writer's action, with an identifier that writer takes,
reaches it in the request's own language too (``Router._named_writer``): MiniLM weighs
the object over the verb, so "kill WO-103390" ranked the work order's readers and its
creator first and the canceller out of the candidates. "Drop" as an order cancels or
removes as often as it withdraws from a course; dropping a value to another lowers
(changes) it.
Catalogue: tests/data/factory, written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from gateway.routing.vocabulary import requested_actions
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("factory")


def test_drop_cancels_removes_or_withdraws_and_a_value_dropped_is_lowered() -> None:
    assert {"cancel", "delete", "withdraw"} <= requested_actions("drop my repair ticket WO-59480")
    assert requested_actions("drop MATH-1102 for S20218843 please") >= {"withdraw"}
    # lowered, a value is changed, as a raised one is (not cancelled or deleted)
    assert requested_actions("ok, drop its price to 19.99") == {"update", "scale"}
    assert intent.order_verb("ok, drop its price to 19.99") != "drop"
    assert not requested_actions("VPN keeps dropping in us-east")


@pytest.mark.parametrize(
    "query",
    [
        "kill WO-103390 pls, that machine is being decommissioned",
        "drop WO-104001, the press was replaced",
    ],
)
async def test_an_order_with_its_writers_identifier_reaches_it(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    body = response.json()
    assert body.get("tool_id") == "workorder_cancel", response.text
    assert "identifiers or verb point to" in body["route"]["why"]


async def test_a_writer_that_takes_no_such_identifier_is_not_pointed_to(
    gateway: httpx.AsyncClient,
) -> None:
    # "change" names the purchase request's "raise", but it takes no work order number
    response = await dry_run(gateway, "change the priority of WO-102876 to critical", "u1")
    assert response.json().get("tool_id") != "purchase_request_create", response.text


async def test_a_reader_showing_the_state_does_not_share_the_verb(
    gateway: httpx.AsyncClient,
) -> None:
    # workorder_lookup shows "cancelled" work orders; it cancels none
    response = await dry_run(gateway, "cancel WO-103390", "u1")
    assert response.json().get("tool_id") == "workorder_cancel", response.text
