"""Audit rows get ids in the order they were recorded, even when a flush() and the
writer task write at the same time (CI once saw a slow flush commit after the writer's
next batch, and the audit log read out of order)."""

from __future__ import annotations

import asyncio

import psycopg

from gateway.audit.writer import AuditRow, AuditWriter
from reach_common.db import create_engine, libpq_url
from tests.conftest import Backends


class SlowFirstWrite(AuditWriter):
    """A real writer whose first INSERT starts late, as under a loaded machine."""

    delayed = False

    async def _write(self, rows: list[AuditRow]) -> None:
        if rows and not self.delayed:
            self.delayed = True
            await asyncio.sleep(0.3)
        await super()._write(rows)


def row(tool_id: str) -> AuditRow:
    return AuditRow(
        trace_id=None,
        tool_id=tool_id,
        caller=None,
        auth_via="anonymous",
        status="succeeded",
        reason=None,
        http_status=200,
        latency_ms=1.0,
    )


async def test_a_flush_racing_the_writer_keeps_the_recorded_order(
    clean_state: Backends,
) -> None:
    engine = create_engine(clean_state.database_url, pool_size=2)
    writer = SlowFirstWrite(engine, batch_size=100, queue_size=100, flush_ms=100)
    writer.start()
    try:
        await writer.record(row("first"))
        await asyncio.sleep(0.02)  # the writer task holds "first", gathering a batch
        await writer.record(row("second"))
        await writer.record(row("third"))
        # flush() takes "first" and is slow to insert it; the writer task wakes meanwhile
        # and takes the rest.
        await writer.flush()
        await writer.stop()
    finally:
        await engine.dispose()
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        written = conn.execute("SELECT tool_id FROM gateway.invocation ORDER BY id").fetchall()
    assert [r[0] for r in written] == ["first", "second", "third"]
    assert writer.written == 3
