"""A question that carries the identifier a lookup is searched by fits that lookup even
when the lookup requires nothing (``choose.carries_a_lookup_key``): "where is
VH-40012 based?" is short, and its words share little with the register's description, but its
one identifier is what the register is looked up by."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.choose import carries_a_lookup_key
from gateway.routing.extract import ArgumentExtractor
from tests.gateway.routing.conftest import dry_run, manifest

VEHICLE = {"type": "string", "pattern": "^VH-\\d{5}$", "description": "fleet number"}
CATALOGUE = [
    manifest(
        "vehicle_register",
        "GET",
        "Search the fleet register: make, model, assigned driver, home depot and the "
        "dates of the last and next service.",
        {"vehicle_id": VEHICLE, "plate": {"type": "string", "description": "number plate"}},
        [],
    ),
    manifest(
        "fuel_card_charges",
        "GET",
        "List the fuel card charges of a vehicle for one month.",
        {"vehicle_id": VEHICLE, "month": {"type": "string", "pattern": "^\\d{4}-\\d{2}$"}},
    ),
    manifest(
        "service_booking",
        "POST",
        "Book a vehicle in for a service at its depot on a given day.",
        {"vehicle_id": VEHICLE, "date": {"type": "string", "format": "date"}},
    ),
    manifest(
        "depot_opening_hours",
        "GET",
        "Opening hours of a depot.",
        {"depot": {"type": "string"}},
    ),
]


@pytest.mark.parametrize("query", ["where is VH-40012 based?", "what make is VH-40012?"])
async def test_a_question_carrying_the_key_reaches_the_lookup(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "vehicle_register"
    assert body["arguments"] == {"vehicle_id": "VH-40012"}


async def test_an_order_carrying_the_key_is_no_lookup(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "delete VH-20931 from the fleet", "u1")
    assert response.json().get("tool_id") != "vehicle_register"


def test_only_a_tool_requiring_nothing_and_a_value_of_its_shape() -> None:
    extractor = ArgumentExtractor()
    register = CATALOGUE[0]["input_schema"]
    assert carries_a_lookup_key(extractor, "who drives VH-20931?", register)
    # A value not of the parameter's shape, or no shaped parameter, proves nothing.
    assert not carries_a_lookup_key(extractor, "who drives the blue van?", register)
    plates = {"properties": {"plate": {"type": "string", "description": "number plate"}}}
    assert not carries_a_lookup_key(extractor, "who drives VH-20931?", plates)
    # A tool with required parameters is judged by carries_identifiers instead.
    charges = CATALOGUE[1]["input_schema"]
    assert not carries_a_lookup_key(extractor, "charges of VH-20931 in 2026-10", charges)
