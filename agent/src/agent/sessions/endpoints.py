"""``GET /sessions``, ``GET /sessions/{id}``, ``DELETE /sessions/{id}``.

Every session has an owner (see :mod:`agent.chat.service`), and these
endpoints show a caller only their own: the list holds the caller's sessions,
and someone else's session reads and deletes exactly like one that does not
exist (404 ``session_not_found``), so ids cannot be probed. A caller with one
of ``ADMIN_ROLES`` may list, read and delete every session. An ownerless
session (started anonymously, permissive mode only) is visible to anonymous
callers only. Strict mode needs a verified caller (401 ``unauthenticated``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from agent.deps import AgentCallerDep, RedisDep, SettingsDep, is_admin
from agent.sessions import repository
from agent.sessions.errors import SessionBusy, SessionNotFound
from agent.sessions.lock import is_locked
from agent.sessions.models import ChatSession
from agent.sessions.schemas import (
    SESSION_ID_PATTERN,
    MessageRead,
    SessionDeleted,
    SessionDetail,
    SessionList,
    SessionRead,
    SummaryRead,
)
from agent.settings import Settings
from reach_common.auth.caller import Caller
from reach_common.auth.errors import InsufficientPermission
from reach_common.db import SessionDep
from reach_common.paging import MAX_OFFSET

router = APIRouter(prefix="/sessions", tags=["sessions"])

SessionId = Annotated[
    str,
    Path(pattern=SESSION_ID_PATTERN, description="The session's id.", examples=["s1"]),
]


async def _visible_session(
    db: SessionDep, session_id: str, caller: Caller, settings: Settings
) -> ChatSession:
    """The session if ``caller`` may see it; otherwise 404, as for a missing one."""
    session = await repository.get_session(db, session_id)
    if session is None or not (session.user_id == caller.user_id or is_admin(caller, settings)):
        raise SessionNotFound(session_id)
    return session


@router.get(
    "",
    response_model=SessionList,
    responses={
        401: {"description": "`unauthenticated`: strict mode and no credential."},
        403: {"description": "`insufficient_permission`: `user_id` of another user, not admin."},
    },
)
async def list_sessions(
    db: SessionDep,
    caller: AgentCallerDep,
    settings: SettingsDep,
    user_id: Annotated[
        str | None,
        Query(
            max_length=200,
            pattern=r"^[^\x00-\x1f\x7f]+$",
            description="Only this user's sessions (admins; others may name only themselves).",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200, description="Page size.")] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Sessions to skip.")] = 0,
) -> SessionList:
    """The caller's sessions, most recently active first, with their message counts.

    An admin (one of `ADMIN_ROLES`) sees every user's sessions, or one user's
    with `user_id`.
    """
    if is_admin(caller, settings):
        rows = await repository.list_sessions(
            db, user_id=user_id, everyone=user_id is None, limit=limit, offset=offset
        )
    else:
        if user_id is not None and user_id != caller.user_id:
            raise InsufficientPermission(
                "Listing another user's sessions needs one of the roles "
                f"{', '.join(sorted(settings.admin_roles))} (ADMIN_ROLES).",
                sorted(settings.admin_roles),
            )
        rows = await repository.list_sessions(
            db, user_id=caller.user_id, everyone=False, limit=limit, offset=offset
        )
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


@router.get(
    "/{session_id}",
    response_model=SessionDetail,
    responses={
        401: {"description": "`unauthenticated`: strict mode and no credential."},
        404: {"description": "`session_not_found`: no such session, or not the caller's."},
    },
)
async def get_session(
    session_id: SessionId, db: SessionDep, caller: AgentCallerDep, settings: SettingsDep
) -> SessionDetail:
    """One of the caller's sessions with every message in order: user messages,
    assistant answers, the tool calls they made and each call's result.

    Unknown id, or a session of another user: 404 with reason
    `session_not_found` (admins may read any session).
    """
    session = await _visible_session(db, session_id, caller, settings)
    messages = await repository.list_messages(db, session_id)
    return SessionDetail(
        id=session.id,
        user_id=session.user_id,
        title=session.title,
        message_count=len(messages),
        created_at=session.created_at,
        updated_at=session.updated_at,
        summary=session.summary,
        summaries=[
            SummaryRead.model_validate(s) for s in await repository.list_summaries(db, session_id)
        ],
        context_start_seq=session.context_start_seq,
        messages=[MessageRead.model_validate(m) for m in messages],
    )


@router.delete(
    "/{session_id}",
    response_model=SessionDeleted,
    responses={
        401: {"description": "`unauthenticated`: strict mode and no credential."},
        404: {"description": "`session_not_found`: no such session, or not the caller's."},
        409: {"description": "`session_busy`: the session is answering a message."},
    },
)
async def delete_session(
    session_id: SessionId,
    db: SessionDep,
    redis: RedisDep,
    caller: AgentCallerDep,
    settings: SettingsDep,
) -> SessionDeleted:
    """Delete one of the caller's sessions and all of its messages.

    Unknown id, or a session of another user: 404 with reason
    `session_not_found` (admins may delete any session). A session that is
    answering a message right now: 409 `session_busy` (retry when it is done).
    """
    await _visible_session(db, session_id, caller, settings)  # before busy: no probing
    if await is_locked(redis, session_id):
        raise SessionBusy(session_id)
    if not await repository.delete_session(db, session_id):
        raise SessionNotFound(session_id)
    return SessionDeleted(session_id=session_id)
