"""SIGKILL the retriever in the middle of ingest transactions: after the restart, no
document is partly stored, none is stored twice, none that was acknowledged is missing.

Two writers ingest documents one after another, repeating a document until it is
acknowledged. To make the kill land inside the write (chunks inserted, not committed),
the test holds a row lock on ``retriever.corpus_stats`` (the last row an ingest
transaction updates) and waits until the writers' transactions are blocked on it, with
their chunks written; then it SIGKILLs the retriever and lets the lock go. The stored
rows are the truth: every source has exactly the chunks one ingest of its text makes,
and the corpus statistics still count every stored chunk.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import psycopg
import pytest

from reach_common.db import libpq_url
from tests.faults.conftest import FaultStack
from tests.faults.matrix import Row, record
from tests.faults.stack_procs import wait_for
from tests.faults.traffic import Traffic

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
WRITERS = 2
WRITER = {"X-User-Id": "fault-writer", "X-User-Roles": "retriever_writer"}
# Every document has this text (under its own source name), so each stores as many chunks.
TEXT = "\n\n".join(
    f"## Section {s}\n\n"
    + " ".join(f"Warehouse {s} keeps pallets of item {w} in aisle {w % 7}." for w in range(40))
    for s in range(6)
)


class Writer:
    """Ingests ``<prefix>-<n>-<count>.md`` one after another; keeps what was acknowledged."""

    def __init__(self, client: httpx.AsyncClient, prefix: str, n: int) -> None:
        self.client = client
        self.prefix = f"{prefix}-{n}"
        self.count = 0
        self.acknowledged: dict[str, dict[str, object]] = {}
        self._next()

    def _next(self) -> None:
        self.count += 1
        self.source = f"{self.prefix}-{self.count}.md"

    async def send(self) -> httpx.Response:
        response = await self.client.post(
            "/ingest", json={"source": self.source, "text": TEXT}, headers=WRITER
        )
        if response.is_success:  # 201 for a new source
            self.acknowledged[self.source] = response.json()
            self._next()
        return response


WAITING = (
    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
    "AND query ILIKE '%%retriever.%%' AND pid <> pg_backend_pid()"
)


async def test_sigkill_of_the_retriever_mid_ingest_leaves_no_partial_document(
    stack: FaultStack,
) -> None:
    prefix = f"rtkill-{uuid.uuid4().hex[:8]}"
    row = Row(
        fault="SIGKILL mid-request",
        service="retriever",
        promise="an ingest cut off by the kill leaves nothing; every source has all its "
        "chunks once; acknowledged sources all stored",
    )
    async with httpx.AsyncClient(base_url=stack.url("retriever"), timeout=60) as client:
        writers = [Writer(client, prefix, n) for n in range(WRITERS)]
        traffic = Traffic(pause=0.05)
        for n, writer in enumerate(writers):
            traffic.add(f"ingest{n}", writer.send)
        async with traffic.running():
            await wait_for(lambda: all(w.acknowledged for w in writers), 60, "first ingests")
            lock = await psycopg.AsyncConnection.connect(libpq_url(stack.database_url))
            try:
                await lock.execute("SELECT 1 FROM retriever.corpus_stats FOR UPDATE")
                blocked = await wait_blocked(stack, WRITERS)
                marks = stack.log_marks()
                killed_at = time.monotonic()
                await asyncio.to_thread(stack.kill, "retriever")
            finally:
                await lock.rollback()
                await lock.close()
            await asyncio.to_thread(stack.start, "retriever")
            await wait_for(lambda: traffic.recovered_at(killed_at) is not None, 60, "recovery")
            recovered_at = traffic.recovered_at(killed_at)
    assert recovered_at is not None
    for outcome in traffic.between(killed_at, recovered_at):
        row.count(outcome.reason)
    row.recover_s = round(recovered_at - killed_at, 3)
    acknowledged = {k: v for w in writers for k, v in w.acknowledged.items()}
    expected = next(int(str(a["chunks"])) for a in acknowledged.values() if a["chunks"])
    stored = stored_sources(stack, prefix)
    partial = {k: v for k, v in stored.items() if v != (expected, expected, expected)}
    row.lost = sum(1 for source in acknowledged if source not in stored) + len(partial)
    row.duplicates = sum(max(0, chunks - expected) for _, chunks, _ in stored.values())
    record(row)

    assert blocked >= WRITERS  # the kill landed inside the writers' transactions
    assert row.errors["connection_error"] >= WRITERS, row.errors
    assert expected > 1
    assert partial == {}, (expected, partial)
    assert row.lost == 0
    assert stack.tracebacks_since(marks) == {}  # the restart logged no error
    assert row.duplicates == 0
    ((counted, total),) = stack.sql(
        "SELECT (SELECT chunk_count FROM retriever.corpus_stats), count(*) FROM retriever.chunk"
    )
    assert counted == total  # the statistics count only what was committed


def stored_sources(stack: FaultStack, prefix: str) -> dict[str, tuple[int, int, int]]:
    """Each stored source: ``(chunk_count it records, chunks, distinct ordinals)``."""
    return {
        str(name): (int(str(recorded)), int(str(chunks)), int(str(ordinals)))
        for name, recorded, chunks, ordinals in stack.sql(
            "SELECT s.name, s.chunk_count, count(c.id), count(DISTINCT c.ordinal) "
            "FROM retriever.source s LEFT JOIN retriever.chunk c ON c.source_id = s.id "
            "WHERE s.name LIKE %s GROUP BY s.id",
            prefix + "-%",
        )
    }


async def wait_blocked(stack: FaultStack, at_least: int) -> int:
    """The number of retriever statements waiting on a lock, once it reaches ``at_least``."""
    deadline = time.monotonic() + 30
    while True:
        ((waiting,),) = await asyncio.to_thread(stack.sql, WAITING)
        if int(str(waiting)) >= at_least:
            return int(str(waiting))
        assert time.monotonic() < deadline, f"only {waiting} ingest transactions blocked"
        await asyncio.sleep(0.05)
