"""SQL of stored tool outputs: every read names the owner and skips what has expired.

BM25 within one handle is computed here, at query time, over that handle's chunks only:
``n`` and the mean length come from the handle row, ``n(t)`` from the chunks that hold
the term, found through the GIN index on ``terms``. The shared index's statistics are
never touched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from retriever.storage.models import TEXT_SEARCH_CONFIG


@dataclass(frozen=True)
class StoredHandle:
    handle: str
    owner: str
    tool_id: str | None
    total_bytes: int
    chunk_count: int
    total_terms: int
    metadata: dict[str, Any]
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True)
class HandleHit:
    ordinal: int
    text: str
    score: float


async def live_count(session: AsyncSession, owner: str) -> int:
    row = await session.execute(
        text("SELECT count(*) FROM retriever.handle WHERE owner = :owner AND expires_at > now()"),
        {"owner": owner},
    )
    return int(row.scalar_one())


async def insert(
    session: AsyncSession,
    *,
    handle: str,
    owner: str,
    tool_id: str | None,
    total_bytes: int,
    ttl_s: int,
    metadata: dict[str, Any],
    chunks: Sequence[str],
) -> StoredHandle:
    """Store the handle row and its chunks (analysed by the BM25 analyser) in one go."""
    await session.execute(
        text(
            "INSERT INTO retriever.handle (id, owner, tool_id, total_bytes, chunk_count,"
            " total_terms, metadata, expires_at)"
            " VALUES (:handle, :owner, :tool_id, :total_bytes, :chunks, 0,"
            " CAST(:metadata AS jsonb), now() + make_interval(secs => :ttl_s))"
        ),
        {
            "handle": handle,
            "owner": owner,
            "tool_id": tool_id,
            "total_bytes": total_bytes,
            "chunks": len(chunks),
            "metadata": json.dumps(metadata, default=str),
            "ttl_s": float(ttl_s),
        },
    )
    await session.execute(
        text(
            "INSERT INTO retriever.handle_chunk (handle_id, ordinal, text, terms, term_count)"  # noqa: S608 - constant SQL, values bound
            " SELECT :handle, c.ordinal - 1, c.body, v.terms,"
            "  (SELECT coalesce(sum(cardinality(t.positions)), 0) FROM unnest(v.terms) AS t)"
            " FROM unnest(CAST(:texts AS text[])) WITH ORDINALITY AS c(body, ordinal),"
            f" LATERAL (SELECT to_tsvector('{TEXT_SEARCH_CONFIG}', c.body) AS terms) AS v"
        ),
        {"handle": handle, "texts": list(chunks)},
    )
    row = (
        await session.execute(
            text(
                "UPDATE retriever.handle SET total_terms = (SELECT coalesce(sum(term_count), 0)"
                " FROM retriever.handle_chunk WHERE handle_id = :handle) WHERE id = :handle"
                " RETURNING id, owner, tool_id, total_bytes, chunk_count, total_terms, metadata,"
                " created_at, expires_at"
            ),
            {"handle": handle},
        )
    ).one()
    return _stored(row)


def _stored(row: Any) -> StoredHandle:
    return StoredHandle(
        row.id,
        row.owner,
        row.tool_id,
        int(row.total_bytes),
        int(row.chunk_count),
        int(row.total_terms),
        dict(row.metadata or {}),
        row.created_at,
        row.expires_at,
    )


async def find(session: AsyncSession, handle: str, owner: str) -> StoredHandle | None:
    """The handle if ``owner`` owns it and it has not expired; None otherwise."""
    row = (
        await session.execute(
            text(
                "SELECT id, owner, tool_id, total_bytes, chunk_count, total_terms, metadata,"
                " created_at, expires_at FROM retriever.handle"
                " WHERE id = :handle AND owner = :owner AND expires_at > now()"
            ),
            {"handle": handle, "owner": owner},
        )
    ).one_or_none()
    return None if row is None else _stored(row)


async def search(
    conn: AsyncConnection, stored: StoredHandle, query: str, *, limit: int, k1: float, b: float
) -> list[HandleHit]:
    """The ``limit`` chunks of one handle that best match ``query`` by BM25."""
    rows = await conn.execute(
        text(
            "WITH q AS ("  # noqa: S608 - constant SQL, values bound
            f"  SELECT DISTINCT t.lexeme FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', :query))"
            "   AS t),"
            # A lexeme in quotes is tsquery syntax as quote_literal writes it (no backslash).
            " tsq AS (SELECT CAST(string_agg(quote_literal(lexeme), ' | ') AS tsquery) AS body"
            "  FROM q WHERE position(chr(92) IN lexeme) = 0),"
            " hits AS ("
            "  SELECT c.ordinal, c.text, c.term_count, t.lexeme, cardinality(t.positions) AS tf"
            "  FROM retriever.handle_chunk AS c, unnest(c.terms) AS t"
            "  WHERE c.handle_id = :handle"
            "   AND c.terms @@ (SELECT body FROM tsq)"
            "   AND t.lexeme IN (SELECT lexeme FROM q)),"
            " df AS (SELECT lexeme, count(*) AS n_t FROM hits GROUP BY lexeme),"
            " k AS (SELECT CAST(:k1 AS float8) AS k1, CAST(:b AS float8) AS b,"
            "  CAST(:n AS float8) AS n, CAST(:avgdl AS float8) AS avgdl)"
            " SELECT h.ordinal, min(h.text) AS text, sum("
            "   ln(1 + (k.n - df.n_t + 0.5) / (df.n_t + 0.5)) * h.tf * (k.k1 + 1)"
            "   / (h.tf + k.k1 * (1 - k.b + k.b * h.term_count / k.avgdl))) AS score"
            " FROM hits AS h JOIN df USING (lexeme) CROSS JOIN k"
            " GROUP BY h.ordinal ORDER BY score DESC, h.ordinal LIMIT :limit"
        ),
        {
            "query": query,
            "handle": stored.handle,
            "n": float(max(stored.chunk_count, 1)),
            "avgdl": max(stored.total_terms / max(stored.chunk_count, 1), 1.0),
            "k1": float(k1),
            "b": float(b),
            "limit": limit,
        },
    )
    return [HandleHit(int(row.ordinal), row.text, float(row.score)) for row in rows]


async def delete(session: AsyncSession, handle: str, owner: str) -> bool:
    result = await session.execute(
        text("DELETE FROM retriever.handle WHERE id = :handle AND owner = :owner RETURNING id"),
        {"handle": handle, "owner": owner},
    )
    return result.one_or_none() is not None


async def delete_expired(session: AsyncSession) -> int:
    """Delete every expired handle (its chunks go with it); how many were deleted."""
    result = await session.execute(
        text("DELETE FROM retriever.handle WHERE expires_at <= now() RETURNING id")
    )
    return len(result.all())
