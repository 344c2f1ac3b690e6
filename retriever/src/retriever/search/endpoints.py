"""``POST /retrieve``: search the ingested chunks."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request

from retriever.deps import HandleStoreDep, ReaderDep, SearcherDep, SettingsDep
from retriever.handles.endpoints import retrieve_from_handle
from retriever.search.errors import InvalidSources
from retriever.search.schemas import (
    BranchRanks,
    BranchScores,
    ChunkHit,
    RetrieveRequest,
    RetrieveResponse,
)
from retriever.search.service import SearchQuery, validate

router = APIRouter(tags=["search"])


@router.post(
    "/retrieve",
    response_model=RetrieveResponse,
    responses={
        400: {"description": "`llm_unavailable`: hyde or multi_query without an LLM."},
        401: {"description": "`unauthenticated` (strict mode) or `invalid_credential`."},
        404: {
            "description": (
                "`source_not_found`: a name in `sources` is unknown; `handle_not_found`: "
                "no such stored output for this caller (or it expired)."
            )
        },
        413: {"description": "`query_too_long`."},
        422: {
            "description": (
                "`empty_query`, `invalid_query`, `unknown_mode`, `unknown_rewrite`, "
                "`top_k_out_of_range`, `invalid_sources`, `invalid_handle_search`; "
                "`invalid_request` for more than 100 `sources` or a name over 512 characters."
            )
        },
    },
)
async def retrieve(
    body: RetrieveRequest,
    request: Request,
    searcher: SearcherDep,
    handles: HandleStoreDep,
    settings: SettingsDep,
    caller: ReaderDep,
) -> RetrieveResponse:
    """The chunks that best match a query, best first, each with its per-branch scores.

    `hybrid` (the default) fuses the BM25 and vector candidate lists
    (HYBRID_BM25_CANDIDATES, HYBRID_VECTOR_CANDIDATES) by reciprocal rank with
    constant RRF_K; each hit reports its BM25 score and cosine similarity for
    the query, its rank in each list, and the fused score. `sources` limits the
    search to named sources. `handle` searches one stored tool output instead
    (keywords only; see docs/tool-outputs.md), for its owner only.
    """
    if body.handle is not None:
        return await retrieve_from_handle(body, request, caller, handles, settings)
    started = time.perf_counter()
    if body.sources is not None and not body.sources:
        raise InvalidSources()
    query = validate(
        SearchQuery(
            body.query,
            settings.top_k_default if body.top_k is None else body.top_k,
            "hybrid" if body.mode is None else body.mode,
            "none" if body.rewrite is None else body.rewrite,
            tuple(dict.fromkeys(body.sources)) if body.sources is not None else None,
        ),
        settings,
    )
    result = await searcher.search(query)
    return RetrieveResponse(
        chunks=[
            ChunkHit(
                chunk_id=hit.chunk_id,
                source=hit.source,
                text=hit.text,
                score=hit.score,
                heading=hit.heading,
                ordinal=hit.ordinal,
                metadata=hit.metadata,
                scores=BranchScores(**hit.scores),
                ranks=BranchRanks(**hit.ranks),
            )
            for hit in result.hits
        ],
        mode=query.mode,
        rewrite=query.rewrite,
        rewritten=result.rewritten or None,
        took_ms=round((time.perf_counter() - started) * 1000, 2),
    )
