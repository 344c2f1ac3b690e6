"""A call with a megabyte of arguments cannot hold the gateway's event loop.

Every call's arguments are redacted (for the audit log and the answer) and checked (no
NUL, no NaN, no nesting past 64 levels, then the tool's schema) before the tool runs.
Both walk every value: a body of 60,000 keys or 240,000 list items (under the 1 MiB
body limit) cost them 160-480 ms, all on the event loop, every other call of the
gateway waiting. Arguments of more than ``OFF_LOOP_VALUES`` values are now redacted
and checked in a worker thread; smaller ones stay on the loop (no thread hop).
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from gateway.invoke import service
from gateway.invoke.validation import OFF_LOOP_VALUES, sizeable
from gateway.registry.patterns import schema_validator
from tests.conftest import app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool
from tests.security.loop_probe import probed, record_threads

SCHEMA = {
    "type": "object",
    "properties": {
        "rows": {"type": "array", "items": {"type": "object"}},
        "note": {"type": "string"},
    },
}
LARGE = {f"k{i}": i for i in range(60_000)}  # about 1 MB of JSON


def test_sizeable_counts_values_and_stops_once_past_the_bound() -> None:
    assert not sizeable({"sku": "SKU2024001", "quantity": 2})
    assert not sizeable({"rows": [{"sku": "A", "qty": 1}] * 300})  # 901 values
    assert sizeable({"rows": [{"sku": "A", "qty": 1}] * 1_000})
    assert sizeable(list(range(OFF_LOOP_VALUES + 1)))
    assert not sizeable({"text": "word " * 100_000})  # one long text: cheap to check
    assert sizeable({"texts": ["word " * 1_000] * 500})
    deep: Any = 1
    for _ in range(OFF_LOOP_VALUES + 10):
        deep = [deep]
    assert sizeable(deep)


@pytest.fixture
def threads_checking(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The threads that redacted and checked a call's arguments."""
    seen: list[str] = []
    record_threads(monkeypatch, seen, service, "redact")
    record_threads(monkeypatch, seen, service, "check_arguments")
    return seen


async def test_large_arguments_are_checked_off_the_loop_and_small_ones_on_it(
    make_gateway: GatewayFactory, threads_checking: list[str]
) -> None:
    async with app_client(make_gateway()) as client:
        registered = await client.post(
            "/tools/register", json=python_tool("rows", "echo", input_schema=SCHEMA), headers=ADMIN
        )
        assert registered.status_code == 201, registered.text
        loop_thread = threading.current_thread().name
        rows = [{"sku": f"SKU{i}", "qty": i} for i in range(1_000)]
        cases = [
            ({"rows": rows[:10]}, 200, True),
            ({"rows": rows}, 200, False),  # valid and large: runs, echoed whole
            ({"rows": rows, "note": LARGE}, 422, False),  # invalid and large: a small 422
        ]
        for arguments, status, on_loop in cases:
            threads_checking.clear()
            response = await client.post("/tools/rows/invoke", json={"arguments": arguments})
            assert response.status_code == status, response.text
            assert len(threads_checking) == 2, threads_checking  # redacted, then checked
            assert (set(threads_checking) == {loop_thread}) is on_loop, threads_checking
        assert_error(response, 422, "invalid_arguments")
        assert len(response.content) < 4096


async def test_the_loop_answers_other_calls_while_large_arguments_are_checked(
    make_gateway: GatewayFactory,
) -> None:
    """While a megabyte of arguments is redacted and checked, the event loop keeps
    turning (a ticker's longest wait is a small part of the call) and a health check
    sent meanwhile is answered first."""
    body = json.dumps({"arguments": {"rows": [], "note": LARGE}}).encode()
    assert len(body) < 1_048_576  # under the body limit
    async with app_client(make_gateway()) as client:
        await client.post(
            "/tools/register", json=python_tool("rows", "echo", input_schema=SCHEMA), headers=ADMIN
        )
        call = client.post(
            "/tools/rows/invoke", content=body, headers={"content-type": "application/json"}
        )
        probe = await probed(client, call, health_after=0.05)  # the body parsed, walks under way
    assert_error(probe.response, 422, "invalid_arguments")
    assert probe.health_at < probe.took * 0.75, probe
    assert probe.longest_wait < probe.took / 2, probe


def test_a_type_error_shows_a_large_value_cut_short_and_a_small_one_whole() -> None:
    """jsonschema wrote the whole wrong value into a type error: for a megabyte of
    nested lists one ``repr`` of ~30 ms that holds the interpreter lock."""
    validator = schema_validator({"type": "object", "properties": {"sku": {"type": "string"}}})
    [small] = validator.iter_errors({"sku": [[1, 2], {"a": "b"}]})
    assert small.message == "[[1, 2], {'a': 'b'}] is not of type 'string'"
    [large] = validator.iter_errors({"sku": [[1] * 10 for _ in range(20_000)]})
    assert large.message.endswith("...] is not of type 'string'")
    assert len(large.message) < 1_000
