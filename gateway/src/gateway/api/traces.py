"""``GET /traces/{trace_id}``: every service's spans of one request, as a tree."""

from __future__ import annotations

import asyncio
import re

from fastapi import APIRouter
from sqlalchemy import text

from gateway.api.deps import CallerDep, RuntimeDep, SessionDep, TelemetryDep
from gateway.traces.schemas import TraceRead
from gateway.traces.service import build_trace, may_read
from reach_common.errors import NotFound

router = APIRouter(tags=["traces"])

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
_SPANS = text(
    "SELECT trace_id, span_id, parent_span_id, service, name, kind, start_time, end_time, "
    "duration_ms, status_code, status_message, attributes, events "
    "FROM telemetry.spans WHERE trace_id = :trace_id ORDER BY start_time, span_id"
)


@router.get("/traces/{trace_id}", response_model=TraceRead, response_model_by_alias=True)
async def read_trace(
    trace_id: str,
    session: SessionDep,
    runtime: RuntimeDep,
    caller: CallerDep,
    telemetry: TelemetryDep,
) -> TraceRead:
    """The span tree of one request across gateway, agent, retriever and shop.

    Each span has its service, name, start, `duration_ms`, status and attributes;
    `phases` sums the time spent in route, auth, validate, execute, dns, connect
    and response, the first place to look when a call is slow. The trace id is
    the `trace_id` of any envelope or the `X-Trace-Id` response header. Spans of
    other services arrive within about a second.

    A trace is readable by the caller recorded on it (`enduser.id`, set from the
    verified credential, or in permissive mode the claimed identity) and by the
    `OPS_ROLES` and registry admins. Anyone else, and an unknown id, get the same
    404 `trace_not_found`.
    """
    trace_id = trace_id.lower()
    if not _TRACE_ID.match(trace_id):
        raise NotFound(
            f"{trace_id!r} is not a trace id (32 hex characters).", reason="trace_not_found"
        )
    # This process's finished spans may still sit in the batch processor.
    await asyncio.to_thread(telemetry.flush, 2000)
    rows = [dict(r) for r in (await session.execute(_SPANS, {"trace_id": trace_id})).mappings()]
    if not rows or not may_read(caller, rows, ops=runtime.auth.is_ops(caller)):
        raise NotFound(f"No spans recorded for trace {trace_id}.", reason="trace_not_found")
    return build_trace(trace_id, rows)
