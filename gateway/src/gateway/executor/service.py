"""The executor: one entry point that runs a tool's http, python or mcp target.

It owns what every target shares: the circuit breaker, the deadline
(``timeout_ms`` covers the whole call, retries included) and the
``gateway.execute`` span. Queue tools are not run here: the invoke path
enqueues them, and the worker runs their target through this same executor.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from gateway.catalog.spec import HttpTarget, McpTarget, PythonTarget, ToolSpec
from gateway.executor.breaker import Breakers
from gateway.executor.errors import ToolCallError, ToolFailed, call_error
from gateway.executor.http import CallStats, HttpExecutor
from gateway.executor.mcp import McpExecutor
from gateway.executor.python import PythonExecutor
from reach_common.errors import ReachError


@dataclass(frozen=True)
class Execution:
    output: Any
    upstream_status: int | None
    attempts: int


class Executor:
    def __init__(
        self,
        *,
        http: HttpExecutor,
        python: PythonExecutor,
        breakers: Breakers,
        tracer: trace.Tracer,
        mcp: McpExecutor | None = None,
    ) -> None:
        self.http = http
        self.python = python
        self.mcp = mcp
        self.breakers = breakers
        self._tracer = tracer

    async def run(
        self,
        spec: ToolSpec,
        target: HttpTarget | PythonTarget | McpTarget,
        arguments: dict[str, Any],
        *,
        idempotency_key: str | None,
        stats: CallStats | None = None,
    ) -> Execution:
        stats = stats if stats is not None else CallStats()
        with self._tracer.start_as_current_span(
            "gateway.execute",
            attributes={
                "tool.id": spec.tool_id,
                "tool.endpoint_type": target.type,
                "tool.idempotent": spec.idempotent,
                "tool.timeout_ms": spec.timeout_ms,
            },
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                execution = await self._guarded(spec, target, arguments, idempotency_key, stats)
            except ReachError as exc:
                span.set_attribute("tool.attempts", stats.attempts)
                span.set_attribute("error.reason", exc.reason)
                span.set_status(Status(StatusCode.ERROR, exc.reason))
                raise
            span.set_attribute("tool.attempts", execution.attempts)
            return execution

    async def _guarded(
        self,
        spec: ToolSpec,
        target: HttpTarget | PythonTarget | McpTarget,
        arguments: dict[str, Any],
        idempotency_key: str | None,
        stats: CallStats,
    ) -> Execution:
        breaker = self.breakers.for_tool(spec.tool_id, spec.breaker)
        probe = breaker.acquire()
        try:
            execution = await self._deadline(spec, target, arguments, idempotency_key, stats)
        except ToolCallError as exc:
            if exc.counts_as_failure:
                breaker.record(success=False, probe=probe)
            else:
                breaker.record(success=True, probe=probe)
            raise
        except BaseException:
            breaker.release(probe=probe)
            raise
        breaker.record(success=True, probe=probe)
        return execution

    async def _deadline(
        self,
        spec: ToolSpec,
        target: HttpTarget | PythonTarget | McpTarget,
        arguments: dict[str, Any],
        idempotency_key: str | None,
        stats: CallStats,
    ) -> Execution:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + spec.timeout_ms / 1000
        try:
            async with asyncio.timeout_at(deadline) as scope:
                if isinstance(target, HttpTarget):
                    result = await self.http.call(
                        spec,
                        target,
                        arguments,
                        deadline=deadline,
                        idempotency_key=idempotency_key,
                        stats=stats,
                    )
                    return Execution(result.output, result.status_code, stats.attempts)
                if isinstance(target, McpTarget):
                    output = await self._mcp().call(
                        spec, target, arguments, deadline=deadline, stats=stats
                    )
                    return Execution(output, None, stats.attempts)
                stats.attempts += 1
                output = await self.python.call(spec, target, arguments)
                return Execution(output, None, stats.attempts)
        except TimeoutError as exc:
            raise call_error(exc, spec, expired=scope.expired()) from exc

    def _mcp(self) -> McpExecutor:
        if self.mcp is None:
            raise ToolFailed("This gateway runs no MCP federation.", counts_as_failure=False)
        return self.mcp
