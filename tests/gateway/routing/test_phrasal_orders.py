"""A phrasal verb is read whole: "fire off a test send" sends (firing alone dismisses),
"sign me up for …" enrols (signing alone signs a document). Before, "Can you fire off a
test send of CMP-2327 to the newsletter segment?" held the campaign sender to "fire",
which it does not do, and nothing was chosen. Catalogue: tests/data/crm, written blind
to the router."""

from __future__ import annotations

import httpx

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("crm")


async def test_firing_off_a_send_reaches_the_sender(gateway: httpx.AsyncClient) -> None:
    query = "Can you fire off a test send of CMP-2327 to the newsletter segment?"
    body = (await dry_run(gateway, query, "crm")).json()
    assert body.get("tool_id") == "campaign_send", body
    assert body["arguments"]["campaign_id"] == "CMP-2327"
