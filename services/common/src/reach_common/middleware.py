"""Pure ASGI middleware shared by the services."""

from __future__ import annotations

import structlog
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reach_common.errors import current_trace_id, error_body

log = structlog.get_logger(__name__)


class TraceIdHeaderMiddleware:
    """Adds ``X-Trace-Id`` (the OpenTelemetry trace id) to every HTTP response.

    A client can quote it to ops, who read ``GET /traces/{trace_id}``.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_trace_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                trace_id = current_trace_id()
                if trace_id:
                    message.setdefault("headers", [])
                    message["headers"] = [*message["headers"], (b"x-trace-id", trace_id.encode())]
            await send(message)

        await self.app(scope, receive, send_with_trace_id)


class UnhandledErrorMiddleware:
    """The process boundary for requests: an unexpected exception becomes a JSON 500.

    The traceback goes to the log and the span, never to the client. Handled
    errors (``ReachError``, validation, 404) never get here: FastAPI's
    exception handlers, which sit inside this middleware, answer them first.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:  # the request boundary: anything unexpected
            span = trace.get_current_span()
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            log.exception("unhandled_error", path=scope.get("path"), error_type=type(exc).__name__)
            if started:  # too late for a clean answer; the connection is dropped
                raise
            response = JSONResponse(
                error_body("internal_error", "An unexpected error occurred; see the trace."),
                status_code=500,
            )
            await response(scope, receive, send)
