"""One writer per session: a Redis lock with a TTL, renewed while the turn runs.

A second turn on a busy session is refused at once (409 ``session_busy``)
rather than queued, so a client never waits behind a turn it cannot see. The
lock holds a random token, so only its owner can renew or release it; if the
agent process dies, nobody renews it and the session is free again after
``SESSION_LOCK_TTL_S``. Database writes are ordered by a row lock as well, so
even a lock lost to a long pause cannot interleave two turns' positions.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets

import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError

log = structlog.get_logger(__name__)

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""


def lock_key(session_id: str) -> str:
    return f"agent:session-lock:{session_id}"


async def is_locked(redis: Redis, session_id: str) -> bool:
    return bool(await redis.exists(lock_key(session_id)))


class SessionLock:
    def __init__(self, redis: Redis, session_id: str, ttl_s: float) -> None:
        self._redis = redis
        self.key = lock_key(session_id)
        self._ttl_ms = max(int(ttl_s * 1000), 100)
        self._token = secrets.token_hex(16)
        self._heartbeat: asyncio.Task[None] | None = None

    async def acquire(self) -> bool:
        return bool(await self._redis.set(self.key, self._token, nx=True, px=self._ttl_ms))

    def start_heartbeat(self) -> None:
        """Renew the lock every third of its TTL until :meth:`release`."""
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(self._renew_forever())

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self._ttl_ms / 3000)
            try:
                renewed = await self._redis.eval(_RENEW, 1, self.key, self._token, self._ttl_ms)
            except RedisError as exc:  # keep trying: the TTL covers a short outage
                log.warning("session_lock_renew_failed", key=self.key, error=type(exc).__name__)
                continue
            if not renewed:
                log.warning("session_lock_lost", key=self.key)
                return

    async def release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None
        await self._redis.eval(_RELEASE, 1, self.key, self._token)
