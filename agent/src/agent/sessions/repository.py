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

from sqlalchemy import (
    Integer,
    Select,
    Table,
    Text,
    bindparam,
    cast,
    column,
    delete,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent.sessions.models import ChatMessage, ChatSession, ChatSummary
from agent.sessions.tokens import estimate_tokens
from reach_common.storable import storable

SESSION: Table = ChatSession.__table__  # type: ignore[assignment]
MESSAGE: Table = ChatMessage.__table__  # type: ignore[assignment]


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


@dataclass(frozen=True)
class SessionHead:
    """What a turn needs of its session's row, as the turn's first write left it."""

    id: str
    user_id: str | None
    context_start_seq: int
    summary: str | None

    @classmethod
    def of(cls, session: ChatSession) -> SessionHead:
        return cls(session.id, session.user_id, session.context_start_seq, session.summary)


async def get_session(db: AsyncSession, session_id: str) -> ChatSession | None:
    return await db.get(ChatSession, session_id)


async def ensure_session(
    db: AsyncSession, session_id: str, user_id: str | None, title: str
) -> ChatSession:
    """The session ``session_id`` as stored now (read again even if ``db`` read it
    before), created for ``user_id`` if it does not exist yet."""
    existing = await db.get(ChatSession, session_id, populate_existing=True)
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


# What ``append`` writes of each message besides its session and position.
_FIELDS = (
    "id",
    "turn_id",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "tool_name",
    "is_error",
    "client_message_id",
    "stop_reason",
    "rounds",
    "token_count",
    "trace_id",
)


def _columns(batch: Sequence[NewMessage]) -> dict[str, list[Any]]:
    """``batch`` column by column, as the arrays the append statement unnests."""
    columns: dict[str, list[Any]] = {name: [] for name in _FIELDS}
    for message in batch:
        values = message.__dict__
        # A NUL a model or a tool wrote (an argument, a reply) is kept as U+FFFD: the
        # turn's calls have run, so failing the write would lose their record.
        for name in _FIELDS[:-2]:
            columns[name].append(storable(values[name]))
        columns["token_count"].append(
            estimate_tokens(message.content)
            + sum(
                estimate_tokens(json.dumps(call.get("arguments"), ensure_ascii=False))
                for call in message.tool_calls or ()
            )
        )
        columns["trace_id"].append(message.trace_id)
    # As text, cast back in SQL: ``None`` stays the JSON null the column always held.
    columns["tool_calls"] = [json.dumps(calls) for calls in columns["tool_calls"]]
    return columns


def _append_statement(*, owned: bool = False) -> Select[Any]:
    """The one statement of :func:`append` (its text never changes, so it is compiled and
    prepared once); the batch travels as one array per column. ``owned``: only a session
    of ``:owner`` is written (:func:`append_as_owner`)::

        WITH head AS (UPDATE session SET last_seq = last_seq + :n ... RETURNING ...),
             added AS (INSERT INTO message SELECT ... FROM head, unnest(:ids, :roles, ...))
        SELECT ... FROM head
    """
    n = bindparam("n", type_=Integer())
    where = [SESSION.c.id == bindparam("session_id", type_=SESSION.c.id.type)]
    if owned:
        owner = bindparam("owner", type_=SESSION.c.user_id.type)
        where.append(SESSION.c.user_id.is_not_distinct_from(owner))
    head = (
        update(SESSION)
        .where(*where)
        .values(last_seq=SESSION.c.last_seq + n, updated_at=func.now())
        .returning(
            SESSION.c.last_seq, SESSION.c.user_id, SESSION.c.context_start_seq, SESSION.c.summary
        )
        .cte("head")
    )
    types = {name: MESSAGE.c[name].type for name in _FIELDS} | {"tool_calls": Text()}
    new = (
        func.unnest(*(bindparam(f"new_{name}", type_=ARRAY(types[name])) for name in _FIELDS))
        .table_valued(*(column(name, types[name]) for name in _FIELDS), with_ordinality="pos")
        .render_derived(name="new")
    )
    rows = select(
        bindparam("session_id", type_=SESSION.c.id.type),
        head.c.last_seq - n + new.c.pos,
        *(cast(new.c[name], MESSAGE.c[name].type) for name in _FIELDS),
    ).select_from(head.join(new, true()))
    added = insert(MESSAGE).from_select(["session_id", "seq", *_FIELDS], rows).cte("added")
    return select(head.c.user_id, head.c.context_start_seq, head.c.summary).add_cte(added)


_APPEND = _append_statement()
_APPEND_AS_OWNER = _append_statement(owned=True)


async def append(db: AsyncSession, session_id: str, batch: Sequence[NewMessage]) -> SessionHead:
    """Write ``batch`` at the end of the session in one statement: atomic by itself, and
    with the caller's transaction if there is one. Returns the session's row as it left it.

    The statement bumps ``last_seq`` (which locks the session's row until the end of the
    transaction, so two writers can never interleave or reuse a position) and inserts
    the messages at the positions it freed, in the batch's order.

    Raises :class:`BrokenToolPair` before writing anything if the batch would break a
    call/result pair, and :class:`LookupError` (nothing written) if the session is gone.
    """
    check_pairs(batch)
    written = await _write(db, _APPEND, session_id, batch, {})
    if written is None:
        raise LookupError(session_id)
    return written


async def append_as_owner(
    db: AsyncSession, session_id: str, owner: str | None, batch: Sequence[NewMessage]
) -> SessionHead | None:
    """:func:`append`, if the session exists and belongs to ``owner`` (checked by the
    statement itself, so a session of anyone else is never written, in or outside a
    transaction); else nothing is written and None is returned."""
    check_pairs(batch)
    return await _write(db, _APPEND_AS_OWNER, session_id, batch, {"owner": owner})


async def _write(
    db: AsyncSession,
    statement: Select[Any],
    session_id: str,
    batch: Sequence[NewMessage],
    extra: dict[str, Any],
) -> SessionHead | None:
    columns = {f"new_{name}": values for name, values in _columns(batch).items()}
    params = {"session_id": session_id, "n": len(batch), **columns, **extra}
    written = (await db.execute(statement, params)).first()
    if written is None:
        return None
    return SessionHead(session_id, written.user_id, written.context_start_seq, written.summary)


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
