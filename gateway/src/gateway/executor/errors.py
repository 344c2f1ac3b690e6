"""How a tool call can fail, as the caller (often a model) should read it.

- ``ToolTimeout`` (504, ``tool_timeout``): the tool's ``timeout_ms`` ran out.
- ``ToolFailed`` (502, ``tool_error``): the tool answered with an error or
  something unusable; ``upstream_status`` and ``upstream`` carry its answer.
- ``ToolUnavailable`` (503, ``tool_unavailable``): the circuit breaker is open;
  ``Retry-After`` says when to try again.

``counts_as_failure`` says whether a failure speaks about the tool's health
(timeouts, 5xx, connection errors) or only about this call (4xx).

:func:`call_error` is the one place the transport's exceptions and the call's
deadline become these errors (as httpx maps httpcore's exceptions once):

- ``TimeoutError`` when the call's deadline ran out → ``ToolTimeout``; any
  other ``TimeoutError`` → ``ToolFailed`` (the tool timed out internally);
- ``UpstreamConnectError`` → ``ToolFailed`` ("unreachable"), after retries;
- ``UpstreamProtocolError`` → ``ToolFailed``: "is not valid HTTP" (bytes that are not
  an HTTP answer; the bytes are not echoed), "reset the connection", or "broke off its
  answer";
- ``ResponseTooLarge`` → ``ToolFailed``, not counted against the tool's health.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from gateway.executor.transport import (
    ResponseTooLarge,
    TransportError,
    UpstreamConnectError,
    UpstreamProtocolError,
)
from reach_common.errors import ReachError, Unprocessable

if TYPE_CHECKING:
    from gateway.catalog.spec import ToolSpec

# What the tool transports (``transport.py``, ``transport_httpx.py``) raise: one base.
TRANSPORT_ERRORS = (TransportError,)


class InvalidArguments(Unprocessable):
    """422: the arguments do not fit the tool's schema (or a path parameter is a dot
    segment); nothing was called."""

    reason = "invalid_arguments"


class ToolCallError(ReachError):
    counts_as_failure = True


class InvalidToolOutput(ReachError):
    """502: the tool answered, but its output breaks the manifest's ``output_schema``
    (``output_schema_mode: enforce``); ``path`` names the first problem."""

    status_code = 502
    reason = "invalid_tool_output"


class ToolTimeout(ToolCallError):
    status_code = 504
    reason = "tool_timeout"

    def __init__(self, tool_id: str, timeout_ms: int) -> None:
        super().__init__(
            f"Tool {tool_id!r} did not answer within its {timeout_ms} ms timeout. Try again "
            "later or with a narrower request.",
            timeout_ms=timeout_ms,
        )


class ToolFailed(ToolCallError):
    status_code = 502
    reason = "tool_error"

    def __init__(
        self,
        message: str,
        *,
        upstream_status: int | None = None,
        upstream: Any = None,
        counts_as_failure: bool = True,
    ) -> None:
        details: dict[str, Any] = {}
        if upstream_status is not None:
            details["upstream_status"] = upstream_status
        if upstream is not None:
            details["upstream"] = upstream
        super().__init__(message, **details)
        self.upstream_status = upstream_status
        self.counts_as_failure = counts_as_failure


class ToolUnavailable(ToolCallError):
    status_code = 503
    reason = "tool_unavailable"
    counts_as_failure = False

    def __init__(self, tool_id: str, retry_after_s: float) -> None:
        seconds = max(1, math.ceil(retry_after_s))
        super().__init__(
            f"Tool {tool_id!r} is failing and paused by its circuit breaker; "
            f"try again in {seconds} s.",
            headers={"Retry-After": str(seconds)},
            retry_after_s=seconds,
        )


def call_error(
    exc: TransportError | TimeoutError, spec: ToolSpec, *, host: str = "", expired: bool = False
) -> ToolCallError:
    """What a transport failure, or a ``TimeoutError``, means to the caller of ``spec``.

    ``expired`` says the call's own deadline (``timeout_ms``) ran out; ``host`` is
    the host a connection was tried to.
    """
    tool_id = spec.tool_id
    if isinstance(exc, TimeoutError):
        if expired:
            return ToolTimeout(tool_id, spec.timeout_ms)
        return ToolFailed(f"Tool {tool_id!r} timed out internally.")
    if isinstance(exc, ResponseTooLarge):
        return ToolFailed(
            f"Tool {tool_id!r} answered more than the {exc.limit}-byte limit; "
            "ask for less (filters, a smaller page).",
            counts_as_failure=False,  # the tool is healthy; the request asked too much
        )
    if isinstance(exc, UpstreamConnectError):
        return ToolFailed(f"Tool {tool_id!r} is unreachable: could not connect to {host} ({exc}).")
    if isinstance(exc, UpstreamProtocolError) and exc.kind == "not_http":
        return ToolFailed(f"Tool {tool_id!r} answered with bytes that are not valid HTTP.")
    if isinstance(exc, UpstreamProtocolError) and exc.kind == "reset":
        return ToolFailed(f"Tool {tool_id!r} reset the connection before it finished answering.")
    return ToolFailed(f"Tool {tool_id!r} broke off its answer ({exc}).")
