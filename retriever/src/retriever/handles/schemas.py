"""Request and response bodies of ``/handles``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class HandleCreate(BaseModel):
    output: Any = Field(description="The tool output to keep: any JSON value.")
    tool_id: str | None = Field(None, max_length=200, description="The tool that produced it.")
    ttl_s: int | None = Field(
        None, ge=1, description="Seconds until it expires; HANDLE_TTL_S if omitted."
    )
    metadata: dict[str, Any] | None = Field(
        None, description="Any JSON object; returned with every hit."
    )


class HandleRead(BaseModel):
    handle: str = Field(examples=["out_3f9c2a0d4b1e4f6a8c7d9e0f1a2b3c4d"])
    tool_id: str | None
    total_bytes: int = Field(description="Size of the output as compact UTF-8 JSON.")
    chunks: int
    created_at: datetime
    expires_at: datetime
