"""A pooled connection asyncpg refuses to use (an operation on it still in progress) is
discarded, never handed out again; the pool's other connections stay."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from reach_common.db import create_engine
from tests.conftest import Backends


async def test_a_connection_in_a_broken_state_is_discarded(backends: Backends) -> None:
    engine = create_engine(backends.database_url, pool_size=1)
    try:
        async with engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            # An operation cut off on its way (here: still running) leaves the protocol busy.
            busy = asyncio.ensure_future(driver.fetchval("SELECT pg_sleep(0.3)"))
            await asyncio.sleep(0.05)
            with pytest.raises(DBAPIError) as failed:
                await conn.execute(text("SELECT 1"))
            await asyncio.gather(busy, return_exceptions=True)  # cancelled as discarded
        assert failed.value.connection_invalidated
        async with engine.connect() as conn:  # a new connection, which works
            fresh = (await conn.get_raw_connection()).driver_connection
            assert fresh is not driver
            assert (await conn.execute(text("SELECT 1"))).scalar() == 1
    finally:
        await engine.dispose()
