"""An order that names no identifier reaches the one writer in its language whose own
words do its verb, when the request gives every value that writer requires
(``Router._plain_writer``): MiniLM scores a short request low against a long
description, so "can u transfer 75.50 to the landlord" fell below the threshold with
``create_transfer`` ranked first. Not a writer whose description disowns the verb, nor
one the words rank far below the best. Catalogue: tests/data/saasadmin, written blind
to the router; tests/gateway/routing/test_plain_transfers.py has the transfer."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("saasadmin")
BY_ID = {m["tool_id"]: m for m in CATALOGUE}
VOUCHED = "identifiers or verb point to"


def test_a_description_disowns_a_verb_it_names_only_as_not_done() -> None:
    invite = BY_ID["invite_member"]  # "Does not resend or cancel invitations …"
    assert intent.disowns(intent.own_words(invite), "resend")
    assert not intent.disowns(intent.own_words(invite), "send")


async def test_an_order_with_its_writers_required_values_reaches_it(
    gateway: httpx.AsyncClient,
) -> None:
    query = "Kick out jdoe@acme.com, he left the company last week."
    response = await dry_run(gateway, query, "u1")
    body = response.json()
    assert body.get("tool_id") == "remove_member", response.text
    assert VOUCHED in body["route"]["why"]


@pytest.mark.parametrize(
    ("query", "not_to"),
    [
        # the invite tool "does not resend … invitations that were already sent"
        ("resend the invite to maria.lopez@acme.com, she says the link expired", "invite_member"),
        # "add" is the create class and "admin" a key scope; the words rank the key far down
        ("add dev@contractor.io to the workspace w/ admin", "create_api_key"),
    ],
)
async def test_a_disowned_or_far_ranked_writer_is_not_vouched_for(
    gateway: httpx.AsyncClient, query: str, not_to: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    body = response.json()
    assert body.get("tool_id") != not_to, response.text
    assert VOUCHED not in (body.get("route") or {}).get("why", ""), response.text
