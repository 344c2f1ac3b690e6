"""Request and response bodies of ``POST /retrieve``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from retriever.ingest.validation import MAX_SOURCE_CHARS
from retriever.search.service import MODES, REWRITES

MAX_SOURCES = 100


class RetrieveRequest(BaseModel):
    query: str = Field(description="What to search for.", examples=["how do tokens expire"])
    top_k: int | None = Field(
        None, description="Hits to return, 1 to TOP_K_MAX (100); TOP_K_DEFAULT (5) if omitted."
    )
    mode: str | None = Field(
        None,
        description=(
            "`hybrid`: BM25 and vector results fused by reciprocal rank; `vector`: cosine "
            "similarity of embeddings; `bm25`: BM25 over the English-analysed text. "
            "Default: hybrid."
        ),
        json_schema_extra={"enum": list(MODES)},
    )
    rewrite: str | None = Field(
        None,
        description=(
            "`expansion`: add related terms (from the top BM25 hits offline, from the LLM "
            "when one is configured); `hyde`: search with an LLM-written answer passage; "
            "`multi_query`: search LLM-written rephrasings and fuse. `hyde` and "
            "`multi_query` need an LLM. Default: none."
        ),
        json_schema_extra={"enum": list(REWRITES)},
    )
    sources: list[Annotated[str, Field(max_length=MAX_SOURCE_CHARS)]] | None = Field(
        None,
        max_length=MAX_SOURCES,
        description=(
            f"Only search these sources (names as ingested): at most {MAX_SOURCES} names "
            f"of at most {MAX_SOURCE_CHARS} characters."
        ),
    )
    handle: str | None = Field(
        None,
        max_length=64,
        description=(
            "Only search this stored tool output (the `handle` of a truncated tool result), "
            "by keywords; its owner only. Not with `sources`."
        ),
    )


class BranchScores(BaseModel):
    bm25: float | None = Field(description="BM25 score for the (rewritten) query.")
    vector: float | None = Field(description="Cosine similarity to the query vector.")
    fused: float | None = Field(description="Reciprocal-rank fusion score, when lists were fused.")


class BranchRanks(BaseModel):
    bm25: int | None = Field(description="Rank among the BM25 candidates (1 = best).")
    vector: int | None = Field(description="Rank among the vector candidates (1 = best).")


class ChunkHit(BaseModel):
    chunk_id: int
    source: str
    text: str
    score: float = Field(description="The score the hits are ordered by (fused in hybrid mode).")
    heading: str = Field(description="Heading path of the chunk's section, '' if none.")
    ordinal: int = Field(description="Position of the chunk in its source, from 0.")
    metadata: dict[str, Any]
    scores: BranchScores
    ranks: BranchRanks


class RetrieveResponse(BaseModel):
    chunks: list[ChunkHit]
    mode: str
    rewrite: str
    rewritten: dict[str, Any] | None = Field(
        None, description="What the rewrite produced: expansion terms, passage or queries."
    )
    took_ms: float
