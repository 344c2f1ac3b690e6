"""``/handles``: tool outputs kept for one caller, and ``POST /retrieve`` within one of them."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request, Response

from reach_common.auth.caller import Caller
from reach_common.storable import is_storable
from retriever.deps import HandleStoreDep, ReaderDep, SettingsDep
from retriever.handles.access import handle_owner
from retriever.handles.errors import HandleSearchUnsupported, InvalidHandleInput
from retriever.handles.repository import StoredHandle
from retriever.handles.schemas import HandleCreate, HandleRead
from retriever.handles.service import HandleStore
from retriever.ingest.validation import check_metadata
from retriever.search.errors import TopKOutOfRange
from retriever.search.schemas import (
    BranchRanks,
    BranchScores,
    ChunkHit,
    RetrieveRequest,
    RetrieveResponse,
)
from retriever.search.service import query_text
from retriever.settings import Settings

router = APIRouter(tags=["handles"])

_OWNER_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "`unauthenticated`: no caller to own the output."},
    403: {"description": "`insufficient_permission`: X-Reach-On-Behalf-Of from a non-delegate."},
}


def _read(stored: StoredHandle) -> HandleRead:
    return HandleRead(
        handle=stored.handle,
        tool_id=stored.tool_id,
        total_bytes=stored.total_bytes,
        chunks=stored.chunk_count,
        created_at=stored.created_at,
        expires_at=stored.expires_at,
    )


@router.post(
    "/handles",
    status_code=201,
    response_model=HandleRead,
    responses={
        **_OWNER_ERRORS,
        413: {"description": "`metadata_too_large`: over METADATA_MAX_BYTES as JSON."},
        422: {"description": "`invalid_handle_input`: NUL or unpaired surrogates."},
        429: {"description": "`too_many_handles`."},
    },
)
async def store_output(
    body: HandleCreate,
    request: Request,
    store: HandleStoreDep,
    settings: SettingsDep,
    caller: ReaderDep,
) -> HandleRead:
    """Keep a tool output for its caller and answer its handle.

    The output is indexed for keyword search (BM25, one record per JSON path) and
    belongs to the caller, or, when a caller holding one of RETRIEVER_DELEGATE_ROLES
    (the gateway's service key) sends `X-Reach-On-Behalf-Of`, to the user named there.
    Only its owner can search it (`POST /retrieve` with `handle`); it expires after
    `ttl_s` (HANDLE_TTL_S by default, at most HANDLE_MAX_TTL_S).
    """
    if body.tool_id is not None and not is_storable(body.tool_id):
        raise InvalidHandleInput("tool_id contains NUL or unpaired surrogate characters")
    if body.metadata:
        check_metadata(body.metadata, settings, InvalidHandleInput)
    owner = handle_owner(request.headers, caller, settings.retriever_delegate_roles)
    stored = await store.store(
        owner, body.output, tool_id=body.tool_id, ttl_s=body.ttl_s, metadata=body.metadata
    )
    return _read(stored)


@router.get("/handles/{handle}", response_model=HandleRead, responses=_OWNER_ERRORS)
async def read_handle(
    handle: str, request: Request, store: HandleStoreDep, settings: SettingsDep, caller: ReaderDep
) -> HandleRead:
    """What a handle holds (size, chunks, expiry); 404 `handle_not_found` for anyone but
    its owner, and once it has expired."""
    owner = handle_owner(request.headers, caller, settings.retriever_delegate_roles)
    return _read(await store.get(owner, handle))


@router.delete("/handles/{handle}", status_code=204, responses=_OWNER_ERRORS)
async def delete_handle(
    handle: str, request: Request, store: HandleStoreDep, settings: SettingsDep, caller: ReaderDep
) -> Response:
    """Delete a stored output before it expires (its owner only)."""
    owner = handle_owner(request.headers, caller, settings.retriever_delegate_roles)
    await store.delete(owner, handle)
    return Response(status_code=204)


async def retrieve_from_handle(
    body: RetrieveRequest,
    request: Request,
    caller: Caller,
    store: HandleStore,
    settings: Settings,
) -> RetrieveResponse:
    """``POST /retrieve`` with ``handle``: BM25 over that one stored output, its owner only."""
    started = time.perf_counter()
    assert body.handle is not None
    if body.sources is not None:
        raise HandleSearchUnsupported("Send `handle` or `sources`, not both.")
    if body.mode not in (None, "hybrid", "bm25") or body.rewrite not in (None, "none"):
        raise HandleSearchUnsupported(
            "A stored tool output is searched by keywords (BM25): leave `mode` and "
            "`rewrite` out, or send mode `bm25`."
        )
    query = query_text(body.query, settings)
    top_k = settings.top_k_default if body.top_k is None else body.top_k
    if not 1 <= top_k <= settings.top_k_max:
        raise TopKOutOfRange(top_k, settings.top_k_max)
    owner = handle_owner(request.headers, caller, settings.retriever_delegate_roles)
    stored, hits = await store.search(owner, body.handle, query, top_k)
    metadata = {**stored.metadata, "tool_id": stored.tool_id, "handle": stored.handle}
    return RetrieveResponse(
        chunks=[
            ChunkHit(
                chunk_id=hit.ordinal,
                source=stored.handle,
                text=hit.text,
                score=hit.score,
                heading="",
                ordinal=hit.ordinal,
                metadata=metadata,
                scores=BranchScores(bm25=hit.score, vector=None, fused=None),
                ranks=BranchRanks(bm25=rank, vector=None),
            )
            for rank, hit in enumerate(hits, start=1)
        ],
        mode="bm25",
        rewrite="none",
        took_ms=round((time.perf_counter() - started) * 1000, 2),
    )
