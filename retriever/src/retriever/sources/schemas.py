"""Response bodies of ``/status`` and ``/sources``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field


class SourceRead(BaseModel):
    source: str
    chunks: int
    tokens: int = Field(description="Embedder tokens over all chunks.")
    content_hash: str = Field(description="SHA-256 of text, metadata and chunking settings.")
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class SourceList(BaseModel):
    sources: list[SourceRead]
    total: int = Field(description="Sources in the index, over all pages.")


class SourceDeleted(BaseModel):
    status: Literal["deleted"] = "deleted"
    source: str
    chunks: int = Field(description="Chunks removed.")
    message: str = Field(examples=["deleted docs/auth-v2.md and its 8 chunks"])


class EmbeddingModel(BaseModel):
    name: str
    dimensions: int


class Bm25Settings(BaseModel):
    k1: float
    b: float
    analyser: str = Field(description="Postgres text search configuration used for BM25.")
    average_chunk_terms: float = Field(description="Mean analysed length of a chunk (avgdl).")


class Chunking(BaseModel):
    chunk_tokens: int
    overlap_tokens: int


class StatusRead(BaseModel):
    documents: int = Field(description="Sources ingested.")
    chunks: int
    terms: int = Field(description="Distinct analysed terms in the BM25 index.")
    index_sizes: dict[str, int] = Field(description="On-disk sizes in bytes.")
    embedding_model: EmbeddingModel
    bm25: Bm25Settings
    chunking: Chunking
    llm: str = Field(description="LLM provider used for rewriting, or 'offline'.")
    last_ingest_at: datetime | None
