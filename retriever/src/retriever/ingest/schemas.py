"""Request and response bodies of ``POST /ingest``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class IngestRequest(BaseModel):
    source: str = Field(
        description="Stable name of the document, e.g. a path; ingesting it again replaces it.",
        examples=["docs/auth-v2.md"],
    )
    text: str = Field(
        description="The document, plain text or Markdown (headings guide the chunking).",
        examples=["# Auth v2\n\nTokens expire after one hour. Refresh them with ..."],
    )
    metadata: dict[str, Any] | None = Field(
        None, description="Any JSON object; returned with every hit of this source."
    )


class IngestResponse(BaseModel):
    status: Literal["ingested", "replaced", "unchanged"] = Field(
        description="What happened: a new source, new content for a known one, or nothing."
    )
    source: str
    chunks: int = Field(description="Chunks stored for the source (0 when unchanged).")
    previous_chunks: int | None = Field(
        None, description="Chunks the source had before, when it was replaced."
    )
    message: str = Field(examples=["ingested 8 chunks from docs/auth-v2.md"])
