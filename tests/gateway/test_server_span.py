"""The server span every request gets (``reach_common.server_span``): the trace root of a
call, continued from a caller's ``traceparent``, named by route, an error on a 5xx."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from reach_common.server_span import ServerSpanMiddleware
from tests.conftest import app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.upstream import Upstream

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def _traced_app() -> tuple[FastAPI, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    app = FastAPI(telemetry={"tracing": False, "metrics": False, "logs": False})

    @app.get("/items/{item_id}")
    async def item(item_id: str) -> dict[str, Any]:
        with tracer.start_as_current_span("inner"):
            return {
                "id": item_id,
                "trace": format(trace.get_current_span().get_span_context().trace_id, "032x"),
            }

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("boom")

    app.add_middleware(ServerSpanMiddleware, tracer=tracer)
    return app, exporter


async def test_a_request_is_one_server_span_named_by_its_route() -> None:
    app, exporter = _traced_app()
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        answer = await client.get(
            "/items/SKU1?secret=hunter2",
            headers={"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"},
        )
        failed = await client.get("/boom")
        missing = await client.get("/no/such/path/secret-value")
    assert answer.status_code == 200
    assert answer.json()["trace"] == CALLER_TRACE  # the handler runs inside the caller's trace
    spans = {s.name: s for s in exporter.get_finished_spans()}
    server = spans["GET /items/{item_id}"]
    assert server.kind is SpanKind.SERVER
    assert format(server.context.trace_id, "032x") == CALLER_TRACE
    assert server.parent is not None
    assert format(server.parent.span_id, "016x") == CALLER_SPAN
    assert spans["inner"].parent is not None
    assert spans["inner"].parent.span_id == server.context.span_id
    attributes = dict(server.attributes or {})
    assert attributes["http.route"] == "/items/{item_id}"
    assert attributes["http.request.method"] == "GET"
    assert attributes["http.response.status_code"] == 200
    assert attributes["url.path"] == "/items/SKU1"
    assert "hunter2" not in str(attributes)  # never the query string
    assert server.status.status_code is StatusCode.UNSET
    assert failed.status_code == 500
    boom = spans["GET /boom"]
    assert boom.parent is None  # no traceparent: a new trace
    assert boom.status.status_code is StatusCode.ERROR
    assert [e.name for e in boom.events] == ["exception"]
    assert missing.status_code == 404
    assert "GET" in spans  # no route: the raw path is not the name
    assert not [name for name in spans if "secret-value" in name]


async def test_an_invoke_trace_has_one_server_span_and_no_framework_spans(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    """FastAPI's own telemetry stays off: it would add a second server span and a span per
    dependency and endpoint to every call."""
    manifest = http_tool("spanned", f"http://localhost:{upstream.port}/api/inventory/{{sku}}")
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        invoked = await client.post("/tools/spanned/invoke", json={"arguments": {"sku": "S1"}})
        trace_id = invoked.json()["trace_id"]
        body = (await client.get(f"/traces/{trace_id}", headers=ADMIN)).json()
    spans: list[dict[str, Any]] = []
    stack = list(body["spans"])
    while stack:
        node = stack.pop()
        spans.append(node)
        stack.extend(node["children"])
    servers = [s for s in spans if s["kind"] == "server"]
    assert [s["name"] for s in servers] == ["POST /tools/{tool_id}/invoke"]
    assert not [s["name"] for s in spans if s["name"].startswith("fastapi.")]
