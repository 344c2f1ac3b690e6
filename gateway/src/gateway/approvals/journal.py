"""What every approval transition leaves behind, besides its event row: an audit row,
a span in the trace of the call that asked, and, when the request is finished, the
callback to the caller's ``callback_url``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import structlog
from opentelemetry import propagate, trace

from gateway.approvals.models import (
    APPROVED,
    DENIED,
    EXPIRED,
    FAILED,
    FINAL_STATES,
    PENDING,
    RUNNING,
    Approval,
)
from gateway.audit.writer import AuditRow, AuditWriter
from gateway.executor.callbacks import CallbackSender

log = structlog.get_logger(__name__)

CALLBACK_EVENT = "approval.finished"
# The HTTP status an audit row shows for each state (a failed call keeps its own).
_STATUS = {PENDING: 202, APPROVED: 202, RUNNING: 202, DENIED: 403, EXPIRED: 409}
_REASON = {PENDING: "approval_pending", DENIED: "approval_denied", EXPIRED: "approval_expired"}


def status_url(approval_id: str) -> str:
    return f"/approvals/{approval_id}"


def result_status(approval: Approval) -> int:
    """The HTTP status of a finished call (stored with its result), else of its state."""
    if approval.result is not None and isinstance(approval.result.get("http_status"), int):
        return int(approval.result["http_status"])
    return _STATUS.get(approval.state, 200)


def callback_payload(approval: Approval) -> dict[str, Any]:
    return {
        "event": CALLBACK_EVENT,
        "approval_id": approval.approval_id,
        "tool_id": approval.tool_id,
        "state": approval.state,
        "decided_by": approval.decided_by,
        "comment": approval.comment,
        "result": approval.result,
        "trace_id": approval.trace_id,
        "status_url": status_url(approval.approval_id),
    }


class Journal:
    def __init__(
        self, *, audit: AuditWriter, callbacks: CallbackSender, tracer: trace.Tracer
    ) -> None:
        self._audit = audit
        self._callbacks = callbacks
        self._tracer = tracer

    @contextmanager
    def span(self, approval: Approval, name: str) -> Iterator[trace.Span]:
        """A span in the trace of the call that asked for approval (its ``traceparent``)."""
        context = propagate.extract({"traceparent": approval.traceparent or ""})
        with self._tracer.start_as_current_span(
            name,
            context=context,
            attributes={"approval.id": approval.approval_id, "tool.id": approval.tool_id},
            record_exception=False,
        ) as span:
            yield span

    async def recorded(
        self,
        approval: Approval,
        from_state: str | None,
        actor: str | None,
        *,
        latency_ms: float = 0.0,
        attempts: int = 0,
    ) -> None:
        """Audit, trace and (for a finished request) call back one transition."""
        with self.span(approval, "gateway.approval") as span:
            span.set_attribute("approval.from_state", from_state or "")
            span.set_attribute("approval.state", approval.state)
            span.set_attribute("approval.actor", actor or "")
        reason = _REASON.get(approval.state)
        if approval.state == FAILED and approval.result is not None:
            reason = str(approval.result.get("reason") or "tool_error")
        await self._audit.record(
            AuditRow(
                trace_id=approval.trace_id,
                tool_id=approval.tool_id,
                caller=approval.caller,
                auth_via=approval.caller_via,
                status=approval.state,
                reason=reason,
                http_status=result_status(approval),
                latency_ms=latency_ms,
                attempts=attempts,
                arguments=approval.arguments_shown,
                approval_id=approval.approval_id,
                actor=actor,
            )
        )
        log.info(
            "approval_transition",
            approval_id=approval.approval_id,
            tool_id=approval.tool_id,
            from_state=from_state,
            state=approval.state,
            actor=actor,
        )
        if approval.state in FINAL_STATES and approval.callback_url:
            self._callbacks.schedule(
                approval.callback_url,
                CALLBACK_EVENT,
                callback_payload(approval),
                approval_id=approval.approval_id,
            )
