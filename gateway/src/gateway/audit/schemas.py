"""Audit log response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class InvocationRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    trace_id: str | None
    tool_id: str
    caller: str | None
    auth_via: str
    status: str = Field(
        description=(
            "succeeded, failed, refused (before execution) or accepted; for a call that needs "
            "approval, one row per transition: pending, approved, denied, expired, running, "
            "then succeeded or failed."
        )
    )
    reason: str | None
    http_status: int
    latency_ms: float
    attempts: int
    task_id: str | None
    arguments: dict[str, Any] = Field(description="As called, secret-looking values redacted.")
    approval_id: str | None = Field(None, description="The approval request this row is about.")
    actor: str | None = Field(
        None, description="Who made this approval transition (approver, or the gateway)."
    )
    transport: str = Field("http", description="How the call came in: `http` or `mcp`.")
    flags: list[str] = Field(
        default_factory=list,
        description="Untrusted-text flags the output raised (see docs/openapi-import.md).",
    )
    created_at: datetime


class InvocationList(BaseModel):
    invocations: list[InvocationRead]
    limit: int
    before_id: int | None
