"""Routing fixtures: a real Redis client on the test server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from tests.conftest import Backends


@pytest.fixture
async def redis_client(clean_state: Backends) -> AsyncIterator[Redis]:
    client = Redis.from_url(clean_state.redis_url, decode_responses=True)
    yield client
    await client.aclose()
