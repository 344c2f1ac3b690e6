"""An order whose verb a tool's description names only where it says what the tool does
not do goes to no such tool, reader or writer (``intent.disowns`` in
``Router._misread``): "Book a table for 4 at Riverside this Saturday 7pm" went to the
reservation lookup ("Read only: it cannot create a booking…"), which is named for the
bookings it shows. tests/gateway/routing/test_plain_transfers.py has a writer's case.
Catalogue: tests/data/restaurant, written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("restaurant")
(LOOKUP,) = (m for m in CATALOGUE if m["tool_id"] == "get_reservation")


def test_the_lookup_disowns_booking_and_not_what_it_shows() -> None:
    words = intent.own_words(LOOKUP)
    assert intent.disowns(words, "book")
    assert intent.disowns(words, "cancel")
    assert not intent.disowns(words, "fetch")


@pytest.mark.parametrize(
    "query",
    [
        "Book a table for 4 at Riverside this Saturday 7pm",
        "do you have any tables free for 8 people tonight at old town? we'd like to book",
    ],
)
async def test_an_order_is_not_given_to_a_reader_that_disowns_its_verb(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") != "get_reservation", response.text


async def test_the_route_says_why_the_first_candidate_fell(gateway: httpx.AsyncClient) -> None:
    query = "Book a table for 4 at Riverside this Saturday 7pm"
    why = (await dry_run(gateway, query, "u1")).json()["route"]["why"]
    assert "ranked over get_reservation: it is not the kind of tool" in why, why


@pytest.mark.parametrize(
    "query",
    [
        "hey can you pull up reservation RSV-583027",
        "What time is my booking RSV-118204 on Saturday? can't find the email",
        "Do I have a table booked for Nov 22 2025? phone is 917-555-0143",
    ],
)
async def test_what_the_lookup_does_is_still_its(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") == "get_reservation", response.text
