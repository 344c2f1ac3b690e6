"""OpenTelemetry for every service: one trace per request, end to end.

- a ``TracerProvider`` per service, with W3C ``traceparent`` propagation (the
  SDK default) on every inbound and outbound hop;
- FastAPI, httpx, SQLAlchemy and Redis instrumentation, bound to that provider;
- a ``BatchSpanProcessor`` writing spans to ``telemetry.spans`` in Postgres, so
  ``GET /traces/{id}`` works with nothing else running;
- OTLP/HTTP export as well when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set.

The span store writes through psycopg (synchronous, from the processor's own
thread) and is deliberately not instrumented: exporting spans must never
create spans.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import structlog
from fastapi import FastAPI
from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.instrumentation.redis import RedisInstrumentor
from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace import Tracer as SdkTracer
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import Decision, ParentBased, Sampler, SamplingResult
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from reach_common.db import libpq_url
from reach_common.server_span import ServerSpanMiddleware
from reach_common.storable import storable, storable_text

log = structlog.get_logger(__name__)

# A batch goes in with COPY to a per-connection staging table, then one INSERT: a few
# statements per batch instead of one per span (executemany), half the CPU per span.
_STAGE = (
    "CREATE TEMP TABLE IF NOT EXISTS span_stage "
    "(LIKE telemetry.spans INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
)
_COPY_SPANS = """
COPY span_stage (
    trace_id, span_id, parent_span_id, service, name, kind,
    start_time, end_time, duration_ms, status_code, status_message, attributes, events
) FROM STDIN
"""
_MOVE_SPANS = """
INSERT INTO telemetry.spans SELECT * FROM span_stage ON CONFLICT (trace_id, span_id) DO NOTHING
"""


def _ns_to_datetime(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Sequence):
        return [_jsonable(v) for v in value]
    return str(value)


# One encoder for every row (json.dumps with options builds one per call). Attribute
# values are strings, numbers, booleans and sequences of them, which it writes as they
# are (a tuple as an array); anything else as its text.
_ENCODER = json.JSONEncoder(default=str)
_KINDS = {kind: kind.name.lower() for kind in SpanKind}
_STATUSES = {code: code.name.lower() for code in StatusCode}


def _attributes_json(attributes: Any) -> str:
    if not attributes:
        return "{}"
    # A span's attributes are a read-only view of the SDK's mapping, whose copy() is a
    # dict at C speed; dict(view) would walk it key by key in Python.
    copy = getattr(attributes, "copy", None)
    values = copy() if copy is not None else dict(attributes)
    encoded = _ENCODER.encode(values)
    return encoded if _NUL_JSON not in encoded else _ENCODER.encode(storable(values))


# Postgres text and JSONB cannot hold NUL, which a request can put in a span (a path
# "/x%00"): one such span would fail the whole batch's COPY, so it is written as U+FFFD.
_NUL_JSON = "\\u0000"


def _text(value: str | None) -> str | None:
    return storable_text(value) if value else value


# A recorded exception's traceback stays in the service's log (which carries the trace id):
# a caller reads its own traces (GET /traces/{id}), and no stack trace reaches a client.
_LOG_ONLY = frozenset({"exception.stacktrace"})


def _events_json(span: ReadableSpan) -> str:
    if not span.events:
        return "[]"
    events = [
        {
            "name": e.name,
            "at": _ns_to_datetime(e.timestamp).isoformat(),
            "attributes": {
                k: _jsonable(v) for k, v in (e.attributes or {}).items() if k not in _LOG_ONLY
            },
        }
        for e in span.events
    ]
    encoded = json.dumps(events)
    return encoded if _NUL_JSON not in encoded else json.dumps(storable(events))


def span_row(span: ReadableSpan) -> tuple[Any, ...]:
    """The ``telemetry.spans`` row for one finished span."""
    ctx = span.get_span_context()
    assert ctx is not None
    start, end = span.start_time or 0, span.end_time or span.start_time or 0
    parent = span.parent
    status = span.status
    return (
        format(ctx.trace_id, "032x"),
        format(ctx.span_id, "016x"),
        format(parent.span_id, "016x") if parent else None,
        str(span.resource.attributes.get("service.name", "unknown")),
        _text(span.name),
        _KINDS[span.kind],
        _ns_to_datetime(start),
        _ns_to_datetime(end),
        (end - start) / 1e6,
        _STATUSES[status.status_code],
        _text(status.description),
        _attributes_json(span.attributes),
        _events_json(span),
    )


def record_leaf(
    tracer: trace.Tracer,
    name: str,
    start_ns: int,
    end_ns: int,
    attributes: dict[str, Any] | None = None,
    error: BaseException | None = None,
) -> None:
    """A finished span with no children, as a child of the current span: ``name`` from
    ``start_ns`` to ``end_ns``, in error (as the SDK records an exception) if ``error``.

    Handed straight to the tracer's span processors: the SDK's start and end (sampler,
    locks, attribute limits, context switch) cost several times more, and a span that
    has no children and whose times are known needs none of it. Not recorded when the
    current trace is not sampled; the SDK's own path when there is no current span or
    the tracer is not the SDK's.
    """
    parent = trace.get_current_span().get_span_context()
    status = Status(StatusCode.UNSET)
    if error is not None:
        status = Status(StatusCode.ERROR, f"{type(error).__name__}: {error}")
    if not parent.is_valid or not isinstance(tracer, SdkTracer):
        span = tracer.start_span(name, start_time=start_ns, attributes=attributes)
        span.set_status(status)
        span.end(end_time=end_ns)
        return
    if not parent.trace_flags.sampled:
        return
    context = SpanContext(
        parent.trace_id,
        tracer.id_generator.generate_span_id(),
        is_remote=False,
        trace_flags=parent.trace_flags,
        trace_state=parent.trace_state,
    )
    tracer.span_processor.on_end(
        ReadableSpan(
            name,
            context,
            parent,
            tracer.resource,
            attributes,
            status=status,
            start_time=start_ns,
            end_time=end_ns,
            instrumentation_scope=tracer._instrumentation_scope,
        )
    )


class PostgresSpanExporter(SpanExporter):
    """Writes finished spans to ``telemetry.spans``, a batch at a time (COPY, then one
    ``INSERT ... ON CONFLICT DO NOTHING``); reconnects after a failure."""

    def __init__(self, database_url: str) -> None:
        self._dsn = libpq_url(database_url)
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()
        self._warned = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        rows = [span_row(s) for s in spans if s.get_span_context() is not None]
        with self._lock:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(self._dsn, autocommit=True, connect_timeout=5)
                    self._conn.execute(_STAGE)
                with self._conn.transaction(), self._conn.cursor() as cur:
                    with cur.copy(_COPY_SPANS) as copy:
                        for row in rows:
                            copy.write_row(row)
                    cur.execute(_MOVE_SPANS)
                self._warned = False
                return SpanExportResult.SUCCESS
            except psycopg.Error as exc:
                if not self._warned:  # once per outage, not once per batch
                    log.warning("span_store_write_failed", error=str(exc).strip())
                    self._warned = True
                if self._conn is not None:
                    self._conn.close()
                self._conn = None
                return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


_PROBE_PATHS = ("/healthz", "/readyz")


class _SkipProbeRoots(Sampler):
    """Drop traces that *start* at a health probe; keep probes inside a caller's trace.

    Kubernetes probes every few seconds would fill the span store, but a
    gateway checking an upstream's health is part of a real request and
    belongs in its trace. Under ``ParentBased`` this sampler only sees roots.
    """

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        attrs = attributes or {}
        path = attrs.get("url.path") or attrs.get("http.target") or name.partition(" ")[2]
        if str(path) in _PROBE_PATHS:
            return SamplingResult(Decision.DROP)
        return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

    def get_description(self) -> str:
        return "SkipProbeRoots"


@dataclass
class Telemetry:
    """A service's tracer provider and the helpers that bind instrumentation to it."""

    service: str
    provider: TracerProvider

    def tracer(self, name: str) -> trace.Tracer:
        return self.provider.get_tracer(name)

    def instrument_app(self, app: FastAPI) -> None:
        """The server span of every request (``reach_common.server_span``); add it last, so
        it is the outermost middleware and every other one runs inside the request's span."""
        app.add_middleware(ServerSpanMiddleware, tracer=self.tracer("reach_common.server_span"))

    def instrument_httpx(self, client: httpx.AsyncClient) -> None:
        HTTPXClientInstrumentor.instrument_client(client, tracer_provider=self.provider)

    def instrument_redis(self, client: Redis) -> None:
        RedisInstrumentor.instrument_client(client, tracer_provider=self.provider)

    def instrument_engine(self, engine: AsyncEngine) -> None:
        # EngineTracer binds one engine to this provider; the instrumentor's
        # global create_engine patch would bind every engine in the process to
        # whichever service configured first.
        counter = metrics.NoOpMeterProvider().get_meter(__name__).create_up_down_counter("db")
        EngineTracer(self.tracer("sqlalchemy"), engine.sync_engine, counter)  # type: ignore[no-untyped-call]

    def flush(self, timeout_ms: int = 5000) -> bool:
        return self.provider.force_flush(timeout_ms)

    def shutdown(self) -> None:
        self.provider.shutdown()


def setup_telemetry(
    service: str,
    *,
    database_url: str | None,
    span_store: bool = True,
    otlp_endpoint: str | None = None,
) -> Telemetry:
    """Build the tracer provider for ``service``; the first one becomes the global."""
    provider = TracerProvider(
        resource=Resource.create({"service.name": service}),
        sampler=ParentBased(root=_SkipProbeRoots()),
    )
    if span_store and database_url:
        provider.add_span_processor(
            BatchSpanProcessor(PostgresSpanExporter(database_url), schedule_delay_millis=500)
        )
    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        endpoint = otlp_endpoint.rstrip("/") + "/v1/traces"
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    # Code that asks for trace.get_tracer() gets this service's provider. In a
    # process hosting several apps (tests), the first one wins; instrumentation
    # above is bound explicitly, so each app's spans keep their own service name.
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        trace.set_tracer_provider(provider)
    return Telemetry(service=service, provider=provider)
