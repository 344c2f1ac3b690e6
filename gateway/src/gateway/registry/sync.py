"""Cross-replica propagation: a registry change on one replica reaches all within a second.

The writer publishes its delta (the new revision, the tools it changed and
removed) on a Redis channel after committing; every replica listens and reads
just those rows from Postgres (the source of truth): ``RegistryCache.apply``.
A replica that missed a revision (pub/sub does not replay), a message with a
revision only (``publish``), the periodic re-check and every reconnect catch up
instead (``RegistryCache.refresh``: a light listing, then only the rows that
differ). A delta naming more than ``MAX_IDS`` tools goes out as a bare revision.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from gateway.background import cancel_and_wait
from gateway.registry.cache import RegistryCache, RegistryDelta

log = structlog.get_logger(__name__)

MAX_IDS = 20_000  # tool ids one message carries (about 0.5 MB); past that, a bare revision


class RegistrySync:
    def __init__(self, redis: Redis, channel: str, cache: RegistryCache, poll_s: float) -> None:
        self._redis = redis
        self._channel = channel
        self._cache = cache
        self._poll_s = poll_s
        self._task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()

    async def publish(self, revision: int) -> None:
        """Announce a revision without saying what changed: replicas catch up."""
        await self._redis.publish(self._channel, str(revision))

    async def publish_delta(self, delta: RegistryDelta) -> None:
        """Announce a revision and what it changed: replicas read just those tools."""
        if len(delta.changed) + len(delta.deleted) > MAX_IDS:
            await self.publish(delta.revision)
            return
        await self._redis.publish(self._channel, json.dumps(delta.as_message()))

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="registry-sync")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    async def _run(self) -> None:
        # Listen for as long as the gateway runs; after a failure, listen again in
        # 0.5 s, then 1, 2, 4... up to 10 s. Cancellation (stop) is not retried.
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(Exception),  # task boundary: whatever happens
            wait=wait_exponential(multiplier=0.5, max=10.0),
            before_sleep=self._lost,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                await self._listen()

    def _lost(self, state: RetryCallState) -> None:
        self.listening.clear()
        failure = state.outcome.exception() if state.outcome else None
        if connection_lost(failure):
            log.warning(
                "registry_listener_lost",
                error=type(failure).__name__,
                retry_s=state.upcoming_sleep,
            )
        else:
            log.error("registry_listener_failed", exc_info=failure, retry_s=state.upcoming_sleep)

    async def _listen(self) -> None:
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self._channel)
            # Anything published while we were not listening: reload now.
            await self._cache.refresh()
            self.listening.set()
            while True:
                message = await pubsub.get_message(timeout=self._poll_s)
                if message is None:
                    await self._cache.refresh()  # periodic safety net
                    continue
                await self._heard(message["data"])
        finally:
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _heard(self, data: Any) -> None:
        try:
            parsed = json.loads(data)
        except (TypeError, ValueError):
            parsed = None
        delta = RegistryDelta.from_message(parsed)
        if delta is not None:
            await self._cache.apply(delta)
        elif not (isinstance(parsed, int) and parsed <= self._cache.revision):
            await self._cache.refresh()


def connection_lost(failure: BaseException | None) -> bool:
    """Whether ``failure`` is Redis going away: a Redis or socket error, or the event
    loop's refusal to write to a transport that closed under a reconnect (uvloop raises
    RuntimeError "the handler is closed" when Redis dies mid-handshake)."""
    if isinstance(failure, (RedisError, OSError)):
        return True
    return isinstance(failure, RuntimeError) and "handler is closed" in str(failure)
