"""Every query on sessions and messages. Functions flush at most; callers commit.

Writes go through :func:`append`, which numbers messages under a row lock on
their session, so two writers can never interleave or reuse a position, and
which refuses a batch where an assistant tool call is not followed by exactly
its results: a broken pair never reaches the database.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent.sessions.models import ChatMessage, ChatSession, ChatSummary
from agent.sessions.tokens import estimate_tokens


@dataclass
class NewMessage:
    """A message about to be written; ``seq`` is assigned by :func:`append`."""

    role: str
    turn_id: uuid.UUID
    content: str = ""
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    client_message_id: str | None = None
    stop_reason: str | None = None
    rounds: int | None = None
    trace_id: str | None = None
    id: uuid.UUID = field(default_factory=uuid.uuid4)


class BrokenToolPair(ValueError):
    """A batch would leave a tool call without its result, or a result without its call."""


def check_pairs(batch: Sequence[NewMessage]) -> None:
    """Each assistant tool call is followed, in the same batch, by exactly one result each."""
    pending: set[str] = set()
    for message in batch:
        if message.role == "tool":
            if message.tool_call_id not in pending:
                raise BrokenToolPair(f"result for unknown call {message.tool_call_id!r}")
            pending.discard(message.tool_call_id)
            continue
        if pending:
            raise BrokenToolPair(f"calls without results: {sorted(pending)}")
        if message.role == "assistant" and message.tool_calls:
            pending = {str(call["id"]) for call in message.tool_calls}
    if pending:
        raise BrokenToolPair(f"calls without results: {sorted(pending)}")


# --- sessions -------------------------------------------------------------------


async def get_session(db: AsyncSession, session_id: str) -> ChatSession | None:
    return await db.get(ChatSession, session_id)


async def ensure_session(
    db: AsyncSession, session_id: str, user_id: str | None, title: str
) -> ChatSession:
    """The session ``session_id``, created for ``user_id`` if it does not exist yet."""
    existing = await db.get(ChatSession, session_id)
    if existing is not None:  # the common case: one round trip
        return existing
    await db.execute(
        pg_insert(ChatSession)
        .values(id=session_id, user_id=user_id, title=title[:200])
        .on_conflict_do_nothing(index_elements=[ChatSession.id])
    )
    session = await db.scalar(
        select(ChatSession)
        .where(ChatSession.id == session_id)
        .execution_options(populate_existing=True)
    )
    assert session is not None
    return session


async def list_sessions(
    db: AsyncSession, *, user_id: str | None, everyone: bool = False, limit: int, offset: int
) -> list[tuple[ChatSession, int]]:
    """``user_id``'s sessions (``None``: the ownerless ones), or with ``everyone`` all
    sessions, most recently active first, each with its message count."""
    count = (
        select(func.count())
        .where(ChatMessage.session_id == ChatSession.id)
        .correlate(ChatSession)
        .scalar_subquery()
    )
    query = select(ChatSession, count).order_by(ChatSession.updated_at.desc(), ChatSession.id)
    if not everyone:
        query = query.where(
            ChatSession.user_id.is_(None) if user_id is None else ChatSession.user_id == user_id
        )
    result = await db.execute(query.limit(limit).offset(offset))
    return [(session, int(n)) for session, n in result.all()]


async def delete_session(db: AsyncSession, session_id: str) -> bool:
    """Delete a session; its messages go with it (ON DELETE CASCADE)."""
    result = await db.execute(
        delete(ChatSession).where(ChatSession.id == session_id).returning(ChatSession.id)
    )
    return result.first() is not None


@dataclass(frozen=True)
class NewSummary:
    from_seq: int
    to_seq: int
    text: str
    method: str
    token_count: int


async def add_summary(db: AsyncSession, session_id: str, summary: NewSummary) -> None:
    """Record ``summary`` and move the session's window past the messages it covers."""
    db.add(
        ChatSummary(
            session_id=session_id,
            from_seq=summary.from_seq,
            to_seq=summary.to_seq,
            text=summary.text,
            method=summary.method,
            token_count=summary.token_count,
        )
    )
    await db.execute(
        update(ChatSession)
        .where(ChatSession.id == session_id)
        .values(context_start_seq=summary.to_seq + 1, summary=summary.text)
        .execution_options(synchronize_session=False)
    )


async def list_summaries(db: AsyncSession, session_id: str) -> Sequence[ChatSummary]:
    """Every summary written for the session, oldest first."""
    result = await db.scalars(
        select(ChatSummary).where(ChatSummary.session_id == session_id).order_by(ChatSummary.id)
    )
    return result.all()


# --- messages -------------------------------------------------------------------


async def list_messages(
    db: AsyncSession, session_id: str, *, from_seq: int = 1
) -> Sequence[ChatMessage]:
    result = await db.scalars(
        select(ChatMessage)
        .where(ChatMessage.session_id == session_id, ChatMessage.seq >= from_seq)
        .order_by(ChatMessage.seq)
    )
    return result.all()


async def find_client_message(
    db: AsyncSession, session_id: str, client_message_id: str
) -> ChatMessage | None:
    return await db.scalar(
        select(ChatMessage).where(
            ChatMessage.session_id == session_id,
            ChatMessage.client_message_id == client_message_id,
        )
    )


async def turn_messages(db: AsyncSession, turn_id: uuid.UUID) -> Sequence[ChatMessage]:
    result = await db.scalars(
        select(ChatMessage).where(ChatMessage.turn_id == turn_id).order_by(ChatMessage.seq)
    )
    return result.all()


async def append(db: AsyncSession, session_id: str, batch: Sequence[NewMessage]) -> list[int]:
    """Write ``batch`` at the end of the session, atomically with the caller's commit.

    Returns the positions given. Raises :class:`BrokenToolPair` before writing
    anything if the batch would break a call/result pair.
    """
    check_pairs(batch)
    last = await db.scalar(
        update(ChatSession)
        .where(ChatSession.id == session_id)
        .values(last_seq=ChatSession.last_seq + len(batch), updated_at=func.now())
        .returning(ChatSession.last_seq)
        .execution_options(synchronize_session=False)
    )
    if last is None:
        raise LookupError(session_id)
    first = last - len(batch) + 1
    rows: list[dict[str, Any]] = [
        {
            "id": message.id,
            "session_id": session_id,
            "seq": first + offset,
            "turn_id": message.turn_id,
            "role": message.role,
            "content": message.content,
            "tool_calls": message.tool_calls,
            "tool_call_id": message.tool_call_id,
            "tool_name": message.tool_name,
            "is_error": message.is_error,
            "client_message_id": message.client_message_id,
            "stop_reason": message.stop_reason,
            "rounds": message.rounds,
            "token_count": estimate_tokens(message.content)
            + sum(
                estimate_tokens(json.dumps(call.get("arguments"), ensure_ascii=False))
                for call in message.tool_calls or ()
            ),
            "trace_id": message.trace_id,
        }
        for offset, message in enumerate(batch)
    ]
    await db.execute(pg_insert(ChatMessage), rows)
    return [first + offset for offset in range(len(batch))]


async def resolve_tool_result(
    db: AsyncSession, message_id: uuid.UUID, content: str, is_error: bool
) -> None:
    """Put a decided approval's real result in place of its tool message's placeholder."""
    await db.execute(
        update(ChatMessage)
        .where(ChatMessage.id == message_id, ChatMessage.role == "tool")
        .values(content=content, is_error=is_error, token_count=estimate_tokens(content))
        .execution_options(synchronize_session=False)
    )


async def last_user_seq(db: AsyncSession, session_id: str) -> int | None:
    """Position of the session's newest user message."""
    return await db.scalar(
        select(func.max(ChatMessage.seq)).where(
            ChatMessage.session_id == session_id, ChatMessage.role == "user"
        )
    )
