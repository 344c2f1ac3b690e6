"""One tool call, start to finish: auth, validation, limits, execution, audit.

``POST /tools/{id}/invoke`` runs this, and so does ``POST /run`` once it has
chosen a tool, so both answer with the same envelope, statuses and reasons.
The hot path reads only memory (the registry cache, verified-key cache) and
Redis (one rate-limit script); the audit row is queued and written in the
background.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from opentelemetry import propagate, trace

from gateway.audit.redaction import redact
from gateway.audit.writer import AuditRow, AuditWriter
from gateway.auth.service import AuthService, can_use, rate_key
from gateway.catalog.spec import QueueTarget, ToolSpec
from gateway.executor.http import CallStats
from gateway.executor.service import Executor
from gateway.executor.tasks import TaskStore
from gateway.invoke.validation import check_arguments, preview_arguments
from gateway.ratelimit.service import RateLimiter
from gateway.registry.cache import RegistryCache
from gateway.registry.errors import ToolNotFound
from reach_common.auth.caller import Caller, UserContext
from reach_common.errors import ReachError, current_trace_id, error_body

log = structlog.get_logger(__name__)


class ApprovalRequired(ReachError):
    status_code = 403
    reason = "approval_required"


@dataclass
class InvokeOutcome:
    """The envelope, its HTTP status and headers (Retry-After, WWW-Authenticate)."""

    status_code: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    caller: Caller | None = None


class InvokeService:
    def __init__(
        self,
        *,
        registry: RegistryCache,
        auth: AuthService,
        limiter: RateLimiter,
        executor: Executor,
        tasks: TaskStore,
        audit: AuditWriter,
        tracer: trace.Tracer,
        default_stream: str,
    ) -> None:
        self._registry = registry
        self._auth = auth
        self._limiter = limiter
        self._executor = executor
        self._tasks = tasks
        self._audit = audit
        self._tracer = tracer
        self._default_stream = default_stream

    async def invoke(
        self,
        tool_id: str,
        arguments: dict[str, Any],
        *,
        headers: Mapping[str, str],
        user_context: UserContext | None = None,
        caller: Caller | None = None,
        client_ip: str | None = None,
    ) -> InvokeOutcome:
        """Call ``tool_id``. Pass ``caller`` when it is already resolved (``/run``)."""
        started = time.perf_counter()
        tool = self._registry.get(tool_id)
        spec = tool.spec if tool is not None else None
        shown_arguments = redact(arguments, spec.input_schema if spec else None)
        stats = CallStats()
        try:
            # Refusals are answers, not crashes: no traceback recorded on the spans.
            with self._tracer.start_as_current_span("gateway.auth", record_exception=False) as span:
                if caller is None:
                    caller = await self._auth.resolve(headers, user_context)
                spec = self._authorise(tool_id, spec, caller, span)
            await self._admit(spec, arguments, caller, client_ip)
            idempotency_key = headers.get("idempotency-key") or uuid.uuid4().hex
            status, output, task_id = await self._perform(
                spec, arguments, caller, idempotency_key, stats
            )
        except ReachError as exc:
            latency_ms = _ms(started)
            # A refused call may carry megabytes of arguments: answer (and audit) a preview.
            shown_arguments = preview_arguments(shown_arguments)
            await self._record(tool_id, caller, exc, shown_arguments, latency_ms, stats)
            body = failure_envelope(tool_id, shown_arguments, exc, latency_ms)
            return InvokeOutcome(exc.status_code, body, dict(exc.headers), caller)
        latency_ms = _ms(started)
        body = await self._succeeded(
            tool_id, caller, shown_arguments, output, task_id, stats, latency_ms
        )
        return InvokeOutcome(status, body, {}, caller)

    async def _succeeded(
        self,
        tool_id: str,
        caller: Caller,
        arguments: dict[str, Any],
        output: Any,
        task_id: str | None,
        stats: CallStats,
        latency_ms: float,
    ) -> dict[str, Any]:
        """Audit a call that ran (or was queued) and build its envelope."""
        await self._audit.record(
            AuditRow(
                trace_id=current_trace_id(),
                tool_id=tool_id,
                caller=caller.user_id,
                auth_via=caller.via,
                status="accepted" if task_id else "succeeded",
                reason=None,
                http_status=202 if task_id else 200,
                latency_ms=latency_ms,
                attempts=stats.attempts,
                task_id=task_id,
                arguments=arguments,
            )
        )
        body = {
            "success": True,
            "tool_id": tool_id,
            "arguments": arguments,
            "output": output,
            "latency_ms": latency_ms,
            "trace_id": current_trace_id(),
        }
        if task_id:
            body["task_id"] = task_id
        return body

    def _authorise(
        self, tool_id: str, spec: ToolSpec | None, caller: Caller, span: trace.Span
    ) -> ToolSpec:
        """The tool, if ``caller`` may use it; else the same 404 as for a missing tool,
        so a caller who may not use a tool learns neither that it exists nor its roles."""
        span.set_attribute("auth.mode", self._auth.mode)
        span.set_attribute("auth.via", caller.via)
        if spec is None:
            raise ToolNotFound(tool_id)
        decision = can_use(caller, spec)
        span.set_attribute("auth.allowed", decision.allowed)
        span.set_attribute("auth.rule", decision.rule)
        if not decision.allowed:
            raise ToolNotFound(tool_id)
        return spec

    async def _admit(
        self, spec: ToolSpec, arguments: dict[str, Any], caller: Caller, client_ip: str | None
    ) -> None:
        """Arguments valid, no approval needed, within the rate limits (counted once)."""
        with self._tracer.start_as_current_span("gateway.validate", record_exception=False):
            check_arguments(spec, arguments)
        if spec.requires_approval:
            raise ApprovalRequired(
                f"Tool {spec.tool_id!r} needs a person's approval before it runs, and direct "
                "invocation cannot ask for it."
            )
        with self._tracer.start_as_current_span("gateway.rate_limit", record_exception=False):
            key = rate_key(caller, client_ip)
            await self._limiter.hit(self._limiter.limits_for(spec.tool_id, spec.rate_limit, key))

    async def _perform(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        caller: Caller,
        idempotency_key: str,
        stats: CallStats,
    ) -> tuple[int, Any, str | None]:
        """Run the tool (or queue it): ``(status, output, task id of a queued call)``."""
        if isinstance(spec.endpoint, QueueTarget):
            task_id = await self._enqueue(spec, spec.endpoint, arguments, caller, idempotency_key)
            queued = {"task_id": task_id, "status": "queued", "status_url": f"/tasks/{task_id}"}
            return 202, queued, task_id
        execution = await self._executor.run(
            spec, spec.endpoint, arguments, idempotency_key=idempotency_key, stats=stats
        )
        return 200, execution.output, None

    async def _enqueue(
        self,
        spec: ToolSpec,
        endpoint: QueueTarget,
        arguments: dict[str, Any],
        caller: Caller,
        idempotency_key: str,
    ) -> str:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        queued = await self._tasks.enqueue(
            stream=endpoint.stream or self._default_stream,
            tool_id=spec.tool_id,
            arguments=arguments,
            caller=caller,
            trace_id=current_trace_id(),
            traceparent=carrier.get("traceparent"),
            idempotency_key=idempotency_key,
        )
        return queued.task_id

    async def _record(
        self,
        tool_id: str,
        caller: Caller | None,
        exc: ReachError,
        arguments: dict[str, Any],
        latency_ms: float,
        stats: CallStats,
    ) -> None:
        executed = stats.attempts > 0
        log.info(
            "tool_call_failed" if executed else "tool_call_refused",
            tool_id=tool_id,
            caller=caller.user_id if caller else None,
            reason=exc.reason,
            status=exc.status_code,
        )
        await self._audit.record(
            AuditRow(
                trace_id=current_trace_id(),
                tool_id=tool_id,
                caller=caller.user_id if caller else None,
                auth_via=caller.via if caller else "anonymous",
                status="failed" if executed else "refused",
                reason=exc.reason,
                http_status=exc.status_code,
                latency_ms=latency_ms,
                attempts=stats.attempts,
                arguments=arguments,
            )
        )


def failure_envelope(
    tool_id: str | None,
    arguments: dict[str, Any],
    exc: ReachError,
    latency_ms: float,
    **extra: Any,
) -> dict[str, Any]:
    """The envelope of a failed call (``POST /tools/{id}/invoke``, ``POST /run``):
    ``success: false``, the call's fields, ``error: {reason, message, ...details}`` and,
    as on every Reach error body, ``reason``, ``message`` and ``trace_id`` at the top."""
    return error_body(
        exc,
        nested=True,
        success=False,
        tool_id=tool_id,
        arguments=arguments,
        latency_ms=latency_ms,
        **extra,
    )


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
