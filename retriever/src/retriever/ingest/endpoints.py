"""``POST /ingest``: add, replace or skip one document."""

from __future__ import annotations

from fastapi import APIRouter, Response

from retriever.deps import IngestorDep, SessionmakerDep, SettingsDep, WriterDep
from retriever.ingest.schemas import IngestRequest, IngestResponse
from retriever.ingest.validation import check_document

router = APIRouter(tags=["ingest"])


@router.post(
    "/ingest",
    response_model=IngestResponse,
    responses={
        201: {"description": "A new source was stored."},
        401: {"description": "`unauthenticated`: no caller (or `invalid_credential`)."},
        403: {"description": "`insufficient_permission`: no role of RETRIEVER_WRITER_ROLES."},
        413: {
            "description": (
                "`text_too_large`, `metadata_too_large`, or `payload_too_large` (a body over "
                "MAX_BODY_BYTES)."
            )
        },
        422: {"description": "`empty_text`, `invalid_text` or `invalid_source`."},
    },
)
async def ingest_document(
    body: IngestRequest,
    response: Response,
    ingestor: IngestorDep,
    sessionmaker: SessionmakerDep,
    settings: SettingsDep,
    _caller: WriterDep,
) -> IngestResponse:
    """Index one document under a source name.

    The text is split into chunks along Markdown headings and paragraphs
    (CHUNK_TOKENS embedder tokens at most, CHUNK_OVERLAP_TOKENS of overlap),
    embedded, and indexed for BM25. A source sent again with the same text and
    metadata is skipped (`unchanged`, nothing written); with new content its old
    chunks are replaced in one transaction (`replaced`). A new source answers 201.
    Needs a caller with one of RETRIEVER_WRITER_ROLES.
    """
    document = check_document(body.source, body.text, body.metadata, settings)
    [outcome] = await ingestor.ingest(sessionmaker, [document])
    if outcome.status == "ingested":
        response.status_code = 201
    return IngestResponse(
        status=outcome.status,
        source=outcome.source,
        chunks=outcome.chunks,
        previous_chunks=outcome.previous_chunks,
        message=outcome.message,
    )
