"""Writes to the document store and its BM25 index, always together, in the caller's transaction.

Every change to ``chunk`` changes ``posting``, ``term`` and ``corpus_stats`` in
the same transaction, so a reader sees either the old or the new state of a
source, never a mix. Locks are taken in one global order to rule out
deadlocks between concurrent writers: first the sources' advisory locks
(ascending key), then ``term`` rows (ascending hash, in a single statement),
then the ``corpus_stats`` row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from pgvector import Vector
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from retriever.storage.models import TEXT_SEARCH_CONFIG

# First key of pg_advisory_xact_lock(int, int): a number private to the retriever.
SOURCE_LOCK_SPACE = 7_240_301
# Seed of hashtextextended() for term hashes; changing it invalidates the index.
TERM_HASH_SEED = 0


@dataclass(frozen=True)
class StoredSource:
    id: int
    name: str
    content_hash: str
    chunk_count: int


@dataclass(frozen=True)
class NewChunk:
    """A chunk to store. ``indexed_text`` (heading + text) is what BM25 analyses."""

    source_id: int
    ordinal: int
    heading: str
    text: str
    token_count: int
    embedding: npt.NDArray[np.float32]


@dataclass
class IndexDelta:
    """How a write changes the BM25 statistics: chunks, total terms, and per-term chunk counts."""

    chunks: int = 0
    terms: int = 0
    frequencies: Counter[int] = field(default_factory=Counter)
    lexemes: dict[int, str] = field(default_factory=dict)

    def merge(self, other: IndexDelta) -> None:
        self.chunks += other.chunks
        self.terms += other.terms
        self.frequencies.update(other.frequencies)
        self.lexemes.update(other.lexemes)


async def lock_sources(session: AsyncSession, names: Sequence[str]) -> None:
    """Serialise writers of the same sources until the transaction ends."""
    await session.execute(
        text(
            "SELECT pg_advisory_xact_lock(:space, key) FROM "
            "(SELECT DISTINCT hashtext(name) AS key FROM unnest(CAST(:names AS text[])) AS name"
            " ORDER BY key) AS keys"
        ),
        {"space": SOURCE_LOCK_SPACE, "names": list(names)},
    )


async def find_sources(session: AsyncSession, names: Sequence[str]) -> dict[str, StoredSource]:
    rows = await session.execute(
        text(
            "SELECT id, name, content_hash, chunk_count FROM retriever.source "
            "WHERE name = ANY(CAST(:names AS text[]))"
        ),
        {"names": list(names)},
    )
    return {
        row.name: StoredSource(row.id, row.name, row.content_hash, row.chunk_count) for row in rows
    }


async def remove_chunks(session: AsyncSession, source_ids: Sequence[int]) -> IndexDelta:
    """Delete the chunks of these sources and their postings; the statistics they held."""
    delta = IndexDelta()
    if not source_ids:
        return delta
    rows = await session.execute(
        text(
            "WITH gone AS ("
            "  DELETE FROM retriever.chunk WHERE source_id = ANY(CAST(:ids AS bigint[]))"
            "  RETURNING id, term_hashes, term_count),"
            " pairs AS (SELECT gone.id, t.term_hash"
            "  FROM gone, unnest(gone.term_hashes) AS t(term_hash)),"
            " dropped AS ("
            "  DELETE FROM retriever.posting AS p USING pairs"
            "  WHERE p.term_hash = pairs.term_hash AND p.chunk_id = pairs.id)"
            # The first row carries the totals, the others one term each.
            " SELECT NULL::bigint AS term_hash, (SELECT count(*) FROM gone) AS chunks,"
            "  (SELECT coalesce(sum(term_count), 0) FROM gone) AS terms"
            " UNION ALL"
            " SELECT term_hash, count(*), NULL FROM pairs GROUP BY term_hash"
        ),
        {"ids": list(source_ids)},
    )
    for row in rows:
        if row.term_hash is None:
            delta.chunks = -int(row.chunks)
            delta.terms = -int(row.terms)
        else:
            delta.frequencies[row.term_hash] -= row.chunks
    return delta


async def upsert_sources(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Insert or update source rows (name, content_hash, metadata, chunk_count, token_count)."""
    result = await session.execute(
        text(
            "INSERT INTO retriever.source (name, content_hash, metadata, chunk_count, token_count)"
            " SELECT * FROM unnest(CAST(:names AS text[]), CAST(:hashes AS text[]),"
            "  CAST(:metadata AS jsonb[]), CAST(:chunks AS int[]), CAST(:tokens AS int[]))"
            " ON CONFLICT (name) DO UPDATE SET content_hash = excluded.content_hash,"
            "  metadata = excluded.metadata, chunk_count = excluded.chunk_count,"
            "  token_count = excluded.token_count, updated_at = now()"
            " RETURNING id, name"
        ),
        {
            "names": [r["name"] for r in rows],
            "hashes": [r["content_hash"] for r in rows],
            "metadata": [r["metadata"] for r in rows],
            "chunks": [r["chunk_count"] for r in rows],
            "tokens": [r["token_count"] for r in rows],
        },
    )
    return {row.name: row.id for row in result}


async def insert_chunks(session: AsyncSession, chunks: Sequence[NewChunk]) -> IndexDelta:
    """Store chunks, analyse them with the BM25 analyser and write their postings."""
    delta = IndexDelta()
    if not chunks:
        return delta
    rows = await session.execute(
        text(
            "WITH input AS ("  # noqa: S608 - constant SQL, values bound
            "  SELECT * FROM unnest(CAST(:source_ids AS bigint[]), CAST(:ordinals AS int[]),"
            "   CAST(:headings AS text[]), CAST(:texts AS text[]), CAST(:tokens AS int[]),"
            "   CAST(:embeddings AS vector[]))"
            "  AS i(source_id, ordinal, heading, text, token_count, embedding)),"
            " analysed AS ("
            "  SELECT input.*, a.hashes, a.frequencies, a.lexemes, a.length FROM input"
            "  CROSS JOIN LATERAL ("
            "   SELECT coalesce(array_agg(hashtextextended(t.lexeme, :seed) ORDER BY t.lexeme),"
            "     '{}') AS hashes,"
            "    coalesce(array_agg(cardinality(t.positions)::smallint ORDER BY t.lexeme), '{}')"
            "     AS frequencies,"
            "    coalesce(array_agg(t.lexeme ORDER BY t.lexeme), '{}') AS lexemes,"
            "    coalesce(sum(cardinality(t.positions)), 0)::int AS length"
            f"   FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}',"
            "    CASE WHEN input.heading = '' THEN input.text"
            "    ELSE input.heading || E'\\n\\n' || input.text END)) AS t) AS a),"
            " stored AS ("
            "  INSERT INTO retriever.chunk (source_id, ordinal, heading, text, token_count,"
            "   term_count, term_hashes, term_frequencies, embedding)"
            "  SELECT source_id, ordinal, heading, text, token_count, length, hashes, frequencies,"
            "   embedding FROM analysed"
            "  RETURNING id, term_count, term_hashes, term_frequencies),"
            " postings AS ("
            "  INSERT INTO retriever.posting (term_hash, chunk_id, term_frequency, chunk_length)"
            "  SELECT p.term_hash, stored.id, p.frequency, least(stored.term_count, 32767)"
            "  FROM stored, unnest(stored.term_hashes, stored.term_frequencies)"
            "   AS p(term_hash, frequency))"
            " SELECT hashtextextended(l.lexeme, :seed) AS term_hash, l.lexeme, count(*) AS chunks,"
            "  (SELECT count(*) FROM analysed) AS total_chunks,"
            "  (SELECT sum(length) FROM analysed) AS total_terms"
            " FROM analysed, unnest(analysed.lexemes) AS l(lexeme) GROUP BY l.lexeme"
        ),
        {
            "seed": TERM_HASH_SEED,
            "source_ids": [c.source_id for c in chunks],
            "ordinals": [c.ordinal for c in chunks],
            "headings": [c.heading for c in chunks],
            "texts": [c.text for c in chunks],
            "tokens": [c.token_count for c in chunks],
            "embeddings": [Vector(c.embedding) for c in chunks],
        },
    )
    delta.chunks = len(chunks)
    for row in rows:
        delta.frequencies[row.term_hash] += row.chunks
        delta.lexemes[row.term_hash] = row.lexeme
        delta.terms = int(row.total_terms)
    return delta


async def apply_delta(session: AsyncSession, delta: IndexDelta, *, ingested: bool) -> None:
    """Bring ``term`` and ``corpus_stats`` up to date with a write (net of removals)."""
    changed = sorted((h, d) for h, d in delta.frequencies.items() if d != 0)
    if changed:
        # One statement in ascending hash order: concurrent writers lock term rows
        # in the same order, so they wait for each other instead of deadlocking.
        await session.execute(
            text(
                "INSERT INTO retriever.term (term_hash, lexeme, chunk_frequency)"
                " SELECT d.term_hash, coalesce(d.lexeme, t.lexeme, ''), d.delta"
                " FROM unnest(CAST(:hashes AS bigint[]), CAST(:lexemes AS text[]),"
                "  CAST(:deltas AS int[])) AS d(term_hash, lexeme, delta)"
                " LEFT JOIN retriever.term AS t ON t.term_hash = d.term_hash"
                " ORDER BY d.term_hash"
                " ON CONFLICT (term_hash) DO UPDATE"
                " SET chunk_frequency = retriever.term.chunk_frequency + excluded.chunk_frequency"
            ),
            {
                "hashes": [h for h, _ in changed],
                "lexemes": [delta.lexemes.get(h) for h, _ in changed],
                "deltas": [d for _, d in changed],
            },
        )
        shrunk = [h for h, d in changed if d < 0]
        if shrunk:
            await session.execute(
                text(
                    "DELETE FROM retriever.term WHERE term_hash = ANY(CAST(:hashes AS bigint[]))"
                    " AND chunk_frequency <= 0"
                ),
                {"hashes": shrunk},
            )
    if delta.chunks or delta.terms or ingested:
        await session.execute(
            text(
                "INSERT INTO retriever.corpus_stats AS s"
                " (id, chunk_count, total_terms, last_ingest_at)"
                " VALUES (1, :chunks, :terms, CASE WHEN :ingested THEN now() END)"
                " ON CONFLICT (id) DO UPDATE SET"
                "  chunk_count = s.chunk_count + excluded.chunk_count,"
                "  total_terms = s.total_terms + excluded.total_terms,"
                "  last_ingest_at = coalesce(excluded.last_ingest_at, s.last_ingest_at)"
            ),
            {"chunks": delta.chunks, "terms": delta.terms, "ingested": ingested},
        )


async def delete_source(session: AsyncSession, name: str) -> StoredSource | None:
    """Remove a source, its chunks and their share of the BM25 statistics; None if unknown."""
    await lock_sources(session, [name])
    stored = (await find_sources(session, [name])).get(name)
    if stored is None:
        return None
    delta = await remove_chunks(session, [stored.id])
    await session.execute(text("DELETE FROM retriever.source WHERE id = :id"), {"id": stored.id})
    await apply_delta(session, delta, ingested=False)
    return stored
