"""One tool call, start to finish: auth, validation, limits, execution, audit.

``POST /tools/{id}/invoke`` runs this, and so does ``POST /run`` once it has
chosen a tool, so both answer with the same envelope, statuses and reasons.
The hot path reads only memory (the registry cache, verified-key cache) and
Redis (one rate-limit script); the audit row is queued and written in the
background.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog
from opentelemetry import propagate, trace

from gateway.approvals.errors import ApprovalDenied, ApprovalExpired, ApprovalPending
from gateway.approvals.journal import result_status, status_url
from gateway.approvals.models import DENIED, EXPIRED, FAILED, SUCCEEDED, Approval
from gateway.approvals.service import ApprovalService
from gateway.audit.redaction import redact
from gateway.audit.writer import AuditRow, AuditWriter
from gateway.auth.service import AuthService, can_use, rate_key
from gateway.catalog.spec import QueueTarget, ToolSpec
from gateway.executor.callbacks import CallbackSender
from gateway.executor.http import CallStats, acting_for
from gateway.executor.service import Executor
from gateway.executor.tasks import TaskStore
from gateway.invoke.outputs import CheckedOutput, OutputGuard
from gateway.invoke.validation import check_arguments, preview_arguments, sizeable
from gateway.metrics import record_tool_call
from gateway.ratelimit.service import RateLimiter
from gateway.registry.cache import RegisteredTool, RegistryCache
from gateway.registry.errors import ToolNotFound
from reach_common.auth.caller import Caller, UserContext
from reach_common.errors import ReachError, current_trace_id, error_body
from reach_common.telemetry import record_leaf

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class CallOptions:
    """How the caller wants the call run: ``async`` (or a ``callback_url``) answers 202
    with a task id; ``approval_id`` names the approval this exact call was given."""

    mode: Literal["sync", "async"] = "sync"
    callback_url: str | None = None
    approval_id: str | None = None

    @property
    def is_async(self) -> bool:
        return self.mode == "async" or self.callback_url is not None


SYNC = CallOptions()


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
        approvals: ApprovalService,
        callbacks: CallbackSender,
        approvals_enabled: bool = True,
        outputs: OutputGuard | None = None,
    ) -> None:
        self._outputs = outputs or OutputGuard(None, tracer)
        self._approvals = approvals
        self._callbacks = callbacks
        self._approvals_enabled = approvals_enabled
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
        options: CallOptions = SYNC,
    ) -> InvokeOutcome:
        """Call ``tool_id``. Pass ``caller`` when it is already resolved (``/run``)."""
        started = time.perf_counter()
        tool = self._registry.get(tool_id)
        spec = tool.spec if tool is not None else None
        schema = spec.input_schema if spec else None
        # A call of thousands of values is redacted and checked off the event loop.
        large = sizeable(arguments)
        if large:
            shown_arguments = await asyncio.to_thread(redact, arguments, schema)
        else:
            shown_arguments = redact(arguments, schema)
        stats = CallStats()
        try:
            # Refusals are answers, not crashes: no traceback recorded on the spans.
            with self._tracer.start_as_current_span("gateway.auth", record_exception=False) as span:
                if caller is None:
                    caller = await self._auth.resolve(headers, user_context)
                spec = self._authorise(tool_id, spec, caller, span)
            await self._admit(spec, arguments, caller, client_ip, large=large)
            if options.callback_url is not None:
                await self._callbacks.check_url(options.callback_url)
            if options.approval_id is not None or (
                spec.requires_approval and self._approvals_enabled
            ):
                assert tool is not None
                return await self._approval(tool, arguments, caller, options, started)
            idempotency_key = headers.get("idempotency-key") or uuid.uuid4().hex
            status, output, task_id = await self._perform(
                spec, arguments, caller, idempotency_key, stats, options
            )
            checked = CheckedOutput(output)
            if task_id is None:
                checked = await self._outputs.check(spec, output, caller)
        except ReachError as exc:
            latency_ms = _ms(started)
            record_tool_call(tool_id, tool is not None, exc.reason, started, stats.attempts)
            # A refused call may carry megabytes of arguments: answer (and audit) a preview.
            shown_arguments = preview_arguments(shown_arguments)
            await self._record(tool_id, caller, exc, shown_arguments, latency_ms, stats)
            body = failure_envelope(tool_id, shown_arguments, exc, latency_ms)
            return InvokeOutcome(exc.status_code, body, dict(exc.headers), caller)
        latency_ms = _ms(started)
        record_tool_call(tool_id, tool is not None, None, started, stats.attempts)
        body = await self._succeeded(
            tool_id, caller, shown_arguments, checked, task_id, stats, latency_ms
        )
        return InvokeOutcome(status, body, {}, caller)

    async def _succeeded(
        self,
        tool_id: str,
        caller: Caller,
        arguments: dict[str, Any],
        checked: CheckedOutput,
        task_id: str | None,
        stats: CallStats,
        latency_ms: float,
    ) -> dict[str, Any]:
        """Audit a call that ran (or was queued) and build its envelope. The audit reason
        says what was done to its output (``output_truncated``, a tolerated
        ``invalid_tool_output``); its flags, what untrusted text it carried."""
        await self._audit.record(
            AuditRow(
                trace_id=current_trace_id(),
                tool_id=tool_id,
                caller=caller.user_id,
                auth_via=caller.via,
                status="accepted" if task_id else "succeeded",
                reason=checked.audit_reason,
                http_status=202 if task_id else 200,
                latency_ms=latency_ms,
                attempts=stats.attempts,
                task_id=task_id,
                arguments=arguments,
                flags=list(checked.flags),
            )
        )
        body = {
            "success": True,
            "tool_id": tool_id,
            "arguments": arguments,
            "output": checked.output,
            "latency_ms": latency_ms,
            "trace_id": current_trace_id(),
        }
        if task_id:
            body["task_id"] = task_id
        return body

    async def _approval(
        self,
        tool: RegisteredTool,
        arguments: dict[str, Any],
        caller: Caller,
        options: CallOptions,
        started: float,
    ) -> InvokeOutcome:
        """Ask for approval (202), or, given an ``approval_id``, answer what the approved
        call became: its result, still pending (202), or why it did not run."""
        if options.approval_id is None:
            approval = await self._approvals.request(
                tool, arguments, caller, callback_url=options.callback_url
            )
        else:
            approval = await self._approvals.redeem(
                options.approval_id, tool.tool_id, arguments, caller
            )
        latency_ms = _ms(started)
        if approval.state in (SUCCEEDED, FAILED) and approval.result is not None:
            result = {k: v for k, v in approval.result.items() if k != "http_status"}
            body = {"tool_id": tool.tool_id, "arguments": approval.arguments_shown, **result}
            body.update(approval_id=approval.approval_id, latency_ms=latency_ms)
            body.setdefault("trace_id", approval.trace_id)
            return InvokeOutcome(result_status(approval), body, {}, caller)
        if approval.state == DENIED:
            raise ApprovalDenied(
                f"Approval {approval.approval_id} was denied by {approval.decided_by}"
                + (f": {approval.comment}" if approval.comment else ".")
            )
        if approval.state == EXPIRED:
            raise ApprovalExpired(f"Approval {approval.approval_id} expired; ask again.")
        return InvokeOutcome(202, pending_body(approval, latency_ms), {}, caller)

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
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        caller: Caller,
        client_ip: str | None,
        *,
        large: bool = False,
    ) -> None:
        """Arguments valid (checked off the event loop when ``large``) and within the rate
        limits (counted once)."""
        with _leaf(self._tracer, "gateway.validate"):
            if large:
                await asyncio.to_thread(check_arguments, spec, arguments)
            else:
                check_arguments(spec, arguments)
        with _leaf(self._tracer, "gateway.rate_limit"):
            key = rate_key(caller, client_ip)
            await self._limiter.hit(self._limiter.limits_for(spec.tool_id, spec.rate_limit, key))

    async def _perform(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        caller: Caller,
        idempotency_key: str,
        stats: CallStats,
        options: CallOptions,
    ) -> tuple[int, Any, str | None]:
        """Run the tool (or queue it): ``(status, output, task id of a queued call)``."""
        if isinstance(spec.endpoint, QueueTarget) or options.is_async:
            task_id = await self._enqueue(spec, arguments, caller, idempotency_key, options)
            queued = {"task_id": task_id, "status": "queued", "status_url": f"/tasks/{task_id}"}
            return 202, queued, task_id
        token = acting_for.set(caller.user_id)  # for manifests with `forward_caller` only
        try:
            execution = await self._executor.run(
                spec, spec.endpoint, arguments, idempotency_key=idempotency_key, stats=stats
            )
        finally:
            acting_for.reset(token)
        return 200, execution.output, None

    async def _enqueue(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        caller: Caller,
        idempotency_key: str,
        options: CallOptions,
    ) -> str:
        """A queue tool goes to its stream; any other tool called ``async`` to the default."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        endpoint = spec.endpoint
        queued = await self._tasks.enqueue(
            stream=(endpoint.stream if isinstance(endpoint, QueueTarget) else None)
            or self._default_stream,
            tool_id=spec.tool_id,
            arguments=arguments,
            caller=caller,
            trace_id=current_trace_id(),
            traceparent=carrier.get("traceparent"),
            idempotency_key=idempotency_key,
            callback_url=options.callback_url,
            mode="queue" if isinstance(endpoint, QueueTarget) else "async",
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


def pending_body(approval: Approval, latency_ms: float) -> dict[str, Any]:
    """The 202 answer of a call that waits for approval."""
    pending = ApprovalPending(
        f"{approval.reason} Request {approval.approval_id} is {approval.state}; it runs "
        "once approved. Follow status_url, or call again with this approval_id.",
        approval_id=approval.approval_id,
        approval_state=approval.state,
        status_url=status_url(approval.approval_id),
        expires_at=approval.expires_at.isoformat(),
    )
    return error_body(
        pending,
        trace_id=approval.trace_id,
        success=False,
        tool_id=approval.tool_id,
        arguments=approval.arguments_shown,
        output=None,
        latency_ms=latency_ms,
    )


@contextmanager
def _leaf(tracer: trace.Tracer, name: str) -> Iterator[None]:
    """A span with no children around the block (``record_leaf``: a fraction of the SDK's
    cost); a refusal raised in it sets the span's status to error, with no traceback."""
    started = time.time_ns()
    try:
        yield
    except BaseException as exc:
        record_leaf(tracer, name, started, time.time_ns(), error=exc)
        raise
    record_leaf(tracer, name, started, time.time_ns())


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
