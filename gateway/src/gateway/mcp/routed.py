"""The routed surface: three meta-tools in place of a catalogue too large to list.

- ``find_tools``: the top-k tools for a described task, ranked by the router's
  index (dense + BM25) over only the tools the caller may call on this surface:
  permission is decided *before* ranking, so nothing unusable is ever ranked,
  and the answer is never empty while the caller may call anything (when no
  candidate scores, a default set is returned, and says so).
- ``run``: plain language in, one tool call out: ``POST /run``'s service.
- ``call_tool``: call a found tool by id with arguments: the invoke pipeline.

Each ``find_tools`` decision is a ``gateway.route`` span with the candidates and
their scores, the attributes ``POST /run``'s routing records.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from opentelemetry import trace
from pydantic import ValidationError

from gateway.auth.service import rate_key
from gateway.executor.errors import InvalidArguments
from gateway.mcp.convert import call_result, text_result
from gateway.mcp.surface import McpCall
from gateway.registry.cache import RegistryCache
from gateway.routing.errors import RouterBusy
from gateway.routing.index import Candidate
from gateway.routing.service import Router
from gateway.run.schemas import RunRequest, RunUserContext
from gateway.run.service import RunService
from reach_common.errors import ReachError, error_body

MAX_K = 20
MAX_TASK_CHARS = 2000
ToolCaller = Callable[[McpCall, str, dict[str, Any]], Awaitable[types.CallToolResult]]

ROUTED_TOOLS: tuple[types.Tool, ...] = (
    types.Tool(
        name="find_tools",
        title="Find tools",
        description=(
            "Find the tools for a task among the many this server can reach. Describe the "
            "task in plain words; the answer lists the best tools you may call (id, "
            "description, input schema, score), best first. Then call one with call_tool."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "maxLength": MAX_TASK_CHARS,
                    "description": "What to do.",
                },
                "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 5},
            },
            "required": ["task"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(title="Find tools", read_only_hint=True),
    ),
    types.Tool(
        name="call_tool",
        title="Call a tool",
        description=(
            "Call a tool found with find_tools: its tool_id and arguments that fit its input "
            'schema. Failures come back as errors with JSON {"reason", "message"}.'
        ),
        input_schema={
            "type": "object",
            "properties": {
                "tool_id": {"type": "string", "maxLength": 200},
                "arguments": {"type": "object", "default": {}},
            },
            "required": ["tool_id"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(title="Call a tool", read_only_hint=False),
    ),
    types.Tool(
        name="run",
        title="Run a request",
        description=(
            "Do one thing asked in plain language (any language): the gateway picks the "
            "tool, fills its arguments from the request and calls it. The answer shows the "
            "tool, its arguments, its output and the candidates it was chosen from."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 4000},
                "session_id": {
                    "type": "string",
                    "maxLength": 200,
                    "description": "Same id across turns: 'this SKU' reuses the last one.",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(title="Run a request", read_only_hint=False),
    ),
)


class RoutedTools:
    def __init__(
        self,
        *,
        router: Router,
        run: RunService,
        registry: RegistryCache,
        tracer: trace.Tracer,
        call_tool: ToolCaller,
    ) -> None:
        self._router = router
        self._run = run
        self._registry = registry
        self._tracer = tracer
        self._call_tool = call_tool

    async def call(
        self, call: McpCall, name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        if name == "find_tools":
            task, k = arguments.get("task"), arguments.get("k", call.surface.top_k)
            if not isinstance(task, str) or not isinstance(k, int) or not 1 <= k <= MAX_K:
                return _invalid(f"find_tools needs `task` (a string) and `k` (1..{MAX_K}).")
            if len(task) > MAX_TASK_CHARS:
                return _invalid(
                    f"find_tools `task` is {len(task)} characters; describe the task in at "
                    f"most {MAX_TASK_CHARS}."
                )
            try:
                await self._run.admit(call.caller, call.client_ip)
            except ReachError as exc:  # rate limited (or Redis down with limits closed)
                return text_result(error_body(exc), is_error=True)
            try:
                return text_result(await self.find(call, task, k))
            except RouterBusy as exc:  # too many long requests waiting to be read
                return text_result(error_body(exc), is_error=True)
        if name == "call_tool":
            tool_id, tool_arguments = arguments.get("tool_id"), arguments.get("arguments", {})
            if not isinstance(tool_id, str) or not isinstance(tool_arguments, dict):
                return _invalid("call_tool needs `tool_id` (a string) and `arguments` (object).")
            return await self._call_tool(call, tool_id, tool_arguments)
        if name == "run":
            return await self.run(call, arguments)
        raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name}")

    def allowed(self, call: McpCall) -> frozenset[str]:
        """The tools ``call``'s caller may use on its surface: decided before any ranking."""
        visible = self._router.visible(call.caller, None)
        tools = self._registry.tools
        return frozenset(
            tool_id
            for tool_id in visible
            if tool_id in tools and call.surface.includes(tools[tool_id].spec)
        )

    async def find(self, call: McpCall, task: str, k: int) -> dict[str, Any]:
        """The top ``k`` tools for ``task`` the caller may call; a default set when nothing
        scores; empty only when the caller may call nothing here."""
        with self._tracer.start_as_current_span(
            "gateway.route", record_exception=False, set_status_on_exception=False
        ) as span:
            span.set_attribute("route.hint", "find_tools")
            allowed = self.allowed(call)
            owner = rate_key(call.caller, call.client_ip)
            ranked = allowed and task.strip()
            candidates = await self._router.rank(task, allowed, k, owner=owner) if ranked else []
            if candidates:
                why = f"top {len(candidates)} of {len(allowed)} tools this caller may use"
            elif allowed:
                why = "nothing scored: a default set of the tools this caller may use"
            else:
                why = "this caller may use no tool on this server"
            chosen = candidates or [
                Candidate(tool_id, 0.0, 0.0, 0.0, 0.0) for tool_id in sorted(allowed)[:k]
            ]
            span.set_attribute("route.why", why)
            span.set_attribute("route.tool_id", chosen[0].tool_id if chosen else "")
            span.set_attribute("route.confidence", chosen[0].confidence if chosen else 0.0)
            span.set_attribute(
                "route.candidates",
                [f"{c.tool_id}:{c.score:.3f}:{c.confidence:.3f}" for c in chosen],
            )
        return {
            "tools": [self._describe(c) for c in chosen],
            "fallback": not candidates,
            "why": why,
        }

    def _describe(self, candidate: Candidate) -> dict[str, Any]:
        tool = self._registry.get(candidate.tool_id)
        assert tool is not None
        spec = tool.spec
        return {
            "tool_id": spec.tool_id,
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.input_schema,
            "score": round(candidate.score, 4),
            "confidence": round(candidate.confidence, 4),
        }

    async def run(self, call: McpCall, arguments: dict[str, Any]) -> types.CallToolResult:
        caller = call.caller
        claimed = None
        if caller.via == "user_context":  # permissive mode: the identity the headers claimed
            claimed = RunUserContext(user_id=caller.user_id, roles=sorted(caller.roles))
        try:
            request = RunRequest(
                session_id=arguments.get("session_id"),
                user_query=arguments.get("query"),
                user_context=claimed,
            )
        except ValidationError:
            return _invalid("run needs `query`: the request in plain words (1..4000 chars).")
        # Routed among this surface's tools only: a curated server never reaches past itself.
        outcome = await self._run.run(
            request, headers=call.headers, client_ip=call.client_ip, within=self.allowed(call)
        )
        result = call_result(outcome.status_code, outcome.body)
        if outcome.body.get("success"):
            answer = {
                key: outcome.body.get(key) for key in ("tool_id", "arguments", "output", "route")
            }
            result = text_result(answer, trace_id=outcome.body.get("trace_id"))
        return result


def _invalid(message: str) -> types.CallToolResult:
    return text_result(error_body(InvalidArguments(message)), is_error=True)
