"""A tool's schema check costs what the value costs, not its options times its items.

jsonschema compared a value with an enum's options one by one (an 80,000-option enum,
from an imported OpenAPI document or an upstream MCP server, checked against an array
of 1,000 items: 8.7 s on the event loop), compared every pair of items ``uniqueItems``
could not sort (990 small objects: 1.5 s), and wrote the whole offending value or
option list into each message (50 wrong items of that enum: 63 MB of messages). The
gateway's keywords (``gateway.registry.keywords``) look values up by key, keep a set
for uniqueness and cut long values short, with jsonschema's verdicts.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema import _keywords as jsonschema_keywords
from jsonschema._utils import equal

from gateway.registry.keywords import key
from gateway.registry.patterns import schema_validator
from tests.conftest import app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool

SCALARS = [0, 1, 1.0, 2, -1, True, False, None, "", "a", "1", "true", 1.5]
json_values = st.recursive(
    st.sampled_from(SCALARS),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "1"]), inner, max_size=3)
    ),
    max_leaves=12,
)
SCHEMAS = [
    {"enum": [1, "a", None, [1, True], {"a": 1}, False]},
    {"enum": [True, [0], {"b": [1.0]}]},
    {"const": [1, {"a": None}]},
    {"const": 1},
    {"const": False},
    {"uniqueItems": True},
    {"type": "array", "minItems": 2, "maxItems": 3},
    {"type": "object", "minProperties": 1, "maxProperties": 2},
    {"maxItems": 0, "minProperties": 1},
    {"anyOf": [{"type": "string"}, {"type": "array", "maxItems": 1}]},
    {"oneOf": [{"type": "array"}, {"type": "array", "minItems": 1}, {"enum": [1]}]},
    {"not": {"type": "array"}},
    {"contains": {"type": "integer"}},
    {"contains": {"enum": [1, "a"]}, "minContains": 2, "maxContains": 3},
    {"contains": {"type": "null"}, "minContains": 0},
    {"prefixItems": [{"type": "integer"}], "items": False},
    {"items": False},
    {"type": "array", "items": {"enum": [0, 1, "a", [True]]}, "uniqueItems": True},
]


def brute_force_unique(items: list[Any]) -> bool:
    """JSON Schema's uniqueItems by definition: no two items equal."""
    return not any(equal(a, b) for i, a in enumerate(items) for b in items[i + 1 :])


@settings(max_examples=400, deadline=None)
@given(value=json_values)
def test_the_verdicts_are_jsonschemas(value: Any) -> None:
    """The replaced keywords accept and refuse what jsonschema does (1 equals 1.0, true is
    not 1, arrays and objects compare item by item); uniqueness is checked against its
    definition (jsonschema's own sorts, then compares neighbours only)."""
    for schema in SCHEMAS:
        ours = schema_validator(schema)
        if "uniqueItems" in schema and isinstance(value, list):
            without = {k: v for k, v in schema.items() if k != "uniqueItems"}
            expected = Draft202012Validator(without).is_valid(value) and brute_force_unique(value)
        else:
            expected = Draft202012Validator(schema).is_valid(value)
        assert ours.is_valid(value) is expected, (schema, value)
        assert (not list(ours.iter_errors(value))) is expected, (schema, value)


def test_equal_values_have_equal_keys() -> None:
    assert key(1) == key(1.0)
    assert key(True) != key(1)
    assert key(False) != key(0)
    assert key([1, {"a": 2.0}]) == key([1.0, {"a": 2}])
    assert key([True]) != key([1])
    assert key({"a": 1, "b": 2}) == key({"b": 2, "a": 1})
    assert key(["array", 1]) != key([1])
    assert key("a") != key(["a"])


@pytest.fixture
def comparisons(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times jsonschema's value comparison ran (its enum, const and
    uniqueItems compared each option, or each pair of items, with it)."""
    count = [0]

    def counted(one: Any, two: Any) -> bool:
        count[0] += 1
        return equal(one, two)

    monkeypatch.setattr(jsonschema_keywords, "equal", counted)
    monkeypatch.setattr(jsonschema_keywords, "uniq", _counting_uniq(count))
    return count


def _counting_uniq(count: list[int]) -> Any:
    def uniq(items: list[Any]) -> bool:
        count[0] += len(items) * (len(items) - 1) // 2  # what its brute force may compare
        return brute_force_unique(items)

    return uniq


def test_an_enum_is_looked_up_not_scanned(comparisons: list[int]) -> None:
    options = [f"plan-{i}" for i in range(5_000)]
    validator = schema_validator({"type": "array", "items": {"enum": options}})
    assert validator.is_valid([options[-1]] * 1_000)
    errors = list(validator.iter_errors(["plan-x"] * 50))
    assert len(errors) == 50
    assert comparisons[0] == 0
    message = errors[0].message
    assert message.startswith("'plan-x' is not one of ['plan-0', 'plan-1', ")
    assert message.endswith(", … and 4980 more]")
    assert sum(len(error.message) for error in errors) < 50 * 600


def test_unique_items_are_a_set_not_every_pair(comparisons: list[int]) -> None:
    validator = schema_validator({"type": "array", "uniqueItems": True})
    assert validator.is_valid([{"sku": i} for i in range(2_000)])
    assert validator.is_valid([i if i % 2 else str(i) for i in range(2_000)])
    [error] = validator.iter_errors([{"sku": i} for i in range(2_000)] + [{"sku": 0}])
    assert error.message.endswith("...] has non-unique elements")
    assert comparisons[0] == 0


def test_messages_show_a_large_value_cut_short() -> None:
    """Every keyword's message showed the whole offending value: a megabyte's ``repr``
    holds the interpreter ~30 ms, and an ``anyOf`` paid it once per branch."""
    big = [[i] * 10 for i in range(20_000)]
    cases = {
        "maxItems": ({"maxItems": 5}, big),
        "minItems": ({"minItems": 30_000}, big),
        "maxProperties": ({"maxProperties": 1}, {f"k{i}": i for i in range(20_000)}),
        "uniqueItems": ({"uniqueItems": True}, [*big, big[0]]),
        "anyOf": ({"anyOf": [{"type": "string"}, {"maxItems": 1}]}, big),
        "oneOf": ({"oneOf": [{"type": "array"}, {"minItems": 1}]}, big),
        "not": ({"not": {"type": "array"}}, big),
        "contains": ({"contains": {"type": "string"}}, big),
        "enum": ({"enum": [1, 2]}, big),
        "const": ({"const": big}, 1),
        "items": ({"prefixItems": [True], "items": False}, big),
        "type": ({"type": "string"}, [big]),
    }
    for keyword, (schema, value) in cases.items():
        errors = list(schema_validator(schema).iter_errors(value))
        assert errors, keyword
        for error in errors:
            assert len(error.message) < 1_000, (keyword, error.message[:200])
            assert all(len(each.message) < 1_000 for each in error.context), keyword
    [small] = schema_validator({"maxItems": 1}).iter_errors([1, [2, "x"]])
    assert small.message == "[1, [2, 'x']] is too long"  # a small value is shown whole
    [extra] = schema_validator({"additionalProperties": False}).iter_errors(
        {f"k{i:05}": i for i in range(60_000)}
    )
    assert extra.message.endswith("… and 59980 more were unexpected)")


async def test_a_tool_with_a_long_enum_checks_a_long_array_by_lookup(
    make_gateway: GatewayFactory, comparisons: list[int]
) -> None:
    """Through the gateway: a registered tool's 5,000-option enum, called with 1,000
    items (on the event loop, under the off-loop bound): no option-by-option scan."""
    options = [f"region-{i:04}" for i in range(5_000)]
    schema = {
        "type": "object",
        "properties": {"regions": {"type": "array", "items": {"enum": options}}},
        "required": ["regions"],
    }
    async with app_client(make_gateway()) as client:
        registered = await client.post(
            "/tools/register",
            json=python_tool("regions", "echo", input_schema=schema),
            headers=ADMIN,
        )
        assert registered.status_code == 201, registered.text
        comparisons[0] = 0
        ok = await client.post(
            "/tools/regions/invoke", json={"arguments": {"regions": [options[-1]] * 1_000}}
        )
        assert ok.status_code == 200, ok.text
        wrong = await client.post(
            "/tools/regions/invoke", json={"arguments": {"regions": ["nowhere"] * 1_000}}
        )
    assert_error(wrong, 422, "invalid_arguments")
    assert len(wrong.json()["message"]) < 4_096
    assert "'nowhere' is not one of ['region-0000', 'region-0001', " in wrong.json()["message"]
    assert comparisons[0] == 0
