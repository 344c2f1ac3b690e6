"""Async SQLAlchemy 2 engine (asyncpg) and the request-scoped session.

The session commits when the request handler returns and rolls back when it
raises, so a failed request leaves nothing half-written. Services only
``flush()``; they never commit themselves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)


def async_url(url: str) -> str:
    """``postgresql://…`` (any driver) → ``postgresql+asyncpg://…``."""
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def libpq_url(url: str) -> str:
    """A plain ``postgresql://…`` URL for libpq-based clients (psycopg, psql)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def sync_url(url: str) -> str:
    """``postgresql+psycopg://…`` for synchronous SQLAlchemy (Alembic)."""
    return make_url(url).set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    return create_async_engine(
        async_url(url), pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True
    )


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
