"""``Router._plain_writer`` on a bank's tools: "can u transfer 75.50 to the landlord"
ranked ``create_transfer`` first at confidence 0.22, under the threshold; its verb names
the one writer that transfers and the amount it requires is given. Catalogue:
tests/data/banking, written blind to the router; tests/gateway/routing/test_plain_orders.py
has the rule's limits."""

from __future__ import annotations

import httpx

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("banking")
VOUCHED = "identifiers or verb point to"


def test_a_verb_named_in_a_disclaimer_and_in_the_tools_own_words_is_not_disowned() -> None:
    # "a transfer that has been submitted cannot be recalled": it still transfers
    (transfer,) = (m for m in CATALOGUE if m["tool_id"] == "create_transfer")
    assert not intent.disowns(intent.own_words(transfer), "transfer")


async def test_an_order_giving_the_required_amount_reaches_the_one_transfer_tool(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "can u transfer 75.50 to the landlord", "u1")
    body = response.json()
    assert body.get("tool_id") == "create_transfer", response.text
    assert body["arguments"]["amount"] == 75.5
    assert VOUCHED in body["route"]["why"]


async def test_an_order_missing_the_required_amount_is_not_vouched_for(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "can u transfer some money to the landlord", "u1")
    assert VOUCHED not in response.json()["route"]["why"], response.text


async def test_an_order_the_transfer_tool_disowns_is_not_its(gateway: httpx.AsyncClient) -> None:
    # "…it cannot add or remove payees" (``Router._misread``)
    query = "add a new payee: John Smith, sort code 20-45-11, account 55667788"
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") != "create_transfer", response.text
