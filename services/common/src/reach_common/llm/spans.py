"""The span of one model call, recorded by the provider instead of by the vendor's SDK.

The Anthropic SDK traces its own calls by default; its span cost about 0.3 ms of CPU
a call, most of it building a typed copy of every streamed event to read the usage
at the end. The provider turns it off (``open_telemetry=False``) and records the same
call here from what it reads anyway: one ``CLIENT`` span ``anthropic.messages.create``
(the SDK's name, so traces read as before), child of the current span, with the
OpenTelemetry GenAI attributes the SDK's span had (request model, ``max_tokens``,
stream; server address and port; HTTP status and request id; response id and model;
input, output and cache tokens; stop reason; time to the first chunk; ``error.type``
on failure). Its trace context goes out with the request, as the SDK's did.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from reach_common.llm.errors import LLMError

_tracer = trace.get_tracer("reach_common.llm")
_DEFAULT_PORTS = {"https": 443, "http": 80}


class CallSpan:
    """One API call's span: start it before the request, end it once the answer is read."""

    def __init__(
        self,
        name: str,
        provider: str,
        base_url: httpx2.URL,
        route: str,
        request: dict[str, AttributeValue],
    ) -> None:
        port = base_url.port or _DEFAULT_PORTS.get(base_url.scheme)
        path = base_url.path.rstrip("/") + route
        # Never the URL's user info or query (a key some proxies take there).
        origin = f"{base_url.scheme}://{base_url.host}"
        origin += f":{base_url.port}" if base_url.port else ""
        attributes: dict[str, AttributeValue] = {
            "server.address": base_url.host,
            "gen_ai.provider.name": provider,
            "gen_ai.operation.name": "chat",
            **request,
            "http.request.method": "POST",
            "http.route": route,
            "url.scheme": base_url.scheme,
            "url.path": path,
            "url.full": origin + path,
        }
        if port is not None:
            attributes["server.port"] = port
        self.span = _tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        self._started = time.perf_counter()
        self._first_chunk = False

    def headers(self) -> dict[str, str]:
        """The trace context of this span, to send with the request."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier, trace.set_span_in_context(self.span))
        return carrier

    def responded(self, status: int, request_id: str | None) -> None:
        self.span.set_attribute("http.response.status_code", status)
        if request_id:
            self.span.set_attribute("anthropic.request.id", request_id)

    def first_chunk(self) -> None:
        if not self._first_chunk:
            self._first_chunk = True
            elapsed = time.perf_counter() - self._started
            self.span.set_attribute("gen_ai.response.time_to_first_chunk", elapsed)

    def finish(self, attributes: dict[str, Any]) -> None:
        """End with the response's attributes (``None`` values are left out)."""
        self.span.set_attributes({k: v for k, v in attributes.items() if v is not None})
        self.span.set_status(Status(StatusCode.OK))
        self.span.end()

    def fail(self, exc: BaseException) -> None:
        """End as failed: ``error.type`` is the vendor's error type, else our reason. A
        call its caller gave up on (a stream left unread, a cancelled task) just ends,
        as the SDK's span did."""
        if isinstance(exc, (GeneratorExit, asyncio.CancelledError)):
            self.span.end()
            return
        if isinstance(exc, LLMError):
            status = exc.details.get("vendor_status")
            if isinstance(status, int):
                self.span.set_attribute("http.response.status_code", status)
            kind = exc.details.get("vendor_error") or exc.reason
        else:
            kind = type(exc).__name__
        self.span.set_attribute("error.type", str(kind))
        self.span.set_status(Status(StatusCode.ERROR, str(kind)))
        self.span.end()
