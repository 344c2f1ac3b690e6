"""``mcp`` tools: a ``tools/call`` to a federated MCP server over its kept session.

- a tool whose definition the server changed is refused before anything is sent
  (409 ``tool_definition_changed``) until an admin accepts the new version;
- ``isError: true`` from the server is the tool's own failure: 502 ``tool_error``
  carrying the server's text, not counted against its health;
- a transport failure (connection refused or lost) is 502 ``tool_error``
  ("unreachable"), counted by the breaker, which then answers 503
  ``tool_unavailable`` at once; a session found broken is dropped, so the next
  call opens a new one;
- only idempotent tools (``readOnlyHint``) are retried, on transport failures,
  within the call's deadline, with the manifest's backoff;
- the answer is the server's ``structuredContent`` when it sends one, else its
  text (parsed as JSON when it is JSON), else its content blocks; one larger than
  ``max_response_bytes`` is refused, and the transport reads none larger than
  ``MCP_MAX_MESSAGE_BYTES``.

The sessions come from the federation (``gateway.mcp.federation``), injected as
:class:`McpSessions`, so the executor knows nothing of how servers are registered.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult, TextContent
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from gateway.catalog.spec import McpTarget, ToolSpec
from gateway.executor.errors import ToolFailed
from gateway.executor.http import CallStats, loads_json
from reach_common.errors import Conflict, ReachError

# What a call over a broken or unreachable session raises; mapped here, once.
_TRANSPORT = (
    OSError,
    httpx2.HTTPError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
)
_TEXT_LIMIT = 2000


class ToolDefinitionChanged(Conflict):
    """409: the server changed this tool's definition; an admin must accept it first."""

    reason = "tool_definition_changed"

    def __init__(self, tool_id: str, server_id: str) -> None:
        super().__init__(
            f"Tool {tool_id!r} is held back: MCP server {server_id!r} changed its definition "
            "(description or input schema), and an admin has not accepted the new version "
            f"(POST /mcp/servers/{server_id}/accept).",
            server_id=server_id,
        )


class McpSessions(Protocol):
    async def session(self, server_id: str) -> ClientSession: ...

    async def discard(self, server_id: str, session: ClientSession) -> None: ...

    def oversized(self, server_id: str) -> bool: ...


class _Broken(Exception):
    """A transport failure of one attempt: worth another attempt for an idempotent tool."""

    def __init__(self, error: ToolFailed) -> None:
        super().__init__(error.message)
        self.error = error


class McpExecutor:
    def __init__(self, sessions: McpSessions, tracer: trace.Tracer) -> None:
        self._sessions = sessions
        self._tracer = tracer

    async def call(
        self,
        spec: ToolSpec,
        target: McpTarget,
        arguments: dict[str, Any],
        *,
        deadline: float,
        stats: CallStats,
    ) -> Any:
        """Run the call; the caller enforces ``deadline`` (loop time) around it."""
        if target.held_back:
            raise ToolDefinitionChanged(spec.tool_id, target.server)
        loop = asyncio.get_running_loop()
        retries = spec.retry.max_retries if spec.idempotent else 0
        backoff_s = spec.retry.backoff_ms / 1000
        for attempt in range(retries + 1):
            stats.attempts += 1
            try:
                result = await self._attempt(spec, target, arguments)
            except _Broken as exc:
                wait = min(backoff_s * 2**attempt, spec.retry.max_backoff_ms / 1000)
                if attempt == retries or loop.time() + wait >= deadline:
                    raise exc.error from None
                trace.get_current_span().add_event(
                    "retry", {"attempt": attempt + 1, "sleep_ms": round(wait * 1000, 1)}
                )
                await asyncio.sleep(wait)
                continue
            return _output(spec, result)
        raise AssertionError("unreachable")  # the loop returns or raises

    async def _attempt(
        self, spec: ToolSpec, target: McpTarget, arguments: dict[str, Any]
    ) -> CallToolResult:
        with self._tracer.start_as_current_span(
            "mcp tools/call",
            kind=SpanKind.CLIENT,
            attributes={"mcp.server": target.server, "mcp.tool": target.tool},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            session: ClientSession | None = None
            try:
                session = await self._sessions.session(target.server)
                return await session.call_tool(target.tool, arguments)
            except ReachError:
                raise  # egress_denied, secret_unavailable: as for http tools
            except MCPError as exc:
                if exc.code != CONNECTION_CLOSED:
                    span.set_status(Status(StatusCode.ERROR, "protocol_error"))
                    raise ToolFailed(
                        f"MCP server {target.server!r} refused the call of {target.tool!r} "
                        f"(error {exc.code}: {exc.message[:300]}).",
                        counts_as_failure=False,
                    ) from None
                failure: BaseException = exc
            except (*_TRANSPORT, BaseExceptionGroup) as exc:
                failure = exc
            span.set_status(Status(StatusCode.ERROR, type(failure).__name__))
            if session is not None:
                await self._sessions.discard(target.server, session)
            if self._sessions.oversized(target.server):
                raise ToolFailed(
                    f"Tool {spec.tool_id!r} answered more than MCP_MAX_MESSAGE_BYTES; ask for "
                    "less (filters, a smaller page).",
                    counts_as_failure=False,  # the server is healthy; the answer was too big
                )
            raise _Broken(
                ToolFailed(
                    f"Tool {spec.tool_id!r} is unreachable: MCP server {target.server!r} "
                    f"did not answer ({_describe(failure)})."
                )
            )


def _describe(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _output(spec: ToolSpec, result: CallToolResult) -> Any:
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    if result.is_error:
        text = "\n".join(texts)[:_TEXT_LIMIT] or "(no message)"
        text = text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate: "?"
        raise ToolFailed(
            f"Tool {spec.tool_id!r} answered with an error: {text[:500]}",
            upstream=text,
            counts_as_failure=False,  # the tool works; this call failed
        )
    if result.structured_content is not None:
        output: Any = result.structured_content
    elif len(texts) == 1 and len(result.content) == 1:
        try:
            output = loads_json(texts[0])  # not JSON a caller can be sent: the text
        except ValueError:
            output = texts[0]
    else:
        output = [block.model_dump(mode="json", by_alias=True, exclude_none=True)
                  for block in result.content]  # fmt: skip
    try:
        size = len(json.dumps(output, separators=(",", ":"), allow_nan=False))
    except (ValueError, RecursionError):
        raise ToolFailed(
            f"Tool {spec.tool_id!r} answered output that cannot be sent as JSON (NaN or "
            "Infinity, or nested too deeply).",
            counts_as_failure=False,
        ) from None
    if size > spec.max_response_bytes:
        raise ToolFailed(
            f"Tool {spec.tool_id!r} answered more than the {spec.max_response_bytes}-byte "
            "limit; ask for less (filters, a smaller page).",
            counts_as_failure=False,
        )
    return output
