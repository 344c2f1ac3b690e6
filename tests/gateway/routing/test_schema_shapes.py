"""A property is read whatever form its schema takes: a list of types, ``anyOf`` /
``oneOf``, ``const``, a local ``$ref``.

Manifests imported from OpenAPI say "a nullable count" as ``{"type": ["integer",
"null"]}`` and a choice as ``oneOf`` of constants; before, the filling rules read only a
single ``type`` and an ``enum``, so "order 5 of SKU2024001" filled no ``qty`` and "fast"
no ``mode``. Each property is now read in one form (``shapes.readable``); the call is
still validated against the schema as written.
"""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing import shapes
from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "qty": {"type": ["integer", "null"], "minimum": 1},
        "sku": {"anyOf": [{"type": "string", "pattern": r"^SKU\d{7}$"}, {"type": "null"}]},
        "when": {"$ref": "#/$defs/Day", "description": "Delivery day"},
        "mode": {"oneOf": [{"const": "fast"}, {"const": "slow"}]},
        "tier": {"anyOf": [{"enum": ["gold", "silver"]}, {"const": "bronze"}, {"type": "null"}]},
        "address": {"allOf": [{"$ref": "#/definitions/Address"}]},
    },
    "$defs": {"Day": {"type": "string", "format": "date"}},
    "definitions": {
        "Address": {
            "type": "object",
            "properties": {"city": {"type": ["string", "null"]}, "zip": {"$ref": "#/$defs/Zip"}},
        }
    },
    "required": ["qty", "sku"],
}


def test_every_form_is_read() -> None:
    got = extractor.extract("order 5 of SKU2024001 on 2026-12-24, fast, bronze tier", SCHEMA)
    assert got.arguments == {
        "qty": 5,
        "sku": "SKU2024001",
        "when": "2026-12-24",
        "mode": "fast",
        "tier": "bronze",
    }


def test_the_forms_read_as_one() -> None:
    read = shapes.readable(SCHEMA["properties"], SCHEMA)
    assert read["qty"]["type"] == "integer"
    assert read["when"] == {"type": "string", "format": "date", "description": "Delivery day"}
    assert read["mode"]["enum"] == ["fast", "slow"]
    assert read["tier"]["enum"] == ["gold", "silver", "bronze"]
    assert read["address"]["type"] == "object"
    assert read["address"]["properties"]["city"] == {"type": "string"}
    assert read["address"]["properties"]["zip"] == {}  # points at nothing: says nothing


@pytest.mark.parametrize(
    "properties",
    [
        {"a": {"$ref": "#/properties/a"}},  # itself
        {"a": {"$ref": "#/$defs/B"}, "$defs": {"B": {"$ref": "#/$defs/B"}}},
        {"a": {"$ref": "https://example.com/schema.json"}},  # remote: never fetched
        {"a": {"anyOf": "not a list", "type": ["null"]}},
        {"a": {"oneOf": [{"type": "null"}], "allOf": [1, 2]}},
        {"a": {"enum": [{"x": 1}, [1]], "anyOf": [{"enum": [{"y": 2}]}]}},
    ],
)
def test_a_malformed_or_cyclic_form_says_nothing(properties: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": properties}
    assert extractor.extract("hello 5 fast", schema).arguments == {}
