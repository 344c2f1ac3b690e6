"""Which backend an unexpected exception says is down, if any.

A request that fails because Redis or Postgres stopped answering (killed, restarting,
unreachable) is not a bug: the client gets 503 ``dependency_unavailable`` with
``Retry-After`` (``errors.DependencyUnavailable``) instead of a 500, and the log gets a
warning without a traceback. ``UnhandledErrorMiddleware`` asks :func:`down_dependency`;
code that can serve without the backend catches the error itself (docs/reliability.md).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

import asyncpg  # type: ignore[import-untyped]
import redis.exceptions
import structlog
from sqlalchemy import exc as sa_exc

log = structlog.get_logger(__name__)
P = ParamSpec("P")
T = TypeVar("T")

_REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
_POSTGRES_DOWN = (
    asyncpg.PostgresConnectionError,  # includes CannotConnectNow (starting, shutting down)
    asyncpg.AdminShutdownError,
    asyncpg.CannotConnectNowError,  # "the database system is starting up / shutting down"
    asyncpg.CrashShutdownError,
    asyncpg.ConnectionDoesNotExistError,
    sa_exc.DisconnectionError,
)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 20:
        seen.append(current)
        orig = getattr(current, "orig", None)  # SQLAlchemy's wrapped DBAPI error
        current = orig or current.__cause__ or current.__context__
    return seen


def _raised_by_driver(error: OSError) -> str | None:
    """A socket error (refused, reset, no socket file) raised inside a driver's own code."""
    tb = error.__traceback__
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if module.startswith(("asyncpg.", "psycopg.")):
            return "postgres"
        if module.startswith("redis."):
            return "redis"
        tb = tb.tb_next
    return None


def down_dependency(exc: BaseException) -> str | None:
    """``"redis"`` or ``"postgres"`` when ``exc`` (or what caused it) says that backend did
    not answer; None for anything else."""
    for error in _chain(exc):
        if isinstance(error, _REDIS_DOWN):
            return "redis"
        if isinstance(error, _POSTGRES_DOWN):
            return "postgres"
        if isinstance(error, sa_exc.DBAPIError) and error.connection_invalidated:
            return "postgres"
        if isinstance(error, OSError) and (driver := _raised_by_driver(error)):
            return driver
    return None


def redis_optional(
    fallback: Any,
) -> Callable[[Callable[P, Awaitable[T]]], Callable[P, Awaitable[T]]]:
    """For a feature that only speeds up or enriches an answer (a cache, a hint): while
    Redis does not answer, the decorated coroutine returns ``fallback`` ("no entry",
    "nothing kept") with a warning, so the request is served without it."""

    def wrap(method: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
        @functools.wraps(method)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return await method(*args, **kwargs)
            except _REDIS_DOWN as exc:
                log.warning(
                    "redis_unavailable",
                    served_without=method.__qualname__,
                    error=type(exc).__name__,
                )
                return cast(T, fallback)

        return guarded

    return wrap
