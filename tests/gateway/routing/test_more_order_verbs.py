"""Orders opened by "record", "declare", "write", "lower" or "reduce": lowering or reducing
a value changes it ("reduce seats to 12" went to the member list, which does not), and
writing something a tool does not write is no tool's ("write the postmortem for INC-…"
went to the incident opener; "write back to the buyer" replies). Catalogue:
tests/data/saasadmin, written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent, vocabulary
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("saasadmin")


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("record 2 cracked housings in LOT-24061501", "record"),
        ("declare SEV1, checkout-web down globally", "declare"),
        ("write the postmortem for INC-2026-0031", "write"),
        ("reduce seats to 12", "reduce"),
        ("lower the priority of INC0012345 to P4", "lower"),
        ("write back to OR2611099903's buyer: Thank you!", "reply"),
    ],
)
def test_the_verbs_open_orders(text: str, verb: str) -> None:
    assert intent.order_verb(text) == verb


def test_lowering_and_reducing_change_a_value() -> None:
    assert "change" in vocabulary.synonyms("reduce")[0]
    assert "update" in vocabulary.synonyms("lower")[0]


async def test_reducing_seats_reaches_the_plan_changer(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "reduce seats to 12", "u1")
    assert response.json().get("tool_id") == "change_subscription_plan", response.text


async def test_writing_a_poem_is_no_tools(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "write a short poem about our workspace", "u1")
    assert response.json().get("tool_id") is None, response.text
