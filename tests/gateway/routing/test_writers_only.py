"""An order whose verb none of the near tools names is refused even when every near tool
writes: "reset 2FA for tom@…" is no support ticket and no SSO setting. The rule that a
writer must do an order's verb used to hold only when the candidates mixed readers and
writers; it now holds whenever the catalogue does (``RoutingService._mixed``). A
question among writers only is still taken as asking for something ("do you have a
phone charger I could borrow?"), and a catalogue of writers only is ranked as before."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import dry_run, manifest

EMAIL = {"type": "string", "format": "email", "description": "the member's email"}
CATALOGUE = [
    {
        **manifest(
            "open_support_ticket",
            "POST",
            "Open a support ticket with our team about a problem in your workspace.",
            {"subject": {"type": "string"}, "details": {"type": "string"}},
        ),
        "examples": [
            "open a ticket: exports to CSV time out",
            "file a support request about slow dashboards",
            "report a bug in the billing page to support",
        ],
    },
    {
        **manifest(
            "update_sso_settings",
            "PATCH",
            "Change the workspace's single sign-on: enforce SSO, set the identity provider.",
            {"enforced": {"type": "boolean"}},
            [],
        ),
        "examples": [
            "turn on mandatory sso",
            "switch our identity provider to Okta",
            "make SSO optional again",
        ],
    },
    {
        **manifest(
            "invite_member",
            "POST",
            "Invite a person to the workspace by email.",
            {"email": EMAIL},
        ),
        "examples": [
            "invite anna@acme.io to the workspace",
            "add bob@acme.io as a member",
            "send an invite to carla@acme.io",
        ],
    },
    {
        **manifest(
            "guest_amenity_request",
            "POST",
            "Ask housekeeping to bring an item to a hotel room: towels, pillows, a charger.",
            {"room": {"type": "string", "pattern": "^\\d{3,4}$"}, "item": {"type": "string"}},
            ["room"],
        ),
        "examples": [
            "two extra towels to room 512 please",
            "can we get another pillow in 1204",
            "send a toothbrush up to room 330",
        ],
    },
    {
        **manifest(
            "request_number_port",
            "POST",
            "Bring a mobile number over from another network (port-in).",
            {"phone_number": {"type": "string", "pattern": "^\\+?[0-9]{8,15}$"}},
        ),
        "examples": [
            "port my number 0412345678 from Vodafone",
            "I want to keep my old number when I switch to you",
            "transfer 0498765432 over from Optus",
        ],
    },
    {
        **manifest(
            "wake_up_call_book",
            "POST",
            "Book a wake-up call for a hotel room.",
            {"room": {"type": "string", "pattern": "^\\d{3,4}$"}, "time": {"type": "string"}},
        ),
        "examples": [
            "wake-up call at 6:30 for room 512",
            "please call 1204 at 7 tomorrow morning",
            "book a wake up call, room 330, 5am",
        ],
    },
    # a reader far from these requests: the catalogue holds both kinds
    manifest("weather_today", "GET", "Today's weather forecast for a city.", {"city": {}}),
]


@pytest.mark.parametrize(
    "query",
    [
        "reset 2FA for tom.h@acme.com, he lost his phone",
        "approve the pending invite for dana@acme.io",
        "Please withdraw the port-in request for 0412777654, I've changed my mind",
    ],
)
async def test_an_order_no_writer_names_is_refused(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("do you have a phone charger I could borrow? room 620", "guest_amenity_request"),
        ("invite dana@acme.io to the workspace", "invite_member"),
        ("turn off mandatory sso, people are locked out", "update_sso_settings"),
    ],
)
async def test_orders_and_requests_a_writer_names_still_reach_it(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id
