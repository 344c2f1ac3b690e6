"""A span carrying what Postgres cannot store (NUL: a request path "/x%00") is stored with
the character replaced, and never costs the other spans of its batch."""

from __future__ import annotations

import json

import psycopg
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from reach_common.db import libpq_url
from reach_common.telemetry import PostgresSpanExporter
from tests.conftest import Backends


def test_a_nul_in_a_span_costs_neither_that_span_nor_its_batch(clean_state: Backends) -> None:
    finished = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(finished))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("POST /tools/t1/invoke", attributes={"enduser.id": "alice"}):
        pass
    with tracer.start_as_current_span("GET /x\x00", attributes={"url.path": "/x\x00"}) as span:
        span.add_event("note", {"text": "a\x00b", "literal": "\\u0000"})
        span.set_status(Status(StatusCode.ERROR, "bad\x00"))
    exporter = PostgresSpanExporter(clean_state.database_url)
    try:
        assert exporter.export(finished.get_finished_spans()).name == "SUCCESS"
    finally:
        exporter.shutdown()
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        rows = conn.execute(
            "SELECT name, attributes, events, status_message FROM telemetry.spans ORDER BY name"
        ).fetchall()
    assert [row[0] for row in rows] == ["GET /x\ufffd", "POST /tools/t1/invoke"]
    _, attributes, events, status = rows[0]
    assert attributes["url.path"] == "/x\ufffd"
    assert events[0]["attributes"] == {"text": "a\ufffdb", "literal": "\\u0000"}
    assert status == "bad\ufffd"
    assert json.dumps(rows[1][1]) == '{"enduser.id": "alice"}'


def test_a_recorded_exception_is_stored_without_its_traceback(clean_state: Backends) -> None:
    """A caller reads its own traces (GET /traces/{id}): the traceback of a failure it
    caused stays in the service's log, the span keeps the exception's type and message."""
    finished = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(finished))
    with provider.get_tracer("test").start_as_current_span("POST /run") as span:
        try:
            raise ValueError("Out of range float values are not JSON compliant")
        except ValueError as exc:
            span.record_exception(exc)
    exporter = PostgresSpanExporter(clean_state.database_url)
    try:
        exporter.export(finished.get_finished_spans())
    finally:
        exporter.shutdown()
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        (events,) = conn.execute("SELECT events FROM telemetry.spans").fetchone() or (None,)
    (event,) = events
    assert event["name"] == "exception"
    assert event["attributes"]["exception.type"] == "ValueError"
    assert "not JSON compliant" in event["attributes"]["exception.message"]
    assert "exception.stacktrace" not in event["attributes"]
    assert "Traceback" not in json.dumps(events)
