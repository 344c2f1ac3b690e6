"""One writer per session: redis-py's ``Lock`` with a TTL, renewed while the turn runs.

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
import uuid

import structlog
from redis.asyncio import Redis
from redis.asyncio.lock import Lock
from redis.exceptions import LockError, LockNotOwnedError, RedisError

log = structlog.get_logger(__name__)


def lock_key(session_id: str) -> str:
    return f"agent:session-lock:{session_id}"


async def load_lock_scripts(redis: Redis) -> None:
    """Load redis-py's lock scripts once at start. Without it a fresh Redis answers the
    first EVALSHA of each with NOSCRIPT (redis-py then loads and retries), and that
    refusal shows in every first turn's trace as a failed span. Redis being down here is
    not fatal: the turns report it themselves."""
    try:
        for script in (Lock.LUA_RELEASE_SCRIPT, Lock.LUA_EXTEND_SCRIPT, Lock.LUA_REACQUIRE_SCRIPT):
            await redis.script_load(script)
    except RedisError as exc:
        log.warning("lock_scripts_not_loaded", error=type(exc).__name__)


async def is_locked(redis: Redis, session_id: str) -> bool:
    return bool(await redis.exists(lock_key(session_id)))


class SessionLock:
    def __init__(self, redis: Redis, session_id: str, ttl_s: float) -> None:
        self.session_id = session_id
        self.key = lock_key(session_id)
        self._ttl_s = max(ttl_s, 0.1)
        # thread_local=False: the turn's tasks (heartbeat, release) share the token.
        self._lock = redis.lock(self.key, timeout=self._ttl_s, blocking=False, thread_local=False)
        self._heartbeat: asyncio.Task[None] | None = None

    async def acquire(self) -> bool:
        """Take the lock if it is free; never waits. The token is random: redis-py's own
        default is ``uuid1``, whose libuuid clock (a locked file) showed in every turn's
        profile."""
        return bool(await self._lock.acquire(token=uuid.uuid4().hex))

    def start_heartbeat(self) -> None:
        """Renew the lock every third of its TTL until :meth:`release`."""
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(self._renew_forever())

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self._ttl_s / 3)
            try:
                await self._lock.reacquire()  # the TTL starts over
            except LockNotOwnedError:
                log.warning("session_lock_lost", key=self.key)
                return
            except RedisError as exc:  # keep trying: the TTL covers a short outage
                log.warning("session_lock_renew_failed", key=self.key, error=type(exc).__name__)

    async def release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None
        # Expired and perhaps taken by another turn meanwhile: theirs now, nothing to free.
        with contextlib.suppress(LockError):
            await self._lock.release()
