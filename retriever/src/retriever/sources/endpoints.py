"""``GET /status``, ``GET /sources`` and ``DELETE /sources/{source}``."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from fastapi import APIRouter, Path, Query

from reach_common.db import SessionDep
from reach_common.paging import MAX_OFFSET
from retriever.deps import EmbedderDep, ProviderDep, ReaderDep, SettingsDep, WriterDep
from retriever.sources import repository
from retriever.sources.errors import SourceNotFound
from retriever.sources.schemas import (
    Bm25Settings,
    Chunking,
    EmbeddingModel,
    SourceDeleted,
    SourceList,
    SourceRead,
    StatusRead,
)
from retriever.storage import repository as storage
from retriever.storage.models import TEXT_SEARCH_CONFIG

log = structlog.get_logger(__name__)

router = APIRouter(tags=["sources"])


_READ_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "`unauthenticated` (strict mode) or `invalid_credential`."}
}


@router.get("/status", response_model=StatusRead, responses=_READ_ERRORS)
async def index_status(
    session: SessionDep,
    settings: SettingsDep,
    embedder: EmbedderDep,
    provider: ProviderDep,
    _caller: ReaderDep,
) -> StatusRead:
    """What the index holds: documents, chunks, terms, on-disk sizes, the embedding
    model, the BM25 and chunking settings, the LLM used for rewriting, and when the
    last ingest happened."""
    status = await repository.index_status(session)
    return StatusRead(
        documents=status.sources,
        chunks=status.chunks,
        terms=status.terms,
        index_sizes=status.sizes,
        embedding_model=EmbeddingModel(name=embedder.model_name, dimensions=embedder.dimensions),
        bm25=Bm25Settings(
            k1=settings.bm25_k1,
            b=settings.bm25_b,
            analyser=TEXT_SEARCH_CONFIG,
            average_chunk_terms=round(status.total_terms / status.chunks, 2)
            if status.chunks
            else 0.0,
        ),
        chunking=Chunking(
            chunk_tokens=settings.chunk_tokens, overlap_tokens=settings.chunk_overlap_tokens
        ),
        llm=f"{provider.name}:{provider.model}" if provider is not None else "offline",
        last_ingest_at=status.last_ingest_at,
    )


@router.get("/sources", response_model=SourceList, responses=_READ_ERRORS)
async def list_sources(
    session: SessionDep,
    _caller: ReaderDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="Sources per page.")] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Sources to skip.")] = 0,
) -> SourceList:
    """Ingested sources in name order, with chunk counts, content hash and metadata."""
    sources, total = await repository.list_sources(session, limit=limit, offset=offset)
    return SourceList(
        sources=[
            SourceRead(
                source=s.name,
                chunks=s.chunk_count,
                tokens=s.token_count,
                content_hash=s.content_hash,
                metadata=s.metadata_,
                created_at=s.created_at,
                updated_at=s.updated_at,
            )
            for s in sources
        ],
        total=total,
    )


@router.delete(
    "/sources/{source:path}",
    response_model=SourceDeleted,
    responses={
        401: {"description": "`unauthenticated`: no caller (or `invalid_credential`)."},
        403: {"description": "`insufficient_permission`: no role of RETRIEVER_WRITER_ROLES."},
        404: {"description": "`source_not_found`."},
    },
)
async def delete_source(
    source: Annotated[
        str, Path(description="The source name, percent-encoded (a `/` may stay as is).")
    ],
    session: SessionDep,
    caller: WriterDep,
) -> SourceDeleted:
    """Remove a source and its chunks; BM25 statistics (chunk count, lengths, term
    frequencies) are updated in the same transaction. Unknown source: 404
    `source_not_found`. Needs a caller with one of RETRIEVER_WRITER_ROLES."""
    if "\x00" in source:
        raise SourceNotFound(source)
    removed = await storage.delete_source(session, source)
    if removed is None:
        raise SourceNotFound(source)
    log.info(
        "source_deleted",
        source=removed.name,
        chunks=removed.chunk_count,
        user_id=caller.user_id,
        via=caller.via,
    )
    return SourceDeleted(
        source=removed.name,
        chunks=removed.chunk_count,
        message=f"deleted {removed.name} ({removed.chunk_count} chunks)",
    )
