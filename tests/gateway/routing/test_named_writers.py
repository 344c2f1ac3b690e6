"""The one writer whose words name an order's verb across languages is vouched for
(``Router._named_writer``), but not for a request that names an identifier and none of
the ones that writer needs; and settling a bill pays it. Catalogue: tests/data/telecom,
written blind to the router (the technician-visit canceller is described in Chinese)."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("telecom")


async def test_a_writer_named_by_its_verb_needs_the_identifier_the_request_gives(
    gateway: httpx.AsyncClient,
) -> None:
    query = "Cancel the Japan roaming pass on 0421654987, the trip got called off"
    response = await dry_run(gateway, query, "writers")
    why = response.json()["route"]["why"]
    assert "identifiers or verb point to" not in why, response.text  # no vouch for it


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("please cancel visit TV-215507, I'll be away", "cancel_technician_visit"),
        (
            "can i settle the overdue 612.30 on ACC-8812004 now? use the card you have on file",
            "pay_bill",
        ),
    ],
)
async def test_an_order_still_reaches_its_writer(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "writers")
    assert response.json().get("tool_id") == tool_id, response.text
