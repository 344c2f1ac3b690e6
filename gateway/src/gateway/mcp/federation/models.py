"""Federated MCP servers and their tools' definitions (schema ``gateway``, migration 0009)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, DateTime, ForeignKey, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from gateway.db import Base


class McpServer(Base):
    __tablename__ = "mcp_server"

    server_id: Mapped[str] = mapped_column(String(20), primary_key=True)
    namespace: Mapped[str] = mapped_column(String(64))
    transport: Mapped[str] = mapped_column(String(8))
    url: Mapped[str | None] = mapped_column(Text)
    command: Mapped[str | None] = mapped_column(String(64))
    auth: Mapped[dict[str, Any]] = mapped_column(JSONB)
    permission: Mapped[str] = mapped_column(String(8))
    scope: Mapped[list[str]] = mapped_column(ARRAY(Text))
    timeout_ms: Mapped[int | None] = mapped_column(Integer)
    max_retries: Mapped[int] = mapped_column(Integer)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    sync_error: Mapped[str | None] = mapped_column(Text)


class McpServerTool(Base):
    __tablename__ = "mcp_server_tool"

    server_id: Mapped[str] = mapped_column(
        String(20), ForeignKey("mcp_server.server_id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    tool_id: Mapped[str] = mapped_column(String(64), unique=True)
    accepted_hash: Mapped[str] = mapped_column(String(71))
    definition: Mapped[dict[str, Any]] = mapped_column(JSONB)
    pending_hash: Mapped[str | None] = mapped_column(String(71))
    pending_definition: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    changed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
