"""The invocation audit log (schema ``gateway``, migrations 0004, 0008, 0010 and 0014)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Float, Identity, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from gateway.db import Base


class Invocation(Base):
    __tablename__ = "invocation"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    trace_id: Mapped[str | None] = mapped_column(String(32))
    tool_id: Mapped[str] = mapped_column(String(200))
    caller: Mapped[str | None] = mapped_column(String(200))
    auth_via: Mapped[str] = mapped_column(String(16))
    # succeeded | failed | refused (before execution) | accepted (queued as a task); for an
    # approval request, each transition: pending | approved | running | denied | expired | ...
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(64))
    http_status: Mapped[int] = mapped_column(Integer)
    latency_ms: Mapped[float] = mapped_column(Float)
    attempts: Mapped[int] = mapped_column(Integer, server_default="0")
    task_id: Mapped[str | None] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default="{}")
    approval_id: Mapped[str | None] = mapped_column(String(32))
    actor: Mapped[str | None] = mapped_column(String(200))
    transport: Mapped[str] = mapped_column(String(16), server_default="http")  # http | mcp
    # Untrusted-text flags the output raised (gateway.catalog.untrusted): a signal, not a verdict.
    flags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
