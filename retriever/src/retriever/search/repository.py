"""Search queries: BM25 over the postings, HNSW over the embeddings, and hit details.

BM25 is computed here, inside Postgres, at query time, from live statistics:

    score(c) = Σ_t  w_t · idf(t) · tf(t,c) · (k1 + 1) / (tf(t,c) + k1 · (1 − b + b · |c| / avgdl))
    idf(t)   = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))

with N chunks, n(t) chunks holding t, |c| the chunk's analysed length and
avgdl the mean length, all read from ``corpus_stats``/``term`` by the same
statement as the postings, so from one snapshot. ``w_t`` is how often t
occurs in the query (times a weight for expansion terms). All arithmetic is
float8: numeric arithmetic per posting is several times slower.

Every function runs one statement, so callers may use autocommit connections.
Connection settings (``jit``, ``hnsw.ef_search``, ...) are made once per
connection by :func:`retriever.app.configure_connections`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from retriever.storage.models import TEXT_SEARCH_CONFIG
from retriever.storage.repository import TERM_HASH_SEED

# Bounded BM25 scores this many times ``limit`` candidates exactly: at 500k chunks
# (SciFact and 50 perturbed copies), 2x kept 82 % of the exhaustive top 10, 5x 88 %,
# for about 3 ms more.
POOL_FACTOR = 5


@dataclass(frozen=True)
class Bm25Query:
    """Weighted texts (analysed by Postgres) and weighted terms (already analysed)."""

    texts: tuple[tuple[str, float], ...]
    terms: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True)
class ScoredChunk:
    chunk_id: int
    score: float


@dataclass(frozen=True)
class HitRow:
    chunk_id: int
    source: str
    ordinal: int
    heading: str
    text: str
    metadata: dict[str, Any]
    bm25: float | None
    vector: float | None


@dataclass(frozen=True)
class FeedbackTerm:
    term_hash: int
    lexeme: str
    weight: float


_QUERY_TERMS = (
    "WITH query_terms AS ("  # noqa: S608 - constant SQL, values bound
    "  SELECT hashtextextended(t.lexeme, :seed) AS term_hash,"
    "   cardinality(t.positions) * q.weight AS weight"
    "  FROM unnest(CAST(:texts AS text[]), CAST(:text_weights AS float8[])) AS q(body, weight),"
    f"  unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', q.body)) AS t"
    "  UNION ALL"
    "  SELECT * FROM unnest(CAST(:term_hashes AS bigint[]), CAST(:term_weights AS float8[]))),"
    " stats AS ("
    "  SELECT chunk_count::float8 AS n,"
    "   total_terms::float8 / greatest(chunk_count, 1) AS avgdl"
    "  FROM retriever.corpus_stats WHERE id = 1),"
    " weighted AS MATERIALIZED ("
    "  SELECT t.term_hash, sum(q.weight)"
    "   * ln(1 + (s.n - t.chunk_frequency + 0.5) / (t.chunk_frequency + 0.5)) AS idf,"
    "   s.avgdl"
    "  FROM query_terms AS q JOIN retriever.term AS t ON t.term_hash = q.term_hash"
    "  CROSS JOIN stats AS s WHERE t.chunk_frequency > 0"
    "  GROUP BY t.term_hash, t.chunk_frequency, s.n, s.avgdl),"
    " params AS (SELECT CAST(:k1 AS float8) AS k1, CAST(:b AS float8) AS b)"
)
_BM25_SCORE = (
    "sum(w.idf * p.term_frequency * (k.k1 + 1)"
    " / (p.term_frequency + k.k1 * (1 - k.b + k.b * p.chunk_length / w.avgdl)))"
)


def _query_params(query: Bm25Query, k1: float = 0.0, b: float = 0.0) -> dict[str, Any]:
    return {
        "seed": TERM_HASH_SEED,
        "texts": [t for t, _ in query.texts],
        "text_weights": [float(w) for _, w in query.texts],
        "term_hashes": [h for h, _ in query.terms],
        "term_weights": [float(w) for _, w in query.terms],
        "k1": float(k1),
        "b": float(b),
    }


def bm25_statement(
    query: Bm25Query,
    *,
    limit: int,
    k1: float,
    b: float,
    source_ids: Sequence[int] | None = None,
    term_postings: int | None = None,
) -> tuple[str, dict[str, Any]]:
    """The BM25 statement and its parameters (also what the benchmark explains).

    With ``term_postings`` (and no source filter) the candidates are bounded:
    each query term contributes at most its ``term_postings`` best postings
    (highest term frequency first, then shortest chunk, read in that order from
    ``ix_posting_impact``), the candidates' partial scores pick a pool of
    ``POOL_FACTOR · limit``, and the pool is scored exactly, over every query term, from
    the posting keys. A term held by no more chunks than that is read whole, so
    when every query term is, the result equals the exhaustive one. Without it
    every matching posting is read and scored.
    """
    params = {**_query_params(query, k1, b), "limit": limit}
    if term_postings is not None and source_ids is None:
        params |= {"term_postings": term_postings, "pool": POOL_FACTOR * limit}
        sql = (
            _QUERY_TERMS + ", pool AS MATERIALIZED ("  # noqa: S608 - constant SQL, values bound
            "  SELECT p.chunk_id FROM weighted AS w CROSS JOIN params AS k"
            "  CROSS JOIN LATERAL (SELECT chunk_id, term_frequency, chunk_length"
            "   FROM retriever.posting WHERE term_hash = w.term_hash"
            "   ORDER BY term_frequency DESC, chunk_length LIMIT :term_postings) AS p"
            f"  GROUP BY p.chunk_id ORDER BY {_BM25_SCORE} DESC, p.chunk_id LIMIT :pool)"
            # One primary-key probe per (candidate, term); LIMIT 1 (the key is unique)
            # keeps the planner from turning them into a scan of whole posting lists.
            f" SELECT pool.chunk_id, {_BM25_SCORE} AS score"
            " FROM pool CROSS JOIN weighted AS w CROSS JOIN params AS k"
            " CROSS JOIN LATERAL (SELECT term_frequency, chunk_length FROM retriever.posting"
            "  WHERE term_hash = w.term_hash AND chunk_id = pool.chunk_id LIMIT 1) AS p"
            " GROUP BY pool.chunk_id ORDER BY score DESC, pool.chunk_id LIMIT :limit"
        )
        return sql, params
    source_filter = ""
    if source_ids is not None:
        source_filter = (
            " WHERE p.chunk_id IN (SELECT id FROM retriever.chunk"
            " WHERE source_id = ANY(CAST(:source_ids AS bigint[])))"
        )
        params["source_ids"] = list(source_ids)
    sql = (
        _QUERY_TERMS + f" SELECT p.chunk_id, {_BM25_SCORE} AS score"  # noqa: S608 - constant SQL, values bound
        " FROM weighted AS w CROSS JOIN params AS k"
        " JOIN retriever.posting AS p ON p.term_hash = w.term_hash"
        + source_filter
        + " GROUP BY p.chunk_id ORDER BY score DESC, p.chunk_id LIMIT :limit"
    )
    return sql, params


async def bm25_search(
    conn: AsyncConnection,
    query: Bm25Query,
    *,
    limit: int,
    k1: float,
    b: float,
    source_ids: Sequence[int] | None = None,
    term_postings: int | None = None,
) -> list[ScoredChunk]:
    """The ``limit`` best chunks by BM25 (ties broken by chunk id); see :func:`bm25_statement`."""
    sql, params = bm25_statement(
        query, limit=limit, k1=k1, b=b, source_ids=source_ids, term_postings=term_postings
    )
    rows = await conn.execute(text(sql), params)
    return [ScoredChunk(row.chunk_id, float(row.score)) for row in rows]


def vector_statement(
    embedding: npt.NDArray[np.float32],
    *,
    limit: int,
    source_ids: Sequence[int] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The nearest-chunks statement and its parameters (also what the benchmark explains)."""
    params: dict[str, Any] = {"embedding": embedding, "limit": limit}
    source_filter = ""
    if source_ids is not None:
        source_filter = " WHERE source_id = ANY(CAST(:source_ids AS bigint[]))"
        params["source_ids"] = list(source_ids)
    sql = (
        "SELECT id, 1 - (embedding <=> :embedding) AS score FROM retriever.chunk"  # noqa: S608 - constant SQL, values bound
        + source_filter
        + " ORDER BY embedding <=> :embedding LIMIT :limit"
    )
    return sql, params


async def vector_search(
    conn: AsyncConnection,
    embedding: npt.NDArray[np.float32],
    *,
    limit: int,
    source_ids: Sequence[int] | None = None,
) -> list[ScoredChunk]:
    """The ``limit`` nearest chunks by cosine similarity, through the HNSW index.

    With a source filter the index is scanned before the filter applies;
    ``hnsw.iterative_scan`` keeps the scan going until enough rows pass it.
    """
    sql, params = vector_statement(embedding, limit=limit, source_ids=source_ids)
    rows = await conn.execute(text(sql), params)
    return [ScoredChunk(row.id, float(row.score)) for row in rows]


async def hit_rows(
    conn: AsyncConnection,
    chunk_ids: Sequence[int],
    *,
    bm25: Bm25Query | None,
    embedding: npt.NDArray[np.float32] | None,
    k1: float,
    b: float,
) -> dict[int, HitRow]:
    """What a hit shows, with its BM25 score and cosine similarity for the query given."""
    params = {**_query_params(bm25 or Bm25Query(()), k1, b), "ids": list(chunk_ids)}
    vector_score = "NULL::float8"
    if embedding is not None:
        vector_score = "1 - (c.embedding <=> :embedding)"
        params["embedding"] = embedding
    bm25_score = "NULL::float8"
    if bm25 is not None:
        # Chunks that match no query term score 0.
        bm25_score = "coalesce(bm25.score, 0)"
    rows = await conn.execute(
        text(
            _QUERY_TERMS + ", bm25 AS ("  # noqa: S608 - constant SQL, values bound
            f"  SELECT p.chunk_id, {_BM25_SCORE} AS score"
            "  FROM weighted AS w CROSS JOIN params AS k"
            "  JOIN retriever.posting AS p ON p.term_hash = w.term_hash"
            "   AND p.chunk_id = ANY(CAST(:ids AS bigint[]))"
            "  GROUP BY p.chunk_id)"
            " SELECT c.id, s.name, c.ordinal, c.heading, c.text, s.metadata,"
            f"  {bm25_score} AS bm25_score, {vector_score} AS vector_score"
            " FROM retriever.chunk AS c JOIN retriever.source AS s ON s.id = c.source_id"
            " LEFT JOIN bm25 ON bm25.chunk_id = c.id"
            " WHERE c.id = ANY(CAST(:ids AS bigint[]))"
        ),
        params,
    )
    return {
        row.id: HitRow(
            row.id,
            row.name,
            row.ordinal,
            row.heading,
            row.text,
            row.metadata,
            None if row.bm25_score is None else float(row.bm25_score),
            None if row.vector_score is None else float(row.vector_score),
        )
        for row in rows
    }


async def feedback_terms(
    conn: AsyncConnection,
    feedback: Sequence[ScoredChunk],
    *,
    exclude: Bm25Query,
    limit: int,
) -> list[FeedbackTerm]:
    """Expansion terms from feedback chunks (relevance-model weights, RM3-style).

    weight(t) = Σ_c P(t|c) · P(c|q) · idf(t), with P(t|c) = tf/|c| and P(c|q)
    the chunk's BM25 score normalised over the feedback set. Terms of the
    query itself, and terms found in one chunk only, are left out.
    """
    if not feedback:
        return []
    total = sum(max(f.score, 0.0) for f in feedback) or 1.0
    rows = await conn.execute(
        text(
            _QUERY_TERMS + ","  # noqa: S608 - constant SQL, values bound
            " feedback AS ("
            "  SELECT c.term_count, fb.weight, u.term_hash, u.frequency"
            "  FROM unnest(CAST(:ids AS bigint[]), CAST(:weights AS float8[])) AS fb(id, weight)"
            "  JOIN retriever.chunk AS c ON c.id = fb.id,"
            "  unnest(c.term_hashes, c.term_frequencies) AS u(term_hash, frequency))"
            " SELECT t.term_hash, t.lexeme,"
            "  sum(f.weight * f.frequency / greatest(f.term_count, 1))"
            "   * ln(1 + (s.n - t.chunk_frequency + 0.5) / (t.chunk_frequency + 0.5)) AS weight"
            " FROM feedback AS f JOIN retriever.term AS t ON t.term_hash = f.term_hash"
            " CROSS JOIN stats AS s"
            " WHERE t.term_hash NOT IN (SELECT term_hash FROM query_terms)"
            "  AND t.chunk_frequency > 1"
            " GROUP BY t.term_hash, t.lexeme, t.chunk_frequency, s.n"
            " ORDER BY weight DESC, t.lexeme LIMIT :limit"
        ),
        {
            **_query_params(exclude),
            "ids": [f.chunk_id for f in feedback],
            "weights": [max(f.score, 0.0) / total for f in feedback],
            "limit": limit,
        },
    )
    return [FeedbackTerm(row.term_hash, row.lexeme, float(row.weight)) for row in rows]


async def mean_embedding(
    conn: AsyncConnection, chunk_ids: Sequence[int]
) -> npt.NDArray[np.float32] | None:
    """The mean of the chunks' embeddings (None for no chunks)."""
    if not chunk_ids:
        return None
    row = (
        await conn.execute(
            text(
                "SELECT avg(embedding) AS mean FROM retriever.chunk"
                " WHERE id = ANY(CAST(:ids AS bigint[]))"
            ),
            {"ids": list(chunk_ids)},
        )
    ).one()
    if row.mean is None:
        return None
    mean: npt.NDArray[np.float32] = row.mean.to_numpy().astype(np.float32)
    return mean


async def source_ids(conn: AsyncConnection, names: Sequence[str]) -> dict[str, int]:
    rows = await conn.execute(
        text("SELECT name, id FROM retriever.source WHERE name = ANY(CAST(:names AS text[]))"),
        {"names": list(names)},
    )
    return {row.name: row.id for row in rows}
