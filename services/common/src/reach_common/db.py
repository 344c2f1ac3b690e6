"""Async SQLAlchemy 2 engine (asyncpg) and the request-scoped session.

The session commits when the request handler returns and rolls back when it
raises, so a failed request leaves nothing half-written. Services only
``flush()``; they never commit themselves.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any

import asyncpg  # type: ignore[import-untyped]
from fastapi import Depends, Request
from sqlalchemy import event
from sqlalchemy.engine import ExceptionContext, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import ConnectionPoolEntry


def async_url(url: str) -> str:
    """``postgresql://…`` (any driver) → ``postgresql+asyncpg://…``."""
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def libpq_url(url: str) -> str:
    """A plain ``postgresql://…`` URL for libpq-based clients (psycopg, psql)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def sync_url(url: str) -> str:
    """``postgresql+psycopg://…`` for synchronous SQLAlchemy (Alembic)."""
    return make_url(url).set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


# A pooled connection unused for longer than this is pinged before it is handed out.
IDLE_PING_S = 30.0


def create_engine(
    url: str, *, pool_size: int = 10, idle_ping_s: float = IDLE_PING_S
) -> AsyncEngine:
    """The service's engine. A connection is checked as it leaves the pool, at no cost to
    a busy service (see :func:`_check_out`), instead of ``pool_pre_ping``'s three round
    trips (BEGIN, ``;``, ROLLBACK) on every checkout."""
    engine = create_async_engine(async_url(url), pool_size=pool_size, max_overflow=pool_size)
    event.listen(engine.sync_engine.pool, "checkout", partial(_check_out, idle_ping_s))
    event.listen(engine.sync_engine.pool, "checkin", _checked_in)
    event.listen(engine.sync_engine, "handle_error", _broken_protocol)
    return engine


_IN_PROGRESS = "another operation is in progress"


def _broken_protocol(context: ExceptionContext) -> None:
    """A connection whose protocol state asyncpg refuses ("cannot switch to state …;
    another operation is in progress": an operation on it was cut off, e.g. as its server
    went down) cannot serve another statement: discard it like a lost connection, so
    the pool never hands it out again (the pool's other connections are kept)."""
    error: BaseException | None = context.original_exception
    while error is not None:
        busy = isinstance(error, asyncpg.InterfaceError) and _IN_PROGRESS in str(error)
        if busy or isinstance(error, asyncpg.InternalClientError):
            context.is_disconnect = True
            context.invalidate_pool_on_disconnect = False
            return
        error = error.__cause__


def _checked_in(dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
    record.info["idle_since"] = time.monotonic()


def _check_out(
    idle_ping_s: float, dbapi_connection: Any, record: ConnectionPoolEntry, proxy: Any
) -> None:
    """Refuse a dead connection before it is used; the pool then opens a new one.

    - A connection whose server went away (a restart, a crash, a terminated backend) was
      closed by the server, and asyncpg noticed the closed socket as it happened:
      ``is_closed()`` says so without a round trip.
    - A connection idle for more than ``idle_ping_s`` may have been dropped silently on
      the way (a NAT or load balancer forgetting an idle flow): it is pinged first.

    A connection that dies in use is still caught: asyncpg raises, SQLAlchemy sees a
    disconnect and invalidates every connection of the pool opened before it, and only
    the statement in flight fails.
    """
    if dbapi_connection.driver_connection.is_closed():
        raise DisconnectionError("the server closed this connection")
    idle_since = record.info.get("idle_since")
    if idle_since is not None and time.monotonic() - idle_since > idle_ping_s:
        try:
            dbapi_connection.ping()
        except Exception as exc:
            raise DisconnectionError("an idle connection did not answer a ping") from exc


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """One session per request: commit on success, roll back on error."""
    sessionmaker: async_sessionmaker[AsyncSession] = request.state.sessionmaker
    async with sessionmaker() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        else:
            await session.commit()


# scope="function": commit before the response is sent, so a failed commit is
# reported to the client instead of being lost after a 200.
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
