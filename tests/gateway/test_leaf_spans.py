"""Cheap spans on the invoke path: leaf spans handed straight to the span processors
(``record_leaf``), and the span store's batch write (COPY, then one insert)."""

from __future__ import annotations

from typing import Any

import psycopg
from opentelemetry import context, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, StatusCode, TraceFlags

from reach_common.db import libpq_url
from reach_common.telemetry import PostgresSpanExporter, record_leaf
from tests.conftest import Backends, app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.upstream import Upstream


def _provider() -> tuple[trace.Tracer, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "gateway"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


def test_a_leaf_is_a_child_of_the_current_span_with_its_times_and_status() -> None:
    tracer, exporter = _provider()
    with tracer.start_as_current_span("parent") as parent:
        record_leaf(tracer, "gateway.validate", 1_000, 3_000, {"n": 1})
        record_leaf(tracer, "gateway.rate_limit", 4_000, 5_000, error=ValueError("no"))
    validate, limit, root = exporter.get_finished_spans()
    assert validate.name == "gateway.validate"
    assert validate.parent is not None
    assert validate.parent.span_id == parent.get_span_context().span_id
    assert validate.context.trace_id == parent.get_span_context().trace_id
    assert validate.context.span_id != parent.get_span_context().span_id
    assert (validate.start_time, validate.end_time) == (1_000, 3_000)
    assert dict(validate.attributes or {}) == {"n": 1}
    assert validate.status.status_code is StatusCode.UNSET
    assert validate.resource.attributes["service.name"] == "gateway"
    assert limit.status.status_code is StatusCode.ERROR
    assert limit.status.description == "ValueError: no"
    assert root.name == "parent"


def test_no_leaf_in_an_unsampled_trace_and_a_root_without_a_parent() -> None:
    tracer, exporter = _provider()
    unsampled = SpanContext(0x1234, 0x5678, is_remote=True, trace_flags=TraceFlags(0))
    token = context.attach(trace.set_span_in_context(NonRecordingSpan(unsampled)))
    try:
        record_leaf(tracer, "gateway.validate", 1_000, 2_000)
    finally:
        context.detach(token)
    assert exporter.get_finished_spans() == ()
    record_leaf(tracer, "gateway.dns", 1_000, 2_000)  # no current span: a trace of its own
    (alone,) = exporter.get_finished_spans()
    assert alone.name == "gateway.dns"
    assert alone.parent is None


def test_the_span_store_writes_a_batch_once(clean_state: Backends) -> None:
    tracer, memory = _provider()
    with tracer.start_as_current_span("root", attributes={"a": "x"}):
        record_leaf(tracer, "gateway.validate", 1_000, 2_000, {"tool.id": "t"})
    spans = memory.get_finished_spans()
    exporter = PostgresSpanExporter(clean_state.database_url)
    try:
        assert exporter.export(spans).name == "SUCCESS"
        assert exporter.export(spans).name == "SUCCESS"  # again: nothing written twice
    finally:
        exporter.shutdown()
    trace_id = format(spans[0].context.trace_id, "032x")
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        rows: list[Any] = conn.execute(
            "SELECT name, parent_span_id, attributes FROM telemetry.spans WHERE trace_id = %s "
            "ORDER BY start_time",
            (trace_id,),
        ).fetchall()
    assert [(name, attributes) for name, _, attributes in rows] == [
        ("gateway.validate", {"tool.id": "t"}),
        ("root", {"a": "x"}),
    ]
    assert rows[0][1] == format(spans[1].context.span_id, "016x")


async def test_a_refused_call_has_its_validate_span_in_error(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    schema = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    manifest = http_tool(
        "leafy", f"http://localhost:{upstream.port}/api/inventory/{{sku}}", input_schema=schema
    )
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        refused = await client.post("/tools/leafy/invoke", json={"arguments": {}})
        body = assert_error(refused, 422, "invalid_arguments")
        trace_body = (await client.get(f"/traces/{body['trace_id']}", headers=ADMIN)).json()
    (root,) = trace_body["spans"]
    children = {child["name"]: child for child in root["children"]}
    assert children["gateway.validate"]["status"] == "error"
    assert "gateway.rate_limit" not in children  # refused before the limits were counted
    assert children["gateway.auth"]["status"] == "unset"
