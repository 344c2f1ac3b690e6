"""Tables in schema ``agent`` (created by migrations 0005 and 0007)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, ForeignKey, Identity, MetaData, String, Text, func
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

SESSION_ID_LENGTH = 128


class Base(DeclarativeBase):
    metadata = MetaData(schema="agent")


class ChatSession(Base):
    """One conversation. ``last_seq`` hands out message positions under a row lock."""

    __tablename__ = "session"

    id: Mapped[str] = mapped_column(String(SESSION_ID_LENGTH), primary_key=True)
    user_id: Mapped[str | None] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(String(200), server_default="")
    last_seq: Mapped[int] = mapped_column(server_default="0")
    context_start_seq: Mapped[int] = mapped_column(server_default="1")
    summary: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ChatMessage(Base):
    """One message in a session, in the vendor-neutral shape of ``reach_common.llm.types``.

    ``tool_calls`` (assistant) is a list of ``{id, name, tool_id, arguments,
    raw_arguments?}``; a ``tool`` message answers ``tool_call_id``.
    """

    __tablename__ = "message"

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    session_id: Mapped[str] = mapped_column(
        String(SESSION_ID_LENGTH), ForeignKey("agent.session.id", ondelete="CASCADE")
    )
    seq: Mapped[int]
    turn_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    role: Mapped[str] = mapped_column(String(16))
    content: Mapped[str] = mapped_column(Text, server_default="")
    tool_calls: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONB)
    tool_call_id: Mapped[str | None] = mapped_column(String(128))
    tool_name: Mapped[str | None] = mapped_column(String(128))
    is_error: Mapped[bool] = mapped_column(server_default="false")
    client_message_id: Mapped[str | None] = mapped_column(String(128))
    stop_reason: Mapped[str | None] = mapped_column(String(32))
    rounds: Mapped[int | None]
    token_count: Mapped[int] = mapped_column(server_default="0")
    trace_id: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class ChatSummary(Base):
    """A summary of folded history: it stands in for messages ``from_seq``..``to_seq``
    on top of the summary before it (so the newest covers everything folded so far)."""

    __tablename__ = "summary"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    session_id: Mapped[str] = mapped_column(
        String(SESSION_ID_LENGTH), ForeignKey("agent.session.id", ondelete="CASCADE")
    )
    from_seq: Mapped[int]
    to_seq: Mapped[int]
    text: Mapped[str] = mapped_column(Text)
    method: Mapped[str] = mapped_column(String(16))
    token_count: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
