"""The retriever's ``create_app`` factory and lifespan."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import FastAPI
from opentelemetry import trace
from pgvector.asyncpg import register_vector
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from reach_common.embeddings import Embedder
from reach_common.llm.factory import check_settings, create_provider
from reach_common.service import build_app, service_resources
from retriever.handles.endpoints import router as handles_router
from retriever.handles.service import HandlePolicy, HandleStore
from retriever.ingest.endpoints import router as ingest_router
from retriever.ingest.service import Ingestor
from retriever.metrics import RetrieverMetrics
from retriever.search.endpoints import router as search_router
from retriever.search.service import Searcher
from retriever.settings import Settings
from retriever.sources.endpoints import router as sources_router

log = structlog.get_logger(__name__)


def configure_connections(engine: AsyncEngine, settings: Settings) -> None:
    """Set up every new connection of ``engine`` for the retriever's queries.

    pgvector values travel in binary. JIT compilation is off: it costs more
    than any of these queries. ``hnsw.ef_search`` is the HNSW search breadth,
    and iterative scans let a filtered vector search read on until it has
    enough rows. BM25 aggregates every matching chunk in memory, hence
    ``work_mem``.
    """
    statement = (
        "SET jit = off; SET work_mem = '32MB';"
        f" SET hnsw.ef_search = {settings.hnsw_ef_search:d};"
        " SET hnsw.iterative_scan = strict_order"
    )

    async def setup(conn: Any) -> None:
        await register_vector(conn)
        await conn.execute(statement)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.run_async(setup)


def build_handle_store(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession], tracer: trace.Tracer
) -> HandleStore:
    """Stored tool outputs (``/handles``), with their limits from the settings."""
    policy = HandlePolicy(
        ttl_s=settings.handle_ttl_s,
        max_ttl_s=settings.handle_max_ttl_s,
        chunk_chars=settings.handle_chunk_chars,
        max_per_owner=settings.handle_max_per_owner,
        bm25_k1=settings.bm25_k1,
        bm25_b=settings.bm25_b,
    )
    return HandleStore(sessionmaker, policy, tracer)


def build_ingestor(
    settings: Settings, embedder: Embedder, tracer: trace.Tracer | None = None
) -> Ingestor:
    return Ingestor(
        embedder,
        chunk_tokens=settings.chunk_tokens,
        overlap_tokens=settings.chunk_overlap_tokens,
        embed_batch_size=settings.embed_batch_size,
        tracer=tracer,
    )


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    settings: Settings = app.state.settings
    async with service_resources(app) as resources:
        configure_connections(resources.engine, settings)
        embedder: Embedder = app.state.embedder or await asyncio.to_thread(
            Embedder.configured, settings, int8_default=False
        )
        provider = create_provider(settings)
        searcher = Searcher(
            settings,
            embedder,
            provider,
            resources.engine,
            resources.telemetry.tracer("retriever"),
        )
        handle_store = build_handle_store(
            settings, resources.sessionmaker, resources.telemetry.tracer("retriever")
        )
        sweeper = asyncio.create_task(handle_store.sweep_forever(settings.handle_sweep_s))
        log.info(
            "retriever_ready",
            llm=provider.name if provider else "offline",
            embedding_model=embedder.model_name,
        )
        try:
            yield {
                **resources.state(),
                "embedder": embedder,
                "provider": provider,
                "ingestor": build_ingestor(
                    settings, embedder, resources.telemetry.tracer("retriever")
                ),
                "searcher": searcher,
                "handle_store": handle_store,
            }
        finally:
            sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sweeper
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()


def create_app(settings: Settings | None = None, *, embedder: Embedder | None = None) -> FastAPI:
    """The retriever app. ``embedder`` lets tests share one loaded model between apps."""
    settings = settings or Settings()
    # Refuse to start on an unusable LLM configuration, not at the first rewrite.
    check_settings(settings)
    app = build_app(
        settings,
        title="Reach retriever",
        description=(
            "Ingest documents and search them: pgvector (HNSW, cosine) and BM25 computed "
            "inside Postgres, fused by reciprocal rank; optional LLM query rewriting."
        ),
        lifespan=lifespan,
    )
    app.state.embedder = embedder
    app.state.metrics.family(RetrieverMetrics)
    app.include_router(ingest_router)
    app.include_router(search_router)
    app.include_router(sources_router)
    app.include_router(handles_router)
    return app
