"""Building the span tree and the phase summary from ``telemetry.spans`` rows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from gateway.traces.repository import TraceFilter, list_traces
from gateway.traces.schemas import (
    Phases,
    SpanNode,
    TraceList,
    TraceQuery,
    TraceRead,
    TraceSummary,
)
from reach_common.auth.authenticator import ENDUSER_ATTRIBUTE
from reach_common.auth.caller import Caller
from reach_common.auth.errors import Unauthenticated
from reach_common.errors import Unprocessable

PHASE_SPANS = {
    "route": "gateway.route",
    "auth": "gateway.auth",
    "validate": "gateway.validate",
    "execute": "gateway.execute",
    "dns": "gateway.dns",
    "connect": "gateway.connect",
    "response": "gateway.response",
}


def phases(rows: Sequence[dict[str, Any]]) -> Phases:
    totals: dict[str, float] = {}
    for phase, span_name in PHASE_SPANS.items():
        durations = [float(r["duration_ms"]) for r in rows if r["name"] == span_name]
        if durations:
            totals[phase] = round(sum(durations), 3)
    return Phases(**totals)


def build_trace(trace_id: str, rows: Sequence[dict[str, Any]]) -> TraceRead:
    nodes = {
        row["span_id"]: SpanNode(
            span_id=row["span_id"],
            parent_span_id=row["parent_span_id"],
            service=row["service"],
            name=row["name"],
            kind=row["kind"],
            start=row["start_time"],
            duration_ms=round(float(row["duration_ms"]), 3),
            status=row["status_code"],
            status_message=row["status_message"],
            attributes=row["attributes"] or {},
            events=row["events"] or [],
        )
        for row in rows
    }
    roots: list[SpanNode] = []
    for node in nodes.values():  # rows come ordered by start, so children are too
        parent = nodes.get(node.parent_span_id) if node.parent_span_id else None
        (parent.children if parent is not None else roots).append(node)
    start = min(r["start_time"] for r in rows)
    end = max(r["end_time"] for r in rows)
    return TraceRead(
        trace_id=trace_id,
        services=sorted({r["service"] for r in rows}),
        span_count=len(rows),
        duration_ms=round((end - start).total_seconds() * 1000, 3),
        phases=phases(rows),
        spans=roots,
    )


def may_read(caller: Caller, rows: list[dict[str, Any]], *, ops: bool) -> bool:
    """Operators read every trace; anyone else only a trace recorded entirely as theirs.

    Every span that names a caller must name this one: a client that joins someone
    else's trace id (by sending its ``traceparent``) adds its own name and so makes
    the trace unreadable to both, never readable to itself. A trace that names no
    caller (anonymous requests) is for operators only.
    """
    if ops:
        return True
    if not caller.authenticated:
        return False
    owners = {
        str(row["attributes"][ENDUSER_ATTRIBUTE])
        for row in rows
        if isinstance(row.get("attributes"), dict) and ENDUSER_ATTRIBUTE in row["attributes"]
    }
    return owners == {caller.user_id}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CURSOR = re.compile(r"^(\d{1,19})\.([0-9a-f]{32})$")


def encode_cursor(started_at: datetime, trace_id: str) -> str:
    """A page boundary: the last root's start (exact microseconds) and trace id."""
    micros = (started_at - _EPOCH) // timedelta(microseconds=1)
    return f"{micros}.{trace_id}"


def decode_cursor(cursor: str) -> tuple[datetime, str] | None:
    """The boundary in ``cursor``; ``None`` if it is not one this service issued."""
    match = _CURSOR.match(cursor)
    if match is None:
        return None
    try:
        started_at = _EPOCH + timedelta(microseconds=int(match.group(1)))
    except OverflowError:
        return None
    return started_at, match.group(2)


def trace_list(rows: Sequence[dict[str, Any]], limit: int) -> TraceList:
    """A page from up to ``limit + 1`` rows (one more than shown says there is a next page)."""
    shown = rows[:limit]
    traces = [
        TraceSummary(
            trace_id=r["trace_id"],
            started_at=r["start_time"],
            duration_ms=round(float(r["duration_ms"]), 3),
            root_service=r["service"],
            root_name=r["name"],
            status="error" if r["failed"] else "ok",
            services=list(r["services"]),
            span_count=int(r["span_count"]),
            tools=sorted(r["tools"]),
            callers=sorted(r["callers"]),
        )
        for r in shown
    ]
    last = shown[-1] if shown and len(rows) > limit else None
    next_cursor = encode_cursor(last["start_time"], last["trace_id"]) if last else None
    return TraceList(traces=traces, next_cursor=next_cursor)


async def find_traces(
    session: AsyncSession, caller: Caller, query: TraceQuery, *, ops: bool
) -> TraceList:
    """A page of the traces ``caller`` may read (the rule of :func:`may_read`), newest first.

    Operators see every trace; another caller only traces recorded entirely as theirs;
    an anonymous caller nothing (401, so a client knows to send a credential).
    """
    if not ops and not caller.authenticated:
        raise Unauthenticated("Listing traces needs an API key or a bearer token.")
    before = None
    if query.cursor is not None:
        before = decode_cursor(query.cursor)
        if before is None:
            problem = "not a cursor from a previous page's next_cursor"
            raise Unprocessable(
                f"The request is invalid. cursor: {problem}.",
                errors=[{"field": "cursor", "problem": problem}],
            )
    where = TraceFilter(
        owner=None if ops else caller.user_id,
        service=query.service,
        tool=query.tool,
        caller=query.caller,
        status=query.status,
        min_duration_ms=query.min_duration_ms,
        before=before,
    )
    return trace_list(await list_traces(session, where, query.limit + 1), query.limit)
