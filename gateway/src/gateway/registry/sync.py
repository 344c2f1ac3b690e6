"""Cross-replica propagation: a registry change on one replica reaches all within a second.

The writer publishes the new revision on a Redis channel after committing;
every replica listens and reloads from Postgres (the source of truth). A
periodic re-check and a reload after every reconnect cover messages lost while
a listener was down, since pub/sub does not replay.
"""

from __future__ import annotations

import asyncio
import contextlib

import structlog
from redis.asyncio import Redis
from redis.exceptions import RedisError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from gateway.background import cancel_and_wait
from gateway.registry.cache import RegistryCache

log = structlog.get_logger(__name__)


class RegistrySync:
    def __init__(self, redis: Redis, channel: str, cache: RegistryCache, poll_s: float) -> None:
        self._redis = redis
        self._channel = channel
        self._cache = cache
        self._poll_s = poll_s
        self._task: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()

    async def publish(self, revision: int) -> None:
        await self._redis.publish(self._channel, str(revision))

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
        if isinstance(failure, (RedisError, OSError)):
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
                try:
                    announced = int(message["data"])
                except (TypeError, ValueError):
                    announced = None
                if announced is None or announced != self._cache.revision:
                    await self._cache.refresh()
        finally:
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()  # type: ignore[no-untyped-call]
