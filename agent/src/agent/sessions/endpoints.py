"""``GET /sessions``, ``GET /sessions/{id}``, ``DELETE /sessions/{id}``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from agent.sessions import repository
from agent.sessions.errors import SessionBusy, SessionNotFound
from agent.sessions.lock import is_locked
from agent.sessions.schemas import (
    SESSION_ID_PATTERN,
    MessageRead,
    SessionDeleted,
    SessionDetail,
    SessionList,
    SessionRead,
)
from reach_common.db import SessionDep

router = APIRouter(prefix="/sessions", tags=["sessions"])

SessionId = Annotated[
    str,
    Path(pattern=SESSION_ID_PATTERN, description="The session's id.", examples=["s1"]),
]


@router.get("", response_model=SessionList)
async def list_sessions(
    db: SessionDep,
    user_id: Annotated[
        str | None, Query(max_length=200, description="Only this user's sessions.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Page size.")] = 50,
    offset: Annotated[int, Query(ge=0, description="Sessions to skip.")] = 0,
) -> SessionList:
    """Sessions, most recently active first, with their message counts."""
    rows = await repository.list_sessions(db, user_id=user_id, limit=limit, offset=offset)
    return SessionList(
        sessions=[
            SessionRead(
                id=s.id,
                user_id=s.user_id,
                title=s.title,
                message_count=count,
                created_at=s.created_at,
                updated_at=s.updated_at,
            )
            for s, count in rows
        ],
        limit=limit,
        offset=offset,
    )


@router.get("/{session_id}", response_model=SessionDetail)
async def get_session(session_id: SessionId, db: SessionDep) -> SessionDetail:
    """One session with every message in order: user messages, assistant answers,
    the tool calls they made and each call's result.

    Unknown id: 404 with reason `session_not_found`.
    """
    session = await repository.get_session(db, session_id)
    if session is None:
        raise SessionNotFound(session_id)
    messages = await repository.list_messages(db, session_id)
    return SessionDetail(
        id=session.id,
        user_id=session.user_id,
        title=session.title,
        message_count=len(messages),
        created_at=session.created_at,
        updated_at=session.updated_at,
        summary=session.summary,
        context_start_seq=session.context_start_seq,
        messages=[MessageRead.model_validate(m) for m in messages],
    )


@router.delete("/{session_id}", response_model=SessionDeleted)
async def delete_session(session_id: SessionId, db: SessionDep, request: Request) -> SessionDeleted:
    """Delete a session and all of its messages.

    Unknown id: 404 with reason `session_not_found`. A session that is
    answering a message right now: 409 `session_busy` (retry when it is done).
    """
    if await is_locked(request.state.redis, session_id):
        raise SessionBusy(session_id)
    if not await repository.delete_session(db, session_id):
        raise SessionNotFound(session_id)
    return SessionDeleted(session_id=session_id)
