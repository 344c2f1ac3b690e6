"""Bulk ingest: many documents, with embedding and database writes overlapped.

Documents are read a window at a time and sorted by length, so each embedder
batch holds texts of similar size and pads little. ``workers`` threads chunk
and embed the next batches (onnxruntime releases the GIL) while the current
batch is written to Postgres, whose work runs in its own process.

For bulk work, give the ingestor an embedder with one onnxruntime thread and
use one worker per core: independent single-threaded runs keep every core busy
and, unlike one run spread over all cores, do not stall when another process
takes a core for a while.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from retriever.ingest.service import Document, Ingestor, IngestOutcome, PreparedDocument, write


@dataclass(frozen=True)
class BulkOptions:
    batch_documents: int = 32
    sort_window: int = 512
    workers: int = field(default_factory=lambda: os.cpu_count() or 1)


def _batches(documents: Iterable[Document], options: BulkOptions) -> Iterator[list[Document]]:
    iterator = iter(documents)
    while window := list(islice(iterator, options.sort_window)):
        window.sort(key=lambda d: len(d.text))
        for start in range(0, len(window), options.batch_documents):
            batch = window[start : start + options.batch_documents]
            yield list({d.source: d for d in batch}.values())


Prepared = tuple[list[IngestOutcome], list[PreparedDocument]]


async def ingest_many(
    ingestor: Ingestor,
    sessionmaker: async_sessionmaker[AsyncSession],
    documents: Iterable[Document],
    options: BulkOptions | None = None,
) -> AsyncIterator[IngestOutcome]:
    """Ingest ``documents``, yielding one outcome per document as its batch commits.

    Each batch is one transaction. Unchanged sources are found before embedding
    and cost nothing but a lookup.
    """
    options = options or BulkOptions()
    queue: asyncio.Queue[Prepared | None] = asyncio.Queue(maxsize=options.workers)

    async def produce() -> None:
        in_flight: deque[tuple[list[IngestOutcome], asyncio.Future[list[PreparedDocument]]]]
        in_flight = deque()
        try:
            for batch in _batches(documents, options):
                skipped = await ingestor.unchanged(sessionmaker, batch)
                todo = [d for d in batch if d.source not in skipped]
                unchanged = [IngestOutcome(s, "unchanged", 0) for s in sorted(skipped)]
                in_flight.append((unchanged, asyncio.ensure_future(_prepare(ingestor, todo))))
                if len(in_flight) >= options.workers:
                    done, work = in_flight.popleft()
                    await queue.put((done, await work))
            while in_flight:
                done, work = in_flight.popleft()
                await queue.put((done, await work))
        finally:
            for _, work in in_flight:
                work.cancel()
            await queue.put(None)

    producer = asyncio.create_task(produce())
    try:
        while (item := await queue.get()) is not None:
            unchanged, prepared = item
            for outcome in unchanged:
                yield outcome
            for outcome in await write(sessionmaker, prepared):
                yield outcome
        await producer  # re-raises a failure of the producer
    finally:
        if not producer.done():
            producer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await producer


async def _prepare(ingestor: Ingestor, documents: list[Document]) -> list[PreparedDocument]:
    return await asyncio.to_thread(ingestor.prepare, documents) if documents else []
