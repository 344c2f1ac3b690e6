"""The gateway's tools as the model sees them, and running the model's calls.

Tool ids become model-safe function names (``[A-Za-z0-9_-]{1,64}``, unique),
and the names map back to ids when the model calls them. Every call ends in a
result the model can read: an unknown tool, arguments that are not a JSON
object, a refused or failed call are all ``is_error`` results, never
exceptions, so the loop always has a result for every call it saves.

Write tools (see :mod:`agent.react.policy`) run only while ``writes_allowed``;
otherwise the call is answered with ``confirmation_required`` and never
reaches the gateway.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from opentelemetry import trace

from agent.clients.gateway import GatewayClient
from agent.clients.schemas import Caller, GatewayTool, ToolOutcome
from agent.react.approvals import placeholder
from agent.react.errors import ConfirmationRequired, UnknownTool, UnreadableArguments
from reach_common.errors import ReachError, error_body
from reach_common.llm.types import Message, ToolCall, ToolSpec

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class ToolResult:
    call: ToolCall
    tool_id: str
    message: Message  # the ``tool`` message the model will see
    result: Any  # the output (or error) for API clients
    latency_ms: float
    from_gateway: bool = False  # the gateway answered: outside text the model will read


def model_names(tools: Sequence[GatewayTool]) -> dict[str, GatewayTool]:
    """Model-safe, unique function name → tool."""
    names: dict[str, GatewayTool] = {}
    for tool in tools:
        base = _UNSAFE.sub("_", tool.tool_id)[:64] or "tool"
        name, n = base, 2
        while name in names:
            suffix = f"_{n}"
            name, n = base[: 64 - len(suffix)] + suffix, n + 1
        names[name] = tool
    return names


def _render(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > limit:
        return text[:limit] + f"… [cut: {len(text) - limit} more characters]"
    return text


render = _render  # what a tool message holds: ``value`` as text, cut to ``limit`` characters


class ToolRunner:
    """Runs one round of calls concurrently through the gateway, as ``caller``."""

    def __init__(
        self,
        gateway: GatewayClient,
        caller: Caller,
        tools: Sequence[GatewayTool],
        *,
        tracer: trace.Tracer,
        max_result_chars: int,
        idempotency_prefix: str,
    ) -> None:
        self._gateway = gateway
        self._caller = caller
        self._by_name = model_names(tools)
        self._tracer = tracer
        self._limit = max_result_chars
        self._prefix = idempotency_prefix

    @property
    def specs(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name=name,
                description=tool.description or tool.name or tool.tool_id,
                input_schema=tool.input_schema or {"type": "object"},
            )
            for name, tool in self._by_name.items()
        ]

    @property
    def result_limit(self) -> int:
        """Characters of one tool result the model is shown."""
        return self._limit

    async def retrieve(self, arguments: dict[str, Any]) -> ToolOutcome:
        """``rag_retrieve`` as this caller: how a truncated result's handle is read."""
        return await self._gateway.invoke("rag_retrieve", arguments, self._caller)

    def tool_id(self, name: str) -> str:
        tool = self._by_name.get(name)
        return tool.tool_id if tool is not None else name

    async def run_all(self, calls: Sequence[ToolCall], *, writes_allowed: bool) -> list[ToolResult]:
        """All calls at once; results in call order. Write calls are refused with
        ``confirmation_required`` unless ``writes_allowed``."""
        return list(await asyncio.gather(*(self._run(call, writes_allowed) for call in calls)))

    def _error(self, call: ToolCall, exc: ReachError, started: float) -> ToolResult:
        """``exc`` as the call's result: ``{"error": <error body>}``, the body every Reach
        error has, so the model reads the agent's own refusals and the gateway's alike."""
        error = error_body(exc)
        return ToolResult(
            call=call,
            tool_id=self.tool_id(call.name),
            message=Message(
                role="tool",
                content=_render({"error": error}, self._limit),
                tool_call_id=call.id,
                is_error=True,
            ),
            result={"error": error},
            latency_ms=round((time.perf_counter() - started) * 1000, 2),
        )

    async def _run(self, call: ToolCall, writes_allowed: bool) -> ToolResult:
        started = time.perf_counter()
        tool = self._by_name.get(call.name)
        if tool is None:
            return self._error(call, UnknownTool(call.name, self._by_name), started)
        if tool.writes and not writes_allowed:
            trace.get_current_span().add_event(
                "agent.write_refused", {"tool.id": tool.tool_id, "tool.call_id": call.id}
            )
            return self._error(call, ConfirmationRequired(tool.tool_id), started)
        if call.raw_arguments is not None:
            return self._error(call, UnreadableArguments(call.raw_arguments), started)
        with self._tracer.start_as_current_span(
            "agent.tool", attributes={"tool.id": tool.tool_id, "tool.call_id": call.id}
        ) as span:
            outcome = await self._gateway.invoke(
                tool.tool_id,
                call.arguments,
                self._caller,
                idempotency_key=f"{self._prefix}:{call.id}",
            )
            span.set_attribute("tool.success", outcome.success)
            if outcome.error is not None:
                span.set_attribute("tool.error_reason", outcome.error.reason)
        return self._from_outcome(call, tool.tool_id, outcome, started)

    def _from_outcome(
        self, call: ToolCall, tool_id: str, outcome: ToolOutcome, started: float
    ) -> ToolResult:
        if not outcome.success:
            failed = self._error(call, outcome.failure(), started)
            # An error message can quote the tool's own output: it counts as output.
            return replace(failed, from_gateway=True)
        if outcome.awaiting_approval:
            result: Any = placeholder(outcome)
        elif outcome.task_id is not None and outcome.status_code == 202:
            result = {"task_id": outcome.task_id, "status": "accepted"}
        else:
            result = outcome.output
        return ToolResult(
            call=call,
            tool_id=tool_id,
            message=Message(
                role="tool", content=_render(result, self._limit), tool_call_id=call.id
            ),
            result=result,
            latency_ms=round((time.perf_counter() - started) * 1000, 2),
            from_gateway=True,
        )
