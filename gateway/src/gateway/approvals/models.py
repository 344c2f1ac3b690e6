"""Approval requests and their transitions (schema ``gateway``, migration 0008)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Identity,
    Integer,
    String,
    Text,
    func,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from gateway.db import Base

PENDING = "pending"
APPROVED = "approved"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
DENIED = "denied"
EXPIRED = "expired"
FINAL_STATES = frozenset({SUCCEEDED, FAILED, DENIED, EXPIRED})


class Approval(Base):
    """One call waiting for (or past) a person's decision: pending → approved → running →
    succeeded | failed, or pending → denied | expired."""

    __tablename__ = "approval"

    approval_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tool_id: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSONB)  # intact, for the execution
    arguments_shown: Mapped[dict[str, Any]] = mapped_column(JSONB)  # redacted, for people
    arguments_hash: Mapped[str] = mapped_column(String(64))
    manifest_revision: Mapped[int] = mapped_column(BigInteger)
    idempotent: Mapped[bool] = mapped_column(Boolean)
    caller: Mapped[str] = mapped_column(String(200))
    caller_roles: Mapped[list[str]] = mapped_column(ARRAY(Text))
    caller_via: Mapped[str] = mapped_column(String(16))
    trace_id: Mapped[str | None] = mapped_column(String(32))
    traceparent: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(Text)
    callback_url: Mapped[str | None] = mapped_column(Text)
    replaces: Mapped[str | None] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16))
    decided_by: Mapped[str | None] = mapped_column(String(200))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    comment: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ApprovalEvent(Base):
    """One transition: from which state to which, who made it, when, and why."""

    __tablename__ = "approval_event"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    approval_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("gateway.approval.approval_id", ondelete="CASCADE")
    )
    from_state: Mapped[str | None] = mapped_column(String(16))
    to_state: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str | None] = mapped_column(String(200))
    comment: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
