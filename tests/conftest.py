"""Fixtures shared by every test: real Postgres and Redis, clean state, app clients.

By default the session starts an embedded PostgreSQL (pgvector) and Redis in a
throwaway folder and migrates it to head; under ``make test`` each pytest-xdist
worker has its own. Set ``DATABASE_URL`` / ``REDIS_URL`` to test against servers of
your own instead (the suite then runs in one process).

Each test that asks for ``clean_state`` starts from empty tables and an empty Redis
database. The shop's demo data is written again where a shop is asked for: by
``shop_url`` for each module (one shop process serves the session), and by the shop
app when it starts on empty tables.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import psycopg
import pytest
import redis
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from reach_common import migrate
from reach_common.auth.keys import create_key
from reach_common.db import create_engine, create_sessionmaker, libpq_url
from reach_common.embedded import EmbeddedServers
from reach_common.processes import PORT_RANGE_ENV, free_port, running_service
from shop.seed import seed_if_empty

REPO_ROOT = Path(__file__).resolve().parents[1]


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        f"reach_{name}", REPO_ROOT / "scripts" / f"{name}.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


SCHEMAS = ("auth", "gateway", "agent", "retriever", "telemetry", "shop")
STARTUP_TIMEOUT_S = 60  # an app's lifespan start-up in tests (see app_client)


# Ports the test workers draw from: below the kernel's ephemeral range (32768 and up on
# Linux), so no connection's own port or kernel-picked port falls in it.
WORKER_PORTS = (10000, 32767)


def pytest_configure(config: pytest.Config) -> None:
    """Each pytest-xdist worker draws ports from a range of its own (``free_port``): two
    workers starting services at once can no longer be handed the same port."""
    worker_of_xdist = "PYTEST_XDIST_WORKER" in os.environ
    if PORT_RANGE_ENV in os.environ or (
        getattr(config.option, "numprocesses", 0) and not worker_of_xdist
    ):
        return  # set already, or this is the controller: its workers inherit its environment
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker) if worker.isdigit() else 0
    low, high = WORKER_PORTS
    width = (high - low + 1) // max(count, 1)
    first = low + index % max(count, 1) * width
    os.environ[PORT_RANGE_ENV] = f"{first}-{first + width - 1}"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``make test`` asks pytest-xdist for a worker per core (``-n auto``); each worker
    starts its own embedded Postgres and Redis. Servers of your own (``DATABASE_URL`` /
    ``REDIS_URL``) would be shared, and every test empties them, so the suite then runs
    in one process."""
    if os.environ.get("DATABASE_URL") or os.environ.get("REDIS_URL"):
        return 0
    return None  # pytest-xdist's own count


@dataclass(frozen=True)
class Backends:
    database_url: str
    redis_url: str


@pytest.fixture(scope="session")
def backends(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backends]:
    """Real Postgres + Redis for the whole session, migrated to head."""
    database_url = os.environ.get("DATABASE_URL")
    redis_url = os.environ.get("REDIS_URL")
    servers = None
    if not database_url or not redis_url:
        servers = EmbeddedServers(tmp_path_factory.mktemp("reach-data")).start(
            need_postgres=not database_url, need_redis=not redis_url
        )
        database_url = database_url or servers.postgres.url  # type: ignore[union-attr]
        redis_url = redis_url or servers.redis.url  # type: ignore[union-attr]
    migrate.upgrade(database_url)
    try:
        yield Backends(database_url, redis_url)
    finally:
        if servers is not None:
            servers.stop()


# Kept between tests: a cache of a pure function (text and model → vector), so a gateway
# process a test starts reads the shipped tools' vectors instead of running the model
# (~8 s of CPU a start). Tests of the store itself empty it themselves.
KEPT_TABLES = (("gateway", "text_vector"),)


def reset_state(backends: Backends) -> None:
    """Empty every service table (not alembic's, nor ``KEPT_TABLES``) and the Redis
    database."""
    with psycopg.connect(libpq_url(backends.database_url), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname = ANY(%s)",
            (list(SCHEMAS),),
        ).fetchall()
        rows = [row for row in rows if tuple(row) not in KEPT_TABLES]
        if rows:
            tables = ", ".join(f'"{s}"."{t}"' for s, t in rows)
            conn.execute(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")
    client = redis.Redis.from_url(backends.redis_url)
    client.flushdb()
    client.close()


def shop_orders(backends: Backends, customer: str) -> list[str]:
    """The ids of the shop's orders for ``customer`` (what really happened, read from the
    shop's own table)."""
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        rows = conn.execute(
            "SELECT order_id FROM shop.sales_order WHERE customer = %s", (customer,)
        ).fetchall()
    return [str(row[0]) for row in rows]


@pytest.fixture
def clean_state(backends: Backends) -> Backends:
    reset_state(backends)
    return backends


@pytest.fixture
def service_env(clean_state: Backends) -> dict[str, Any]:
    """Settings keyword arguments that point a service at the test backends."""
    return {
        "database_url": clean_state.database_url,
        "redis_url": clean_state.redis_url,
        "log_level": "WARNING",
    }


@asynccontextmanager
async def app_client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client calling ``app`` in process, with its lifespan running. Start-up may
    embed every shipped tool's texts (about 2.5 s on an idle 2-core machine, the first
    time in a process): the library's 5 s default failed on a loaded one."""
    async with app_clients(app, ["127.0.0.1"]) as (client,):
        yield client


@asynccontextmanager
async def app_clients(
    app: FastAPI, addresses: Sequence[str]
) -> AsyncIterator[list[httpx.AsyncClient]]:
    """One httpx client of ``app`` per client address (what an unverified caller's rate
    limits and shares are keyed by), one lifespan for them all: see ``app_client``."""
    async with (
        LifespanManager(app, startup_timeout=STARTUP_TIMEOUT_S) as manager,
        AsyncExitStack() as stack,
    ):
        clients = []
        for address in addresses:
            transport = httpx.ASGITransport(app=manager.app, client=(address, 123))
            client = httpx.AsyncClient(transport=transport, base_url="http://localhost")
            clients.append(await stack.enter_async_context(client))
        yield clients


AppClientFactory = Callable[[FastAPI], Any]


@pytest.fixture
def make_client() -> AppClientFactory:
    return app_client


def assert_error(response: httpx.Response, status: int, reason: str) -> dict[str, Any]:
    """The response is the Reach error envelope with this status and ``reason``."""
    assert response.status_code == status, response.text[:500]
    body: dict[str, Any] = response.json()
    assert body["reason"] == reason, body
    assert body["message"]
    assert "trace_id" in body
    return body


KeyMaker = Callable[[str, list[str]], Awaitable[str]]


@pytest.fixture
def make_key(clean_state: Backends) -> KeyMaker:
    """``await make_key(user_id, roles)``: a real API key in ``auth.api_key``, as an
    operator creates one; every service verifies it."""

    async def make(user_id: str, roles: list[str]) -> str:
        engine = create_engine(clean_state.database_url, pool_size=1)
        try:
            async with create_sessionmaker(engine).begin() as session:
                created = await create_key(session, user_id, roles)
        finally:
            await engine.dispose()
        return created.key

    return make


@pytest.fixture(scope="session")
def shop_process(backends: Backends, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The shop as a real process, one for the session (a start costs seconds of imports)."""
    env = {"DATABASE_URL": backends.database_url, "REDIS_URL": backends.redis_url}
    with running_service("shop", free_port(), env, tmp_path_factory.mktemp("shop")) as shop:
        yield shop.url


@pytest.fixture(scope="module")
def shop_url(backends: Backends, shop_process: str) -> str:
    """The shop process for the module's tests, its data reset and the demo data seeded
    again first, as a shop starting on empty tables would."""
    reset_state(backends)
    asyncio.run(seed_shop(backends))
    return shop_process


async def seed_shop(backends: Backends) -> None:
    """The shop's demo data, written as the shop writes it when it starts on empty tables."""
    engine = create_engine(backends.database_url, pool_size=1)
    try:
        await seed_if_empty(create_sessionmaker(engine))
    finally:
        await engine.dispose()
