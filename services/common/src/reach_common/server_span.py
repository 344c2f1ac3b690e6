"""The server span of each HTTP request: one pure ASGI middleware, the request's trace root.

It does what the OpenTelemetry ASGI instrumentation did for the services, at a
fraction of its cost per request (that instrumentation walked the route table
and parsed the URL several times on every request: a sixth of the gateway's CPU
per call in ``make bench-gateway``):

- the W3C ``traceparent`` of the request continues its caller's trace;
- the span is current while the app answers, so every span the request makes is
  its child, and ``current_trace_id()`` is the request's;
- it is named ``METHOD /route/template`` once routing has found the route, just
  ``METHOD`` when none did (the sampler, which runs at the start, sees ``url.path``,
  so a health probe that starts a trace is dropped);
- attributes: ``http.request.method``, ``url.path``, ``url.scheme``,
  ``client.address``, ``http.route``, ``http.response.status_code``; never the
  query string (callers' values);
- a 5xx answer or an exception sets the span's status to error; an exception is
  recorded on the span and raised on.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# The headers a propagator reads: the rest of a request's headers are never copied.
_PROPAGATION = frozenset({b"traceparent", b"tracestate", b"baggage"})


def _carrier(scope: Scope) -> dict[str, str]:
    return {
        name.decode("latin-1"): value.decode("latin-1")
        for name, value in scope.get("headers", ())
        if name in _PROPAGATION
    }


def _attributes(scope: Scope, method: str, path: str) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "http.request.method": method,
        "url.path": path,
        "url.scheme": scope.get("scheme", "http"),
    }
    client = scope.get("client")
    if client:
        attributes["client.address"] = client[0]
    return attributes


def _unset(span: trace.Span) -> bool:
    status = getattr(span, "status", None)
    return status is None or status.status_code is StatusCode.UNSET


class ServerSpanMiddleware:
    """Opens, names and ends the server span of every HTTP request."""

    def __init__(self, app: ASGIApp, tracer: trace.Tracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method, path = scope.get("method", ""), scope.get("path", "")
        carrier = _carrier(scope)
        parent = propagate.extract(carrier) if carrier else None
        span = self.tracer.start_span(
            f"{method} {path}",
            context=parent,
            kind=SpanKind.SERVER,
            attributes=_attributes(scope, method, path),
        )
        token = context.attach(trace.set_span_in_context(span, parent))

        async def send_with_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                span.set_attribute("http.response.status_code", status)
                if status >= 500 and _unset(span):  # keep what a handler already said
                    span.set_status(Status(StatusCode.ERROR))
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        except Exception as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise
        finally:
            route = getattr(scope.get("route"), "path", None)
            if isinstance(route, str) and route:
                span.set_attribute("http.route", route)
                span.update_name(f"{method} {route}")
            else:  # no route: the raw path (a caller's values) stays out of the name
                span.update_name(method)
            span.end()
            context.detach(token)
