"""Checking in is an order: "check me in for tomorrow, booking E5TY7H" went to the
booking's reader, which took every required value, though the request asks for what
only the check-in tool (described in Chinese, 值机) does. Catalogue: tests/data/travel,
written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("travel")


@pytest.mark.parametrize(
    "query",
    [
        "check me in for tomorrow, booking E5TY7H, last name Smith",
        "check in just me, not the others on the booking — UW4P8B, Patel",
    ],
)
async def test_a_check_in_reaches_the_check_in_tool(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") == "checkin_online", response.text


async def test_looking_up_the_booking_still_reads_it(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "show me booking E5TY7H, last name Smith", "u1")
    assert response.json().get("tool_id") == "booking_lookup", response.text
