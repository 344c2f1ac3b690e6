"""Ingest: hash, chunk, embed, then write a batch of documents in one transaction.

The expensive part (embedding) runs before the transaction opens, so no
transaction or lock is held while the CPU works. Inside the transaction each
source is locked, its stored hash checked again (a concurrent ingest may have
written the same content meanwhile) and only then are its old chunks replaced.
Two concurrent ingests of one source therefore leave exactly one set of chunks.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import structlog
from opentelemetry import trace
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from reach_common.embeddings import Embedder
from retriever.ingest.chunking import Chunk, Chunker, TokenCounter
from retriever.metrics import record_ingest
from retriever.storage import repository
from retriever.storage.repository import IndexDelta, NewChunk, StoredSource

log = structlog.get_logger(__name__)

IngestStatus = Literal["ingested", "replaced", "unchanged"]


@dataclass(frozen=True)
class Document:
    source: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedDocument:
    document: Document
    content_hash: str
    chunks: list[Chunk]
    embeddings: npt.NDArray[np.float32]


@dataclass(frozen=True)
class IngestOutcome:
    source: str
    status: IngestStatus
    chunks: int
    previous_chunks: int | None = None

    @property
    def message(self) -> str:
        if self.status == "unchanged":
            return f"source {self.source} unchanged, skipped"
        if self.status == "replaced":
            return f"replaced {self.source}: {_chunks(self.chunks)} (was {self.previous_chunks})"
        return f"ingested {_chunks(self.chunks)} from {self.source}"


def _chunks(count: int) -> str:
    return f"{count} chunk" if count == 1 else f"{count} chunks"


def token_counter(embedder: Embedder) -> TokenCounter:
    """Content tokens per text, as the embedder sees them ([CLS]/[SEP] not counted).

    The embedder truncates, so a count at the limit may hide a longer text; it is
    reported as over the limit, which makes the chunker split it.
    """
    limit = _max_tokens(embedder)

    def count(texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        counts = [len(e.ids) - 2 for e in embedder.tokenize(texts)]
        return [c if c < limit - 2 else limit - 1 for c in counts]

    return count


def _max_tokens(embedder: Embedder) -> int:
    """Where the embedder truncates, special tokens included."""
    return len(embedder.tokenize(["a " * 4096])[0].ids)


class Ingestor:
    """Chunks, embeds and stores documents. One per process; thread-safe for ``prepare``."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        chunk_tokens: int,
        overlap_tokens: int,
        embed_batch_size: int = 16,
        tracer: trace.Tracer | None = None,
    ) -> None:
        self.embedder = embedder
        self.tracer = tracer or trace.get_tracer("retriever")
        self.chunker = Chunker(token_counter(embedder), chunk_tokens, overlap_tokens)
        self.embed_batch_size = embed_batch_size
        self._settings_tag = f"chunk_tokens={chunk_tokens};overlap={overlap_tokens}"

    def content_hash(self, document: Document) -> str:
        """Covers the text, the metadata and the chunking settings: any change re-indexes."""
        digest = hashlib.sha256()
        digest.update(self._settings_tag.encode())
        digest.update(b"\0")
        digest.update(json.dumps(document.metadata, sort_keys=True, default=str).encode())
        digest.update(b"\0")
        digest.update(document.text.encode())
        return digest.hexdigest()

    def prepare(self, documents: Sequence[Document]) -> list[PreparedDocument]:
        """Chunk and embed (CPU only; call it from a worker thread)."""
        split = [self.chunker.split(d.text) for d in documents]
        texts = [c.indexed_text for chunks in split for c in chunks]
        # One call for the whole batch: the embedder sorts all chunks by length,
        # so padding is small even when documents differ in size.
        vectors = self.embedder.embed(texts, batch_size=self.embed_batch_size)
        prepared, offset = [], 0
        for document, chunks in zip(documents, split, strict=True):
            prepared.append(
                PreparedDocument(
                    document,
                    self.content_hash(document),
                    chunks,
                    vectors[offset : offset + len(chunks)],
                )
            )
            offset += len(chunks)
        return prepared

    async def unchanged(
        self, sessionmaker: async_sessionmaker[AsyncSession], documents: Sequence[Document]
    ) -> set[str]:
        """Sources whose stored hash already matches: they need no embedding at all."""
        async with sessionmaker() as session:
            stored = await repository.find_sources(session, [d.source for d in documents])
        return {
            d.source
            for d in documents
            if d.source in stored and stored[d.source].content_hash == self.content_hash(d)
        }

    async def ingest(
        self, sessionmaker: async_sessionmaker[AsyncSession], documents: Sequence[Document]
    ) -> list[IngestOutcome]:
        """Ingest documents (the last one wins when a source repeats): skip, add or replace."""
        documents = list({d.source: d for d in documents}.values())
        with self.tracer.start_as_current_span("retriever.ingest") as span:
            span.set_attribute("retriever.documents", len(documents))
            skipped = await self.unchanged(sessionmaker, documents)
            todo = [d for d in documents if d.source not in skipped]
            with self.tracer.start_as_current_span("retriever.embed"):
                prepared = await asyncio.to_thread(self.prepare, todo) if todo else []
            with self.tracer.start_as_current_span("retriever.write"):
                written = {o.source: o for o in await write(sessionmaker, prepared)}
        outcomes = [
            written.get(d.source) or IngestOutcome(d.source, "unchanged", 0) for d in documents
        ]
        record_ingest(outcomes)
        for outcome in outcomes:
            log.info(
                "document_ingested",
                source=outcome.source,
                status=outcome.status,
                chunks=outcome.chunks,
            )
        return outcomes


async def write(
    sessionmaker: async_sessionmaker[AsyncSession], prepared: Sequence[PreparedDocument]
) -> list[IngestOutcome]:
    """Store prepared documents in one transaction; a source whose hash now matches is skipped."""
    if not prepared:
        return []
    names = [p.document.source for p in prepared]
    async with sessionmaker() as session, session.begin():
        await repository.lock_sources(session, names)
        stored = await repository.find_sources(session, names)
        changed = [
            p
            for p in prepared
            if p.document.source not in stored
            or stored[p.document.source].content_hash != p.content_hash
        ]
        replaced = [stored[p.document.source] for p in changed if p.document.source in stored]
        delta = await repository.remove_chunks(session, [s.id for s in replaced])
        ids = await _upsert_sources(session, changed)
        added = await repository.insert_chunks(session, _new_chunks(changed, ids))
        delta.merge(added)
        if changed:
            await repository.apply_delta(session, delta, ingested=True)
    return _outcomes(prepared, stored, {p.document.source for p in changed})


async def _upsert_sources(
    session: AsyncSession, changed: Sequence[PreparedDocument]
) -> dict[str, int]:
    if not changed:
        return {}
    return await repository.upsert_sources(
        session,
        [
            {
                "name": p.document.source,
                "content_hash": p.content_hash,
                "metadata": json.dumps(p.document.metadata, default=str),
                "chunk_count": len(p.chunks),
                "token_count": sum(c.token_count for c in p.chunks),
            }
            for p in changed
        ],
    )


def _new_chunks(changed: Sequence[PreparedDocument], ids: dict[str, int]) -> list[NewChunk]:
    return [
        NewChunk(
            ids[p.document.source],
            chunk.ordinal,
            chunk.heading,
            chunk.text,
            chunk.token_count,
            p.embeddings[i],
        )
        for p in changed
        for i, chunk in enumerate(p.chunks)
    ]


def _outcomes(
    prepared: Sequence[PreparedDocument], stored: dict[str, StoredSource], changed: set[str]
) -> list[IngestOutcome]:
    outcomes = []
    for p in prepared:
        previous = stored.get(p.document.source)
        if p.document.source not in changed:
            outcomes.append(IngestOutcome(p.document.source, "unchanged", 0))
        elif previous is None:
            outcomes.append(IngestOutcome(p.document.source, "ingested", len(p.chunks)))
        else:
            outcomes.append(
                IngestOutcome(p.document.source, "replaced", len(p.chunks), previous.chunk_count)
            )
    return outcomes


__all__ = ["Document", "IndexDelta", "IngestOutcome", "Ingestor", "PreparedDocument", "write"]
