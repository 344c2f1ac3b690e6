"""Registry tables in schema ``gateway`` (created by migration 0004)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, SmallInteger, String, Text, func
from sqlalchemy.dialects.postgresql import JSON
from sqlalchemy.orm import Mapped, mapped_column

from gateway.db import Base, Vector
from reach_common.embeddings import DIMENSIONS


class Tool(Base):
    __tablename__ = "tool"

    tool_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    namespace: Mapped[str] = mapped_column(String(64))
    # json, not jsonb: the author's key order is kept (migration 0016)
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    version: Mapped[int]
    revision: Mapped[int] = mapped_column(BigInteger)
    source: Mapped[str] = mapped_column(String(16))  # "api" or "file"
    source_path: Mapped[str | None] = mapped_column(Text)
    embedding: Mapped[list[float] | None] = mapped_column(Vector(DIMENSIONS))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class RegistryState(Base):
    __tablename__ = "registry_state"

    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger)
