""" "Submit" names no action of its own: what is submitted says which (``intent.submitted``).
An order to submit a purchase request was held to the verb "submit", which the tool's
words ("Raise a purchase request") do not use, and refused. Catalogue: tests/data/factory,
written blind to the router."""

from __future__ import annotations

import httpx

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("factory")


def test_what_is_submitted_is_read_up_to_a_preposition_or_a_stop() -> None:
    assert intent.submitted("submit a ticket under the account category: no login") == {"ticket"}
    assert intent.submitted("Please submit a purchase request: 2 x SP-33410") == {"purchas"}
    assert intent.submitted("submit annual leave for E20931") == {"annual", "leav"}
    assert intent.submitted("submit it") == frozenset()
    assert intent.submitted("cancel the ticket") == frozenset()


async def test_a_submission_reaches_the_writer_naming_what_is_submitted(
    gateway: httpx.AsyncClient,
) -> None:
    query = "Please submit a purchase request: 2 x SP-33410 servo drive, needed by 2024-08-01"
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") == "purchase_request_create", response.text


async def test_submitting_names_no_other_writer(gateway: httpx.AsyncClient) -> None:
    # the work order canceller's words name no downtime report
    response = await dry_run(gateway, "submit a downtime report for CNC-0415", "u1")
    assert response.json().get("tool_id") != "workorder_cancel", response.text
