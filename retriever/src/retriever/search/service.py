"""Search: validate, rewrite, run the branches concurrently, fuse, and explain each hit.

In hybrid mode the BM25 statement is sent first and the query is embedded while
Postgres runs it; the vector statement follows on a second connection, so the
two branches overlap. Every statement runs alone on an autocommit connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from opentelemetry import trace
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from reach_common.embeddings import Embedder
from reach_common.llm.types import LLMProvider
from reach_common.storable import is_storable
from retriever.metrics import record_search
from retriever.search import repository
from retriever.search.errors import (
    EmptyQuery,
    InvalidQuery,
    QueryTooLong,
    TopKOutOfRange,
    UnknownMode,
    UnknownRewrite,
    UnknownSources,
)
from retriever.search.fusion import best_ranks, reciprocal_rank_fusion
from retriever.search.repository import Bm25Query, ScoredChunk
from retriever.search.rewrite import QueryPlan, Rewriter, VectorQuery
from retriever.settings import Settings

MODES = ("hybrid", "vector", "bm25")
REWRITES = ("none", "expansion", "hyde", "multi_query")

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class SearchQuery:
    text: str
    top_k: int
    mode: str = "hybrid"
    rewrite: str = "none"
    sources: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    source: str
    ordinal: int
    heading: str
    text: str
    metadata: dict[str, Any]
    score: float
    scores: dict[str, float | None]
    ranks: dict[str, int | None]


# Query text longer than this (characters, rephrasings included) is embedded in a worker
# thread, so the model run (a few ms for a short query, ~0.2 s at its 256-token cap)
# never holds the event loop long (docs/security.md, finding 21).
OFF_LOOP_CHARS = 500


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    rewritten: dict[str, Any] = field(default_factory=dict)


def query_text(raw: str, settings: Settings) -> str:
    """The text to search for: NUL characters dropped, trimmed, neither empty nor too
    long, and encodable (an unpaired surrogate is not)."""
    text = raw.replace("\x00", "").strip()
    if not text:
        raise EmptyQuery()
    if len(text) > settings.query_max_chars:
        raise QueryTooLong(len(text), settings.query_max_chars)
    if not is_storable(text):
        raise InvalidQuery("it contains unpaired surrogate characters")
    return text


def validate(query: SearchQuery, settings: Settings) -> SearchQuery:
    """Refuse bad input with a specific reason; returns the query with its text trimmed."""
    text = query_text(query.text, settings)
    if query.mode not in MODES:
        raise UnknownMode(query.mode, MODES)
    if query.rewrite not in REWRITES:
        raise UnknownRewrite(query.rewrite, REWRITES)
    if not 1 <= query.top_k <= settings.top_k_max:
        raise TopKOutOfRange(query.top_k, settings.top_k_max)
    return SearchQuery(text, query.top_k, query.mode, query.rewrite, query.sources)


def _unit(vector: Vector) -> Vector:
    norm = float(np.linalg.norm(vector))
    unit: Vector = (vector / max(norm, 1e-12)).astype(np.float32)
    return unit


class Searcher:
    def __init__(
        self,
        settings: Settings,
        embedder: Embedder,
        provider: LLMProvider | None,
        engine: AsyncEngine,
        tracer: trace.Tracer | None = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        self.engine = engine
        # Every search query is a single statement, so it needs no transaction:
        # autocommit saves a BEGIN and a ROLLBACK round trip per query.
        self.autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self.rewriter = Rewriter(settings, provider, self._connect)
        self.tracer = tracer or trace.get_tracer("retriever")

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[AsyncConnection]:
        async with self.autocommit.connect() as conn:
            yield conn

    async def search(self, query: SearchQuery, *, limit: int | None = None) -> SearchResult:
        """Hits for a validated query; ``limit`` (default ``top_k``) may exceed top_k_max."""
        limit = limit or query.top_k
        started = time.perf_counter()
        with self.tracer.start_as_current_span("retriever.search") as span:
            span.set_attributes({"retriever.mode": query.mode, "retriever.rewrite": query.rewrite})
            source_ids = await self._source_ids(query.sources)

            async def run_bm25(bm25_query: Bm25Query, count: int) -> list[ScoredChunk]:
                return await self._bm25(bm25_query, count, source_ids)

            with self.tracer.start_as_current_span("retriever.rewrite"):
                plan = await self.rewriter.plan(query.text, query.rewrite, run_bm25)
            vectors, bm25_lists, vector_lists = await self._candidates(
                query, plan, limit, source_ids
            )
            lists: list[list[ScoredChunk]] = [*bm25_lists, *vector_lists]
            if len(lists) == 1:
                ranked = lists[0][:limit]
            else:
                ranked = reciprocal_rank_fusion(lists, k=self.settings.rrf_k)[:limit]
            hits = await self._explain(
                ranked,
                plan,
                bm25_lists,
                vector_lists,
                vectors[0] if vectors else None,
                fused=len(lists) > 1,
            )
            span.set_attribute("retriever.hits", len(hits))
            record_search(query.mode, started)
            return SearchResult(hits, plan.details)

    async def _candidates(
        self, query: SearchQuery, plan: QueryPlan, limit: int, source_ids: list[int] | None
    ) -> tuple[list[Vector], list[list[ScoredChunk]], list[list[ScoredChunk]]]:
        """The plan's BM25 and vector searches, run together: ``(query vectors, BM25 hit
        lists, vector hit lists)``."""
        hybrid = query.mode == "hybrid"
        use_bm25 = query.mode in ("hybrid", "bm25")
        use_vector = query.mode in ("hybrid", "vector")
        bm25_count = self.settings.hybrid_bm25_candidates if hybrid else limit
        vector_count = self.settings.hybrid_vector_candidates if hybrid else limit
        bm25_task = (
            asyncio.ensure_future(
                asyncio.gather(*(self._bm25(q, bm25_count, source_ids) for q in plan.bm25))
            )
            if use_bm25
            else None
        )
        # Let the BM25 statement go out, then embed on this thread while Postgres
        # works: a query is a few milliseconds of onnxruntime, and on a busy machine
        # waking a worker thread for it cost more (p50 11 vs 14 ms hybrid, SciFact).
        # A long one (up to 256 tokens: ~0.2 s) is embedded off the event loop.
        try:
            await asyncio.sleep(0)
            if not use_vector:
                vectors = []
            elif sum(len(t) for q in plan.vectors for t in q.texts) > OFF_LOOP_CHARS:
                vectors = await asyncio.to_thread(self._vectors, plan.vectors)
            else:
                vectors = self._vectors(plan.vectors)
            vector_lists = list(
                await asyncio.gather(*(self._vector(v, vector_count, source_ids) for v in vectors))
            )
            bm25_lists = list(await bm25_task) if bm25_task is not None else []
        finally:
            if bm25_task is not None and not bm25_task.done():
                bm25_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await bm25_task
        return vectors, bm25_lists, vector_lists

    async def _bm25(
        self, bm25_query: Bm25Query, count: int, source_ids: list[int] | None
    ) -> list[ScoredChunk]:
        with self.tracer.start_as_current_span("retriever.bm25"):
            async with self._connect() as conn:
                return await repository.bm25_search(
                    conn,
                    bm25_query,
                    limit=count,
                    k1=self.settings.bm25_k1,
                    b=self.settings.bm25_b,
                    source_ids=source_ids,
                    term_postings=self.settings.bm25_term_postings or None,
                )

    async def _vector(
        self, vector: Vector, count: int, source_ids: list[int] | None
    ) -> list[ScoredChunk]:
        with self.tracer.start_as_current_span("retriever.vector"):
            if count <= self.settings.hnsw_ef_search:
                async with self._connect() as conn:
                    return await repository.vector_search(
                        conn, vector, limit=count, source_ids=source_ids
                    )
            # HNSW returns at most ef_search rows: widen it for this query only.
            async with self.engine.connect() as conn, conn.begin():
                await conn.execute(text(f"SET LOCAL hnsw.ef_search = {count:d}"))
                return await repository.vector_search(
                    conn, vector, limit=count, source_ids=source_ids
                )

    async def _source_ids(self, names: Sequence[str] | None) -> list[int] | None:
        if names is None:
            return None
        # A name Postgres cannot store (a NUL, an unpaired surrogate) cannot exist either.
        queryable = [n for n in names if is_storable(n)]
        async with self._connect() as conn:
            found = await repository.source_ids(conn, queryable) if queryable else {}
        missing = [n for n in names if n not in found]
        if missing:
            raise UnknownSources(missing)
        return list(found.values())

    def _vectors(self, queries: Sequence[VectorQuery]) -> list[Vector]:
        texts = [t for q in queries for t in q.texts]
        embedded = self.embedder.embed(texts)
        vectors, offset = [], 0
        for q in queries:
            vector = embedded[offset : offset + len(q.texts)].mean(axis=0)
            offset += len(q.texts)
            if q.feedback is not None and q.feedback_weight:
                vector = vector + q.feedback_weight * q.feedback
            vectors.append(_unit(vector))
        return vectors

    async def _explain(
        self,
        ranked: list[ScoredChunk],
        plan: QueryPlan,
        bm25_lists: list[list[ScoredChunk]],
        vector_lists: list[list[ScoredChunk]],
        vector: Vector | None,
        *,
        fused: bool,
    ) -> list[Hit]:
        """Hit rows, each with its score in every branch that ran and its rank there.

        Branch scores are read for the primary query, so a hit that only one
        branch found still shows what the other branch thinks of it.
        """
        async with self._connect() as conn:
            rows = await repository.hit_rows(
                conn,
                [r.chunk_id for r in ranked],
                bm25=plan.bm25[0] if bm25_lists else None,
                embedding=vector if vector_lists else None,
                k1=self.settings.bm25_k1,
                b=self.settings.bm25_b,
            )
        bm25_ranks, vector_ranks = best_ranks(bm25_lists), best_ranks(vector_lists)
        hits = []
        for scored in ranked:
            row = rows.get(scored.chunk_id)
            if row is None:  # deleted between the search and this read
                continue
            hits.append(
                Hit(
                    scored.chunk_id,
                    row.source,
                    row.ordinal,
                    row.heading,
                    row.text,
                    row.metadata,
                    scored.score,
                    {
                        "bm25": row.bm25,
                        "vector": row.vector,
                        "fused": scored.score if fused else None,
                    },
                    {
                        "bm25": bm25_ranks.get(scored.chunk_id),
                        "vector": vector_ranks.get(scored.chunk_id),
                    },
                )
            )
        return hits
