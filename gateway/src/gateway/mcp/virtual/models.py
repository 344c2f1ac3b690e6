"""Virtual MCP servers (schema ``gateway``, migration 0010)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, Integer, String, Text, func
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Mapped, mapped_column

from gateway.db import Base


class VirtualServer(Base):
    __tablename__ = "mcp_virtual_server"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    description: Mapped[str] = mapped_column(Text, server_default="")
    namespaces: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    tool_ids: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    routed: Mapped[bool] = mapped_column(Boolean, server_default="false")
    top_k: Mapped[int] = mapped_column(Integer, server_default="5")
    version: Mapped[int] = mapped_column(Integer, server_default="1")
    created_by: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
