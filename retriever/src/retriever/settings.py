"""Retriever settings, from the environment."""

from __future__ import annotations

from typing import Any, Self

from pydantic import AliasChoices, Field, field_validator, model_validator

from reach_common.embeddings import MAX_TOKENS
from reach_common.settings import CommonSettings, LLMSettings, StringList, string_list

# The model sees at most MAX_TOKENS tokens, two of which are [CLS] and [SEP].
MAX_CHUNK_TOKENS = MAX_TOKENS - 2

# INGEST_MAX_CHARS (2,000,000) characters take at most 4 bytes each as UTF-8 JSON and 6
# when a client escapes them as \uXXXX; 16 MiB leaves 8 bytes a character.
DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024


class Settings(CommonSettings, LLMSettings):
    service_name: str = "retriever"
    port: int = Field(
        8082, validation_alias=AliasChoices("RETRIEVER_PORT", "PORT"), description="HTTP port."
    )
    max_body_bytes: int = Field(
        DEFAULT_MAX_BODY_BYTES,
        ge=1,
        description=(
            "Largest request body accepted (413 `payload_too_large`). 16 MiB, not the common "
            "1 MiB: an ingest of INGEST_MAX_CHARS characters must fit, even \\u-escaped."
        ),
    )

    # --- auth ----------------------------------------------------------------------------------
    retriever_writer_roles: StringList = Field(
        default_factory=lambda: ["admin", "retriever_writer"],
        min_length=1,
        description=(
            "Roles that may ingest and delete sources, in both auth modes (comma-separated "
            "or a JSON list). Reading needs an authenticated caller in strict mode only."
        ),
    )

    retriever_delegate_roles: StringList = Field(
        default_factory=lambda: ["retriever_writer"],
        min_length=1,
        description=(
            "Roles that may act for another user with X-Reach-On-Behalf-Of: store and search "
            "that user's tool outputs (`/handles`). The gateway's service key holds one; give "
            "them to service keys only."
        ),
    )

    # --- stored tool outputs (handles) ---------------------------------------------------------
    handle_ttl_s: int = Field(
        86400, ge=1, description="How long a stored tool output is kept when the caller says not."
    )
    handle_max_ttl_s: int = Field(
        604800, ge=1, description="Longest a stored tool output may be kept."
    )
    handle_chunk_chars: int = Field(
        1500, ge=200, le=20000, description="Largest chunk of a stored tool output, in characters."
    )
    handle_max_per_owner: int = Field(
        200, ge=1, description="Stored tool outputs one user may hold at once (429 above)."
    )
    handle_sweep_s: float = Field(
        60.0, gt=0, description="How often expired tool outputs are deleted."
    )

    # --- ingest --------------------------------------------------------------------------------
    chunk_tokens: int = Field(
        MAX_CHUNK_TOKENS,
        ge=32,
        le=MAX_CHUNK_TOKENS,
        description=(
            "Largest chunk, in the embedder's tokens, heading line included. At most "
            f"{MAX_CHUNK_TOKENS}: the model reads no further."
        ),
    )
    chunk_overlap_tokens: int = Field(
        32,
        ge=0,
        description="Tokens of whole sentences repeated from the end of one chunk in the next.",
    )
    ingest_max_chars: int = Field(
        2_000_000, ge=1, description="Longest text one ingest accepts (413 above it)."
    )
    metadata_max_bytes: int = Field(
        16_384,
        ge=2,
        description="Largest metadata object (as JSON) one ingest or stored tool output accepts.",
    )
    embed_batch_size: int = Field(
        8, ge=1, description="Chunks per onnxruntime run (texts are sorted by length first)."
    )

    # --- search --------------------------------------------------------------------------------
    bm25_k1: float = Field(0.9, ge=0, description="BM25 term-frequency saturation.")
    bm25_b: float = Field(0.4, ge=0, le=1, description="BM25 length normalisation (0: none).")
    bm25_term_postings: int = Field(
        2000,
        ge=0,
        description=(
            "Most postings one query term adds to the BM25 candidates (highest term"
            " frequency first); the best candidates are then scored exactly. 0: every posting."
        ),
    )
    rrf_k: float = Field(
        20,
        gt=0,
        description=(
            "Reciprocal-rank fusion constant k (20: best of 10-100 on SciFact's train "
            "queries by a small margin; 60 is the usual default)."
        ),
    )
    hybrid_bm25_candidates: int = Field(
        100, ge=1, le=1000, description="BM25 hits fused per hybrid search."
    )
    hybrid_vector_candidates: int = Field(
        100, ge=1, le=1000, description="Vector hits fused per hybrid search."
    )
    hnsw_ef_search: int = Field(
        100, ge=1, le=1000, description="HNSW search breadth (at least the hits asked for)."
    )
    top_k_default: int = Field(5, ge=1, description="Hits returned when top_k is not given.")
    top_k_max: int = Field(100, ge=1, description="Largest top_k a request may ask for.")
    query_max_chars: int = Field(4000, ge=1, description="Longest query accepted.")

    # --- query rewriting -----------------------------------------------------------------------
    expansion_feedback_chunks: int = Field(
        8, ge=1, description="Top BM25 hits read for pseudo-relevance feedback."
    )
    expansion_terms: int = Field(10, ge=1, description="Terms added by feedback expansion.")
    expansion_term_weight: float = Field(
        0.1,
        ge=0,
        description="BM25 weight of the best feedback term, relative to a query term.",
    )
    expansion_vector_weight: float = Field(
        0.5, ge=0, description="Rocchio weight of the feedback chunks' mean embedding."
    )
    llm_expansion_weight: float = Field(
        0.5,
        ge=0,
        description="BM25 weight of LLM-written expansion terms and HyDE passages.",
    )
    multi_query_count: int = Field(3, ge=1, le=8, description="Rephrasings asked of the LLM.")
    rewrite_max_tokens: int = Field(400, ge=32, description="Token limit of a rewrite answer.")

    @field_validator("retriever_writer_roles", "retriever_delegate_roles", mode="before")
    @classmethod
    def _split_roles(cls, value: Any) -> Any:
        return string_list(value)

    @model_validator(mode="after")
    def _overlap_below_chunk(self) -> Self:
        if self.chunk_overlap_tokens >= self.chunk_tokens // 2:
            raise ValueError(
                f"CHUNK_OVERLAP_TOKENS ({self.chunk_overlap_tokens}) must be less than half "
                f"of CHUNK_TOKENS ({self.chunk_tokens})"
            )
        if self.top_k_default > self.top_k_max:
            raise ValueError("TOP_K_DEFAULT must not exceed TOP_K_MAX")
        return self
