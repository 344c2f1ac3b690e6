"""Pure ASGI middleware shared by the services."""

from __future__ import annotations

import structlog
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reach_common.errors import (
    DependencyUnavailable,
    InternalError,
    InvalidHost,
    PayloadTooLarge,
    ReachError,
    current_trace_id,
    error_response,
)
from reach_common.outages import down_dependency

log = structlog.get_logger(__name__)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands an already-read request ``body`` on once, whole, then
    passes on what the server sends next (a disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


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

    The traceback goes to the log and the span, never to the client. An exception that
    says Redis or Postgres did not answer (``reach_common.outages``) is an outage, not a
    bug: 503 ``dependency_unavailable`` with ``Retry-After``, and a warning in the log. Handled
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
            dependency = down_dependency(exc)
            if dependency is None:
                log.exception(
                    "unhandled_error", path=scope.get("path"), error_type=type(exc).__name__
                )
            else:  # an outage, not a bug: no traceback, a 503 the client may retry
                log.warning(
                    "dependency_unavailable",
                    dependency=dependency,
                    path=scope.get("path"),
                    error_type=type(exc).__name__,
                )
            if started:  # too late for a clean answer; the connection is dropped
                raise
            error = (
                InternalError("An unexpected error occurred; see the trace.")
                if dependency is None
                else DependencyUnavailable(dependency)
            )
            response = error_response(error)
            await response(scope, receive, send)


class TrustedHostMiddleware:
    """Answers only requests whose ``Host`` is one of ``allowed_hosts``.

    A page on an attacker's domain that re-points its DNS name at 127.0.0.1 can
    make a browser send requests to a local service; those carry the attacker's
    host name, so they stop here with 400 ``invalid_host`` (JSON, unlike
    Starlette's plain-text version of the same check).
    """

    def __init__(self, app: ASGIApp, allowed_hosts: list[str]) -> None:
        self.app = app
        self.any = "*" in allowed_hosts
        self.exact = {h.lower() for h in allowed_hosts if not h.startswith("*")}
        self.suffixes = tuple(h[1:].lower() for h in allowed_hosts if h.startswith("*."))

    def _allowed(self, host: str) -> bool:
        return (
            self.any or host in self.exact or (bool(self.suffixes) and host.endswith(self.suffixes))
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.any:
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("host", "")
        host = _host_without_port(header).lower()
        if self._allowed(host):
            await self.app(scope, receive, send)
            return
        response = error_response(InvalidHost("This service does not answer for that Host header."))
        await response(scope, receive, send)


def _host_without_port(header: str) -> str:
    if header.startswith("["):  # [::1]:8080
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class BodyLimitMiddleware:
    """Refuses request bodies over ``max_bytes`` with 413 ``payload_too_large``, and a
    path or query string holding a NUL character with 400 ``invalid_request``.

    A declared ``Content-Length`` over the limit is refused before a byte is
    read. A chunked body is read up to the limit and handed on whole, or
    refused; the server's framing guarantees a body never exceeds its declared
    length, so nothing else needs counting.

    No id, name or filter any service takes can hold NUL, which Postgres refuses in
    text: refused here once, a path or query parameter never reaches a statement with
    one (it would fail there as a 500).
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\x00" in scope["path"] or b"%00" in scope.get("query_string", b""):
            refused = ReachError(
                "The request's path or query string contains a NUL character.",
                reason="invalid_request",
                status_code=400,
            )
            await error_response(refused)(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None:
            if not (declared.isascii() and declared.isdigit()) or int(declared) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        if scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        await self.app(scope, replaying(b"".join(chunks), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            PayloadTooLarge(
                f"The request body is larger than this endpoint accepts ({self.max_bytes} bytes).",
                headers={"Connection": "close"},
                max_bytes=self.max_bytes,
            )
        )
        await response(scope, receive, send)
