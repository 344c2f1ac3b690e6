"""Reading ``telemetry.spans``: one trace's spans, and pages of recent traces.

A trace is listed by its root span (``parent_span_id IS NULL``), newest first;
a trace that begins with a bare outbound call (a database query at start-up, a
background flush: a ``client`` root) is not a request anyone looks for, and is
left out, like the viewer's own reads.
The page walks the partial index ``ix_spans_root_start`` (migration 0013)
backwards and checks each root's trace through the primary key
(``trace_id, span_id``) for the filters and the access rule, so a page costs
about ``limit`` index probes per filter, whatever the size of the table.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from reach_common.auth.authenticator import ENDUSER_ATTRIBUTE

spans = sa.table(
    "spans",
    sa.column("trace_id", sa.String),
    sa.column("span_id", sa.String),
    sa.column("parent_span_id", sa.String),
    sa.column("service", sa.Text),
    sa.column("name", sa.Text),
    sa.column("kind", sa.Text),
    sa.column("start_time", sa.DateTime(timezone=True)),
    sa.column("end_time", sa.DateTime(timezone=True)),
    sa.column("duration_ms", sa.Float),
    sa.column("status_code", sa.Text),
    sa.column("status_message", sa.Text),
    sa.column("attributes", sa.dialects.postgresql.JSONB),
    sa.column("events", sa.dialects.postgresql.JSONB),
    schema="telemetry",
)

# The viewer's own reads would otherwise fill the top of every list.
VIEWER_ROUTES = ("/traces", "/traces/{trace_id}")
VIEWER_PREFIX = "/ui/"


@dataclass(frozen=True)
class TraceFilter:
    """What a list asks for. ``owner``: only traces entirely recorded as this caller's
    (the rule of ``GET /traces/{id}``); ``None`` for operators, who see every trace."""

    owner: str | None = None
    service: str | None = None
    tool: str | None = None
    caller: str | None = None
    status: str | None = None
    min_duration_ms: float | None = None
    before: tuple[datetime, str] | None = None  # keyset: (root start, trace id) of the last row


def _attr(table: Any, key: str) -> Any:
    return table.c.attributes[key].astext


async def trace_spans(session: AsyncSession, trace_id: str) -> list[dict[str, Any]]:
    """Every span of one trace, by start."""
    query = (
        sa.select(spans)
        .where(spans.c.trace_id == trace_id)
        .order_by(spans.c.start_time, spans.c.span_id)
    )
    return [dict(r) for r in (await session.execute(query)).mappings()]


def _in_trace(root: Any, *conditions: Any) -> Any:
    member = spans.alias("member")
    cond = [c(member) for c in conditions]
    return sa.exists().where(member.c.trace_id == root.c.trace_id, *cond)


def _conditions(root: Any, f: TraceFilter) -> list[Any]:
    where: list[Any] = [root.c.parent_span_id.is_(None), root.c.kind != "client"]
    route = sa.func.coalesce(_attr(root, "http.route"), "")
    where += [route.not_in(VIEWER_ROUTES), ~route.startswith(VIEWER_PREFIX, autoescape=True)]
    if f.before is not None:
        where.append(sa.tuple_(root.c.start_time, root.c.trace_id) < sa.tuple_(*f.before))
    if f.min_duration_ms is not None:
        where.append(root.c.duration_ms >= f.min_duration_ms)
    if f.service is not None:
        where.append(_in_trace(root, lambda m: m.c.service == f.service))
    if f.tool is not None:
        tool = f.tool
        where.append(
            _in_trace(
                root,
                lambda m: sa.or_(_attr(m, "tool.id") == tool, _attr(m, "route.tool_id") == tool),
            )
        )
    if f.caller is not None:
        where.append(_in_trace(root, lambda m: _attr(m, ENDUSER_ATTRIBUTE) == f.caller))
    if f.status == "error":
        where.append(_in_trace(root, lambda m: m.c.status_code == "error"))
    elif f.status == "ok":
        where.append(~_in_trace(root, lambda m: m.c.status_code == "error"))
    if f.owner is not None:
        owner = f.owner
        where.append(_in_trace(root, lambda m: _attr(m, ENDUSER_ATTRIBUTE) == owner))
        where.append(~_in_trace(root, lambda m: _attr(m, ENDUSER_ATTRIBUTE) != owner))
    return where


def root_query(f: TraceFilter, limit: int) -> sa.Select[Any]:
    """The page's root spans, newest first (public for the EXPLAIN check)."""
    root = spans.alias("root")
    return (
        sa.select(
            root.c.trace_id,
            root.c.start_time,
            root.c.duration_ms,
            root.c.service,
            root.c.name,
        )
        .where(*_conditions(root, f))
        .order_by(root.c.start_time.desc(), root.c.trace_id.desc())
        .limit(limit)
    )


_SUMMARY = sa.text(
    "SELECT trace_id, count(*) AS span_count, "
    "array_agg(DISTINCT service ORDER BY service) AS services, "
    "bool_or(status_code = 'error') AS failed, "
    "array_remove(array_agg(DISTINCT coalesce(attributes->>'tool.id', "
    "nullif(attributes->>'route.tool_id', ''))), NULL) AS tools, "
    "array_remove(array_agg(DISTINCT attributes->>'enduser.id'), NULL) AS callers "
    "FROM telemetry.spans WHERE trace_id = ANY(:ids) GROUP BY trace_id"
)


async def list_traces(session: AsyncSession, f: TraceFilter, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` traces matching ``f``: each root's fields plus the trace's summary."""
    roots = [dict(r) for r in (await session.execute(root_query(f, limit))).mappings()]
    if not roots:
        return []
    ids = [r["trace_id"] for r in roots]
    summaries = {
        r["trace_id"]: dict(r) for r in (await session.execute(_SUMMARY, {"ids": ids})).mappings()
    }
    return [{**root, **summaries[root["trace_id"]]} for root in roots]
