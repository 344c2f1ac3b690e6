"""A tool named for an action is not asked for the action that undoes it: "reinstate my
membership" is refused by a catalogue whose only writer cancels memberships, though that
tool's description lists no requests (no aliases or examples to say what else it does),
nor by a lookup of the same membership: reinstating is an order, which no reader takes."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.vocabulary import named_actions, opposed_gap
from tests.gateway.routing.conftest import dry_run, manifest

MEMBER = {"type": "string", "pattern": "^MB-\\d{4}$", "description": "membership, e.g. MB-1234"}
DOCUMENT = {"type": "string", "pattern": "^DOC-\\d{5}$", "description": "e.g. DOC-10234"}
ORDER = {"type": "string", "pattern": "^OR-\\d{5}$", "description": "the order, e.g. OR-12345"}
INVOICE = {"type": "string", "pattern": "^INV-\\d{5}$", "description": "e.g. INV-00123"}
CATALOGUE = [
    manifest(
        "membership_cancel",
        "POST",
        "Cancels a gym membership at the end of the current billing month.",
        {"membership_id": MEMBER},
    ),
    manifest("membership_plans", "GET", "The gym's membership plans and their prices.", {}),
    manifest(
        "membership_get",
        "GET",
        "A gym membership's plan, status and renewal date.",
        {"membership_id": MEMBER},
    ),
    manifest(
        "document_delete",
        "DELETE",
        "Deletes a document from the shared drive.",
        {"document_id": DOCUMENT},
    ),
    manifest(
        "return_label_create",
        "POST",
        "Creates a prepaid return label for an order.",
        {"order_id": ORDER},
    ),
    manifest("invoice_pay", "POST", "Pays an invoice by card.", {"invoice_id": INVOICE}),
]


def test_a_tool_named_for_cancelling_is_not_asked_to_reinstate() -> None:
    named = named_actions(CATALOGUE[0])
    assert named == frozenset({"cancel"})
    assert opposed_gap(frozenset({"restore"}), named) > 0
    assert opposed_gap(frozenset({"cancel"}), named) == 0
    # a change is no cancel tool's either ("switch booking BK-… to a swing mooring")
    assert opposed_gap(frozenset({"update"}), named) > 0
    assert opposed_gap(frozenset({"pay"}), named) == 0  # not undoing: left to the rest
    assert named_actions(CATALOGUE[1]) is None  # named for no action


def test_a_tool_named_for_making_or_paying_is_not_asked_to_cancel_or_refund() -> None:
    assert opposed_gap(frozenset({"cancel"}), named_actions(CATALOGUE[4])) > 0
    assert opposed_gap(frozenset({"delete"}), named_actions(CATALOGUE[4])) > 0
    assert opposed_gap(frozenset({"refund"}), named_actions(CATALOGUE[5])) > 0
    assert opposed_gap(frozenset({"pay"}), named_actions(CATALOGUE[5])) == 0


@pytest.mark.parametrize(
    "query", ["reinstate my membership MB-1234, I changed my mind", "restore DOC-10234 please"]
)
async def test_undoing_what_a_tool_does_is_refused(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 404, response.text


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("cancel my membership MB-1234 please", "membership_cancel"),
        ("delete DOC-10234 from the drive", "document_delete"),
        ("I need a return label for OR-12345", "return_label_create"),
        ("pay invoice INV-00123 please", "invoice_pay"),
    ],
)
async def test_what_the_tool_does_still_reaches_it(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id
