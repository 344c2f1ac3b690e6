"""A description that opens a sentence with its verb and limits it ("Creates bookings only;
changes and cancellations go through the front desk") limits the tool to that verb's
action, as "Only adds" and "New reservations only" did: a change or a cancellation of a
booking is not given to the tool that only makes one (tests/data/property)."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.vocabulary import disclaimed_actions
from tests.gateway.routing.conftest import blind_set, dry_run, manifest

CATALOGUE = blind_set("property")


def _described(description: str) -> dict[str, object]:
    return manifest("amenity_booking_create", "POST", description, {})


def test_a_sentence_opened_by_its_verb_limits_the_tool_to_it() -> None:
    limited = "Reserves a room. Creates bookings only; changes go through the front desk."
    assert {"cancel", "update"} <= disclaimed_actions(_described(limited))
    assert "create" not in disclaimed_actions(_described(limited))
    # a noun before "only", or a verb in the middle of a sentence, limits nothing
    assert not disclaimed_actions(_described("Schedule information only."))
    assert not disclaimed_actions(_described("Sends it; a test send goes only to the team."))


@pytest.mark.parametrize(
    "query", ["把我周五订的会议室改到下午四点", "之前给陈浩开的访客码，改成后天"]
)
async def test_a_change_is_not_given_to_the_tool_that_only_books(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") != "amenity_booking_create", response.text


async def test_it_still_books(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "book the party room for Saturday 2026-12-12 at 20:00", "u1")
    assert response.json().get("tool_id") == "amenity_booking_create", response.text
