"""Audit rows, written off the request path in bounded batches.

A request puts its row on a bounded in-memory queue and moves on; one
background task writes up to ``AUDIT_BATCH_SIZE`` rows per INSERT, at least
every ``AUDIT_FLUSH_MS``. When the queue is full, callers wait (backpressure)
rather than lose rows. A batch that cannot be written because Postgres is
restarting or unreachable (``reach_common.outages``) is kept and retried, backing
off up to ``MAX_RETRY_S``, until it is written; meanwhile new rows wait in the
queue. Shutdown writes whatever is left, retrying for up to ``SHUTDOWN_RETRY_S``
before it gives up and logs how many rows are lost. A batch the database refuses
(not an outage: a value a column cannot take) is written again one row at a time,
and a row still refused is stored as a placeholder (texts clipped and cleaned,
``arguments: {"_unstorable": true}``), so one bad row never costs other rows and
every call still leaves one. No database transaction is ever open while a tool runs.
"""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from typing import Any

import structlog
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.audit.models import Invocation
from gateway.background import cancel_and_wait
from reach_common.outages import down_dependency
from reach_common.storable import storable_text

log = structlog.get_logger(__name__)

FIRST_RETRY_S = 0.1
MAX_RETRY_S = 2.0
SHUTDOWN_RETRY_S = 10.0

transport_name: ContextVar[str] = ContextVar("transport_name", default="http")
"""How the call came in (``http``, ``mcp``): set by the transport, like the trace id read
from the current span, and recorded on each audit row made while it is set."""


@dataclass(frozen=True)
class AuditRow:
    trace_id: str | None
    tool_id: str
    caller: str | None
    auth_via: str
    status: str
    reason: str | None
    http_status: int
    latency_ms: float
    attempts: int = 0
    task_id: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    approval_id: str | None = None
    actor: str | None = None  # who made an approval transition
    transport: str = field(default_factory=transport_name.get)
    flags: list[str] = field(default_factory=list)  # untrusted-text flags of the output


_COLUMNS = tuple(f.name for f in fields(AuditRow))


class AuditWriter:
    def __init__(
        self, engine: AsyncEngine, *, batch_size: int, queue_size: int, flush_ms: int
    ) -> None:
        self._engine = engine
        self._batch_size = batch_size
        self._flush_s = flush_ms / 1000
        self._queue: asyncio.Queue[AuditRow] = asyncio.Queue(maxsize=queue_size)
        self._task: asyncio.Task[None] | None = None
        self._pending: list[AuditRow] = []
        self._inflight: asyncio.Future[None] | None = None
        # Held from taking rows to their INSERT's commit, so rows get ids in the order they
        # were recorded even when a flush() and the writer task both write.
        self._order = asyncio.Lock()
        self._unwritten = 0  # recorded rows not yet through an INSERT (written or lost)
        self._give_up_at: float | None = None  # set at shutdown: stop retrying then
        self.written = 0

    @property
    def queue_depth(self) -> int:
        """Rows recorded and not yet through an INSERT (the metric of that name)."""
        return max(self._unwritten, 0)

    async def record(self, row: AuditRow) -> None:
        self._unwritten += 1
        await self._queue.put(row)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="audit-writer")

    async def flush(self) -> None:
        """Write everything recorded so far (tests and shutdown)."""
        for _ in range(1000):
            if self._inflight is not None and not self._inflight.done():
                await asyncio.shield(self._inflight)
                continue
            held = self._unwritten - len(self._pending) - self._queue.qsize()
            if held > 0 and self._task is not None and not self._task.done():
                # The writer task took a row off the queue and has not put it in its batch
                # yet: let it, so rows are written in the order they were recorded.
                await asyncio.sleep(0.001)
                continue
            async with self._order:
                batch, self._pending = self._pending, []
                await self._write(batch)
                while not self._queue.empty():
                    await self._write(self._drain())
            if self._unwritten <= 0 or self._task is None or self._task.done():
                return

    async def stop(self) -> None:
        self._give_up_at = time.monotonic() + SHUTDOWN_RETRY_S
        await cancel_and_wait(self._task)
        await self.flush()

    def _drain(self) -> list[AuditRow]:
        rows: list[AuditRow] = []
        while len(rows) < self._batch_size and not self._queue.empty():
            rows.append(self._queue.get_nowait())
        return rows

    async def _run(self) -> None:
        while True:
            self._pending.append(await self._queue.get())
            await asyncio.sleep(self._flush_s)  # let a batch gather
            # Shielded: a shutdown during the INSERT waits for it instead of losing the rows.
            self._inflight = asyncio.ensure_future(self._write_gathered())
            await asyncio.shield(self._inflight)

    async def _write_gathered(self) -> None:
        async with self._order:
            self._pending.extend(self._drain())
            batch, self._pending = self._pending, []
            await self._write(batch)

    async def _write(self, rows: list[AuditRow]) -> None:
        """INSERT ``rows``, retrying while the database does not take them. When it
        refuses the batch (not an outage), rows go in one by one, so one bad row never
        costs the others theirs."""
        if not rows:
            return
        # Shallow: the arguments were redacted into a new dict for this row, and asdict's
        # deep copy of them was the largest CPU cost of a call's audit.
        values = [{name: getattr(r, name) for name in _COLUMNS} for r in rows]
        wait_s = FIRST_RETRY_S
        one_by_one = False
        try:
            while values:
                try:
                    if one_by_one:
                        await self._write_each(values)  # raises only an outage
                        return
                    async with self._engine.begin() as conn:
                        await conn.execute(insert(Invocation), values)
                except Exception as exc:  # noqa: BLE001 - one bad row must not end the writer
                    if down_dependency(exc) is None:
                        one_by_one = True  # a row the database refuses: find it
                        continue
                    if self._give_up_at is not None and time.monotonic() >= self._give_up_at:
                        # Still down at shutdown: the rows are lost; say how many, loudly,
                        # without their content.
                        log.error("audit_write_failed", rows=len(values), error=type(exc).__name__)
                        return
                    log.warning(
                        "audit_write_retry",
                        rows=len(values),
                        error=type(exc).__name__,
                        wait_s=wait_s,
                    )
                    await asyncio.sleep(wait_s)
                    wait_s = min(wait_s * 2, MAX_RETRY_S)
                    continue
                self.written += len(values)
                return
        finally:
            self._unwritten -= len(rows)

    async def _write_each(self, values: list[dict[str, Any]]) -> None:
        """INSERT ``values`` one at a time, removing each from the list once it is through.
        A row the database still refuses is stored as :func:`unstorable` says; only if even
        that is refused is the row lost (logged, without its content). An outage meanwhile
        propagates, leaving the rows not yet written in ``values`` for the caller to retry."""
        while values:
            row = values[0]
            for attempt in (row, unstorable(row)):
                try:
                    async with self._engine.begin() as conn:
                        await conn.execute(insert(Invocation), [attempt])
                except Exception as exc:
                    if down_dependency(exc) is not None:
                        raise
                    log.error(
                        "audit_row_refused",
                        tool_id=_clean(str(row.get("tool_id")), 200),
                        placeholder=attempt is not row,
                        error=type(exc).__name__,
                    )
                    continue
                self.written += 1
                break
            values.pop(0)


def _clean(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters, without what Postgres text refuses (NUL) or
    UTF-8 cannot encode (lone surrogates)."""
    if text is None:
        return None
    return storable_text(text[:limit]).encode("utf-8", "replace").decode("utf-8")


def unstorable(row: dict[str, Any]) -> dict[str, Any]:
    """What is kept of an audit row the database refused: every text clipped to its column
    and cleaned, its arguments and flags replaced, so the call still leaves a row."""
    return {
        **row,
        "trace_id": _clean(row.get("trace_id"), 32),
        "tool_id": _clean(str(row.get("tool_id")), 200),
        "caller": _clean(row.get("caller"), 200),
        "auth_via": _clean(str(row.get("auth_via")), 16),
        "status": _clean(str(row.get("status")), 16),
        "reason": _clean(row.get("reason"), 64),
        "task_id": _clean(row.get("task_id"), 64),
        "arguments": {"_unstorable": True},
        "approval_id": _clean(row.get("approval_id"), 32),
        "actor": _clean(row.get("actor"), 200),
        "transport": _clean(str(row.get("transport")), 16),
        "flags": [],
    }
