"""The shop's schema and seeding, against real Postgres."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, func, select

from reach_common.db import create_engine as create_async_engine
from reach_common.db import create_sessionmaker, sync_url
from shop.models import Base, InventoryItem, Sale, SalesOrder
from shop.seed import seed_if_empty


def test_migration_matches_models(service_env: dict[str, Any]) -> None:
    engine = create_engine(sync_url(service_env["database_url"]))
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn,
                opts={
                    "include_schemas": True,
                    "include_name": lambda name, kind, _: kind != "schema" or name == "shop",
                },
            )
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


async def test_processes_starting_together_seed_once(service_env: dict[str, Any]) -> None:
    engine = create_async_engine(service_env["database_url"], pool_size=4)
    sessionmaker = create_sessionmaker(engine)
    try:
        results = await asyncio.gather(*(seed_if_empty(sessionmaker) for _ in range(3)))
        assert sorted(results) == [False, False, True]
        assert await seed_if_empty(sessionmaker) is False
        async with sessionmaker() as session:
            counts = [
                await session.scalar(select(func.count()).select_from(model))
                for model in (InventoryItem, SalesOrder, Sale)
            ]
        assert counts == [6, 5, 30]
    finally:
        await engine.dispose()
