"""Building the span tree and the phase summary from ``telemetry.spans`` rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gateway.traces.schemas import Phases, SpanNode, TraceRead
from reach_common.auth.authenticator import ENDUSER_ATTRIBUTE
from reach_common.auth.caller import Caller

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
