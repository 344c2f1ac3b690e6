"""``output_schema`` is enforced: an output that breaks it never reaches a caller as a
success.

A real loopback upstream answers; the gateway checks each successful output against
the manifest's compiled ``output_schema``. A mismatch is 502 ``invalid_tool_output``
naming the first problem's JSON path (audited as failed), or, with
``output_schema_mode: warn``, the output passes with the mismatch on the span and the
audit row. A matching output passes unchanged.
"""

from __future__ import annotations

from typing import Any

import psycopg

from reach_common.db import libpq_url
from tests.conftest import Backends, app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.test_traces import walk
from tests.gateway.upstream import Reply, Upstream

STOCK_SCHEMA = {
    "type": "object",
    "properties": {
        "sku": {"type": "string"},
        "available": {"type": "integer"},
        "history": {
            "type": "array",
            "items": {"type": "object", "properties": {"price": {"type": "number"}}},
        },
    },
    "required": ["sku", "available"],
}
GOOD = {"sku": "SKU2024001", "available": 156, "history": [{"price": 12.5}, {"price": 13}]}


def stock_tool(upstream: Upstream, **overrides: Any) -> dict[str, Any]:
    return http_tool(
        "stock", upstream.url + "/stock", **{"output_schema": STOCK_SCHEMA, **overrides}
    )


def audit(backends: Backends) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        return conn.execute(
            "SELECT tool_id, status, reason, http_status FROM gateway.invocation ORDER BY id"
        ).fetchall()


async def test_a_wrong_type_is_invalid_tool_output_naming_the_field(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    wrong = {**GOOD, "available": "156"}  # the upstream sends a string
    deep = {**GOOD, "history": [{"price": 12.5}, {"price": "cheap"}]}
    upstream.script = [Reply(body=wrong), Reply(body=deep), Reply(body={"available": 3})]
    async with app_client(make_gateway()) as client:
        registered = await client.post("/tools/register", json=stock_tool(upstream), headers=ADMIN)
        assert registered.status_code == 201, registered.text
        answers = [
            await client.post("/tools/stock/invoke", json={"arguments": {}}) for _ in range(3)
        ]
    first, second, third = (assert_error(a, 502, "invalid_tool_output") for a in answers)
    # The details sit in the envelope's `error`, next to its reason and message.
    assert first["error"]["path"] == "$.available"
    assert "'156' is not of type 'integer'" in first["message"]
    assert "$.available" in first["message"]
    assert first["success"] is False
    assert "output" not in first  # the malformed data is not handed on
    assert second["error"]["path"] == "$.history[1].price"
    assert third["error"]["path"] == "$"
    assert "'sku' is a required property" in third["error"]["problem"]
    assert audit(clean_state) == [
        ("stock", "failed", "invalid_tool_output", 502),
        ("stock", "failed", "invalid_tool_output", 502),
        ("stock", "failed", "invalid_tool_output", 502),
    ]


async def test_a_matching_output_passes_unchanged(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    upstream.default = Reply(body=GOOD)
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=stock_tool(upstream), headers=ADMIN)
        answer = await client.post("/tools/stock/invoke", json={"arguments": {}})
        via_run = await client.post(
            "/run",
            json={"user_query": "stock", "user_context": {"user_id": "u1"}},
        )
    assert answer.status_code == 200, answer.text
    assert answer.json()["output"] == GOOD
    assert via_run.json()["output"] == GOOD
    assert audit(clean_state)[0] == ("stock", "succeeded", None, 200)


async def test_warn_mode_passes_the_output_and_records_the_mismatch(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    wrong = {**GOOD, "available": "156"}
    upstream.default = Reply(body=wrong)
    manifest = stock_tool(upstream, output_schema_mode="warn")
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        answer = await client.post("/tools/stock/invoke", json={"arguments": {}})
        trace = await client.get(f"/traces/{answer.json()['trace_id']}", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    assert answer.json()["output"] == wrong
    events = [e for s in walk(trace.json()["spans"]) for e in s["events"]]
    (mismatch,) = [e for e in events if e["name"] == "gateway.output_schema_mismatch"]
    assert mismatch["attributes"]["path"] == "$.available"
    assert mismatch["attributes"]["mode"] == "warn"
    assert audit(clean_state) == [("stock", "succeeded", "invalid_tool_output", 200)]


async def test_errors_are_not_checked_and_a_broken_schema_is_refused(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    upstream.default = Reply(status=404, body={"message": "no such sku"})
    broken = stock_tool(
        upstream, output_schema={"type": "object", "properties": {"a": {"type": 5}}}
    )
    external = stock_tool(upstream, output_schema={"$ref": "https://example.com/s.json"})
    async with app_client(make_gateway()) as client:
        refused = await client.post("/tools/register", json=broken, headers=ADMIN)
        remote = await client.post("/tools/register", json=external, headers=ADMIN)
        await client.post("/tools/register", json=stock_tool(upstream), headers=ADMIN)
        failed = await client.post("/tools/stock/invoke", json={"arguments": {}})
    error = assert_error(refused, 422, "invalid_manifest")
    assert "output_schema/properties/a/type" in error["message"]
    assert "output_schema" in assert_error(remote, 422, "invalid_manifest")["message"]
    # An upstream error stays the upstream's error, not a schema problem.
    assert_error(failed, 502, "tool_error")
