"""Reads about sources and the index as a whole."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from retriever.storage.models import Source


@dataclass(frozen=True)
class IndexStatus:
    sources: int
    chunks: int
    terms: int
    total_terms: int
    last_ingest_at: datetime | None
    sizes: dict[str, int]


async def list_sources(
    session: AsyncSession, *, limit: int, offset: int
) -> tuple[list[Source], int]:
    total = await session.scalar(select(func.count()).select_from(Source))
    rows = await session.scalars(select(Source).order_by(Source.name).limit(limit).offset(offset))
    return list(rows), int(total or 0)


async def index_status(session: AsyncSession) -> IndexStatus:
    row = (
        await session.execute(
            text(
                "SELECT (SELECT count(*) FROM retriever.source) AS sources,"
                " (SELECT count(*) FROM retriever.term) AS terms,"
                " s.chunk_count, s.total_terms, s.last_ingest_at,"
                " pg_relation_size('retriever.chunk') AS chunk_table,"
                " pg_relation_size('retriever.ix_chunk_embedding_hnsw') AS hnsw_index,"
                " pg_total_relation_size('retriever.posting') AS postings,"
                " pg_total_relation_size('retriever.term') AS term_table"
                " FROM (SELECT 1) AS one"
                " LEFT JOIN retriever.corpus_stats AS s ON s.id = 1"
            )
        )
    ).one()
    return IndexStatus(
        sources=row.sources,
        chunks=int(row.chunk_count or 0),
        terms=row.terms,
        total_terms=int(row.total_terms or 0),
        last_ingest_at=row.last_ingest_at,
        sizes={
            "chunk_table_bytes": row.chunk_table,
            "hnsw_index_bytes": row.hnsw_index,
            "bm25_postings_bytes": row.postings,
            "bm25_terms_bytes": row.term_table,
        },
    )
