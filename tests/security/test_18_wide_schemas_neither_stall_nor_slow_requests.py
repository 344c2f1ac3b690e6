"""A tool with thousands of parameters can neither stall the gateway nor slow its requests.

A 1 MB manifest (an admin's, an upstream MCP server's, an imported OpenAPI operation)
declares up to ~50,000 parameters. The router read a request for every one of them, on
the event loop, for every /run that ranked the tool: 10,000 plain parameters cost
0.2-0.4 s a request, and 10,000 with an example in their description ("e.g. AB-00001")
1.8-4.6 s. Compiling such a manifest (the JSON Schema meta-schema check) takes ~2 s,
and it ran on the event loop when the tool was registered and on every replica whose
view took the change. Now a request is read for at most ``bounds.MAX_READ_PROPERTIES``
parameters (the required first; a required one past them is missing) and the first 500
characters of each description (60 descriptions of 15,000 characters cost 1 s a request),
and manifests are compiled in a worker thread.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from gateway.registry import service
from gateway.routing import bounds
from gateway.routing.extract import ArgumentExtractor
from tests.conftest import app_client
from tests.gateway.conftest import ADMIN, GatewayFactory
from tests.security.loop_probe import record_threads
from tests.security.test_16_router_reads_requests_in_linear_time import ratio

EXTRACTOR = ArgumentExtractor()
QUERY = "update the customer record please, the account is AB-00003 and the city is Leeds"
RATIO_BAR = 4  # 8x the parameters: a bounded reading costs about 1x, a full one 8x


def schema(count: int, *, required: list[str] | None = None) -> dict[str, Any]:
    properties = {
        f"field_{i}": {"type": "string", "description": f"e.g. AB-{i:05d}"} for i in range(count)
    }
    return {"type": "object", "properties": properties, "required": required or []}


def test_reading_a_request_costs_the_same_for_8_times_the_parameters() -> None:
    short, long = schema(1_000), schema(8_000)
    cost = ratio(lambda: EXTRACTOR.extract(QUERY, long), lambda: EXTRACTOR.extract(QUERY, short))
    assert cost < RATIO_BAR, f"8x the parameters cost {cost:.1f}x the time"


def test_the_required_parameters_are_read_first_and_the_rest_are_missing() -> None:
    required = [f"field_{i}" for i in (9_000, 3, *range(100, 200))]
    result = EXTRACTOR.extract("the account is AB-09000", schema(10_000, required=required))
    assert result.arguments == {"field_9000": "AB-09000"}  # read although declared late
    assert set(result.missing) == set(required) - {"field_9000"}
    message = result.missing_message(schema(10_000))
    assert "and 91 more" in message
    assert len(message) < 2_000
    assert len(required) > bounds.MAX_READ_PROPERTIES


def wordy(length: int) -> dict[str, Any]:
    """60 parameters whose descriptions are ``length`` characters of everyday words."""
    words = ["the", "customer", "account", "AB-00003", "order", "date", "e.g.", "city"]
    text = " ".join(words[i % len(words)] for i in range(length // 5))[:length]
    properties = {f"field_{i}": {"type": "string", "description": text} for i in range(60)}
    return {"type": "object", "properties": properties, "required": ["field_0"]}


def test_reading_a_request_costs_the_same_for_8_times_the_description() -> None:
    """Through the schema the router reads (``bounds.routing_schema``): 60 descriptions
    of 15,000 characters cost 1 s a /run before."""
    short, long = bounds.routing_schema(wordy(2_000)), bounds.routing_schema(wordy(16_000))
    cost = ratio(lambda: EXTRACTOR.extract(QUERY, long), lambda: EXTRACTOR.extract(QUERY, short))
    assert cost < RATIO_BAR, f"8x the description cost {cost:.1f}x the time"


def test_the_schema_the_router_reads_is_the_schema_when_nothing_is_cut() -> None:
    small = schema(10, required=["field_1"])
    assert bounds.routing_schema(small) is small
    wide = schema(10_000, required=["field_9000", "field_3"])
    read = bounds.routing_schema(wide)
    assert len(read["properties"]) == bounds.MAX_READ_PROPERTIES
    assert list(read["properties"])[:2] == ["field_9000", "field_3"]
    assert read["required"] == ["field_9000", "field_3"]
    assert "field_9999" in getattr(read, "unread", ())
    long = bounds.routing_schema(wordy(16_000))["properties"]["field_0"]["description"]
    assert len(long) == bounds.MAX_READ_DESCRIPTION
    assert len(wordy(16_000)["properties"]["field_0"]["description"]) == 16_000  # not changed


def test_a_required_parameter_the_router_leaves_out_is_missing() -> None:
    required = [f"field_{i}" for i in range(bounds.MAX_READ_PROPERTIES + 5)]
    read = bounds.routing_schema(schema(10_000, required=required))
    result = EXTRACTOR.extract("the account is AB-00003", read)
    assert list(result.arguments.values()) == ["AB-00003"]
    assert set(result.missing) == set(required) - set(result.arguments)
    assert len(result.missing) == len(required) - 1


@pytest.mark.parametrize("how", ["one", "many"])
async def test_manifests_are_compiled_off_the_event_loop(
    make_gateway: GatewayFactory, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Registering (one, or a batch) and the view taking the change: each compile runs in
    a worker thread, never on the event loop's."""
    threads: list[str] = []
    record_threads(monkeypatch, threads, service, "compile_manifest")
    tool = {
        "tool_id": "wide_tool",
        "name": "Wide tool",
        "description": "Update a customer record with new values",
        "input_schema": schema(200),
        "endpoint": {"type": "http", "method": "POST", "url": "http://127.0.0.1:9/x"},
        "permission": "public",
    }
    async with app_client(make_gateway()) as client:
        loop_thread = threading.current_thread().name
        threads.clear()
        if how == "one":
            response = await client.post("/tools/register", json=tool, headers=ADMIN)
        else:
            response = await client.post("/tools:batch", json={"tools": [tool]}, headers=ADMIN)
        assert response.status_code == 201, response.text
        listed = await client.get("/tools/wide_tool")
        assert listed.status_code == 200, listed.text
    assert len(threads) >= 2, threads  # the write, then the view taking the change
    assert loop_thread not in threads
