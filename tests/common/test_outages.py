"""An outage of Redis or Postgres is told apart from a bug, with real clients on dead ports."""

from __future__ import annotations

import pytest
import redis.asyncio
from sqlalchemy import text

from reach_common.db import create_engine
from reach_common.outages import down_dependency
from reach_common.processes import free_port


async def test_a_redis_that_does_not_answer_is_an_outage() -> None:
    client = redis.asyncio.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(redis.exceptions.RedisError) as caught:
        await client.ping()
    await client.aclose()
    assert down_dependency(caught.value) == "redis"


async def test_a_postgres_that_does_not_answer_is_an_outage() -> None:
    engine = create_engine(f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")
    with pytest.raises(Exception) as caught:  # noqa: PT011 - whatever the driver raises
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    await engine.dispose()
    assert down_dependency(caught.value) == "postgres"


def test_other_errors_are_not_outages() -> None:
    with pytest.raises(FileNotFoundError) as missing:  # an OSError no driver raised
        open("no-such-folder/no-such-file").close()
    assert down_dependency(missing.value) is None
    assert down_dependency(ValueError("a bug")) is None
    assert down_dependency(redis.exceptions.ResponseError("WRONGTYPE")) is None
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = redis.exceptions.ConnectionError("gone")
    assert down_dependency(wrapped) == "redis"
