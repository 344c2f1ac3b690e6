"""What the session endpoints return."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reach_common.errors import current_trace_id

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"


class SessionRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    user_id: str | None
    title: str
    message_count: int
    created_at: datetime
    updated_at: datetime


class SessionList(BaseModel):
    sessions: list[SessionRead]
    limit: int
    offset: int
    trace_id: str | None = Field(default_factory=current_trace_id)


class MessageRead(BaseModel):
    """One stored message. ``tool_calls`` are the calls an assistant message made."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    seq: int
    turn_id: uuid.UUID
    role: str
    content: str
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    client_message_id: str | None = None
    stop_reason: str | None = None
    rounds: int | None = None
    trace_id: str | None = None
    created_at: datetime


class SummaryRead(BaseModel):
    """One fold: the running summary as it stood once messages ``from_seq``..``to_seq``
    were folded into it (it covers every message before ``to_seq`` + 1)."""

    model_config = ConfigDict(from_attributes=True)

    from_seq: int
    to_seq: int
    method: str = Field(description="model | extractive")
    token_count: int
    created_at: datetime


class SessionDetail(SessionRead):
    summary: str | None = Field(
        None,
        description=(
            "The running summary of turns that no longer fit the context budget (written by "
            "the model, or extractive offline); it covers messages 1..context_start_seq-1."
        ),
    )
    summaries: list[SummaryRead] = Field(
        default_factory=list, description="Every fold, oldest first; raw messages are kept."
    )
    context_start_seq: int = Field(
        description="The first message still sent to the model; earlier ones are summarised."
    )
    messages: list[MessageRead]
    trace_id: str | None = Field(default_factory=current_trace_id)


class SessionDeleted(BaseModel):
    status: str = "deleted"
    session_id: str
    trace_id: str | None = Field(default_factory=current_trace_id)
