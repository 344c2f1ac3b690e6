"""What the memory endpoints return."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from reach_common.errors import current_trace_id


class MemoryRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    text: str
    kind: str = Field(description="explicit | preference | identifier")
    source_session_id: str | None
    source_message_id: uuid.UUID | None
    created_at: datetime
    last_used_at: datetime


class MemoryList(BaseModel):
    memories: list[MemoryRead]
    total: int
    limit: int
    offset: int
    enabled: bool = Field(description="Whether new turns recall and keep memories.")
    trace_id: str | None = Field(default_factory=current_trace_id)


class MemoriesDeleted(BaseModel):
    status: str = "deleted"
    deleted: int
    trace_id: str | None = Field(default_factory=current_trace_id)
