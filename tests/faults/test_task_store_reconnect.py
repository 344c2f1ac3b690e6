"""After Redis restarts, the first use of each pooled connection fails although Redis is
back. A task's status write and its acknowledgement are idempotent, so they try once more
on a fresh connection instead of leaving the task for the reclaim minutes later (the Redis
fault test once saw its last task stay ``queued`` that way)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import BlockingConnectionPool, Redis

from gateway.executor.tasks import TaskStore, task_key
from tests.faults.conftest import RedisServer


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


async def test_a_status_write_survives_the_pools_stale_connection(
    redis_server: RedisServer,
) -> None:
    pool = BlockingConnectionPool.from_url(
        redis_server.url, decode_responses=True, max_connections=1, timeout=5
    )
    redis = Redis.from_pool(pool)
    try:
        store = TaskStore(redis, ttl_s=60)
        await store.mark("t1", status="queued")  # the pool now holds one connection
        redis_server.kill()
        redis_server.start()  # empty, on the same port
        await store.mark("t1", status="running")
        assert await redis.hget(task_key("t1"), "status") == "running"
    finally:
        await redis.aclose()
