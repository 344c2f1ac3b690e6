"""``GET /traces``: recent traces, filtered and paged; ``GET /traces/{trace_id}``: every
service's spans of one request, as a tree."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated

from fastapi import APIRouter, Query

from gateway.api.deps import CallerDep, RuntimeDep, SessionDep, TelemetryDep
from gateway.traces.repository import trace_spans
from gateway.traces.schemas import TraceList, TraceQuery, TraceRead
from gateway.traces.service import build_trace, find_traces, may_read
from reach_common.errors import NotFound

router = APIRouter(tags=["traces"])

_TRACE_ID = re.compile(r"^[0-9a-f]{32}$")


@router.get("/traces", response_model=TraceList)
async def list_traces(
    query: Annotated[TraceQuery, Query()],
    session: SessionDep,
    runtime: RuntimeDep,
    caller: CallerDep,
    telemetry: TelemetryDep,
) -> TraceList:
    """Recent traces, newest first: one row per request with its root span, duration,
    services, tools, callers and status.

    Filters combine: `service` (a span of that service), `tool` (a call of, or a route
    to, that tool), `caller` (recorded for that user id), `status` (`error` when any
    span failed), `min_duration_ms` (the root span). Pages hold up to `limit` traces
    (at most 100); pass `next_cursor` as `cursor` for the next, older page.

    The same rule as `GET /traces/{trace_id}`: operators (`OPS_ROLES`, registry admins)
    list every trace, any other caller only the traces recorded entirely as theirs, an
    anonymous caller nothing (401 `unauthenticated`). Bad parameters are a 422
    `invalid_request` naming each field. The viewer's own reads (`/traces`, `/ui/...`)
    are not listed.
    """
    await asyncio.to_thread(telemetry.flush, 2000)
    return await find_traces(session, caller, query, ops=runtime.auth.is_ops(caller))


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
    rows = await trace_spans(session, trace_id)
    if not rows or not may_read(caller, rows, ops=runtime.auth.is_ops(caller)):
        raise NotFound(f"No spans recorded for trace {trace_id}.", reason="trace_not_found")
    return build_trace(trace_id, rows)
