"""Stored tool outputs (``/handles``): owned by one caller, searched on their own, expiring.

The gateway keeps a tool output that is over its budget here and hands the caller a
handle; ``POST /retrieve`` with that handle searches just that output, for its owner
only. Another user, a delegate-less caller naming someone else, and everyone after the
expiry get the same 404 (or 403 for a forged delegation); the shared knowledge base
never sees the output.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from reach_common.db import create_engine, create_sessionmaker
from reach_common.embeddings import Embedder
from retriever.app import create_app
from retriever.handles import render
from retriever.handles.render import _compact as compact
from retriever.handles.render import chunks, records
from retriever.handles.service import HandlePolicy, HandleStore
from retriever.settings import Settings
from tests.conftest import KeyMaker, assert_error

Sql = Callable[..., list[tuple[Any, ...]]]
ALICE = {"X-User-Id": "alice"}
BOB = {"X-User-Id": "bob"}
GATEWAY = {"X-User-Id": "svc-gateway", "X-User-Roles": "retriever_writer"}
POLICY = HandlePolicy(
    ttl_s=60, max_ttl_s=60, chunk_chars=1500, max_per_owner=10, bm25_k1=0.9, bm25_b=0.4
)


def catalogue(count: int = 3000) -> dict[str, Any]:
    """A large output whose one interesting record sits deep inside."""
    items = [
        {"sku": f"SKU{n:07d}", "name": f"Product {n}", "bin": f"A-{n % 97:02d}", "price": n}
        for n in range(count)
    ]
    if count > 2718:
        items[2718]["bin"] = "QUARANTINE-ZETA-9"
    return {"exported_at": "2026-12-01", "items": items}


@pytest.fixture
async def retriever(
    service_env: dict[str, Any], embedder: Embedder, make_client: Any
) -> AsyncIterator[Callable[..., Any]]:
    clients: list[Any] = []

    async def start(**overrides: Any) -> httpx.AsyncClient:
        settings = Settings(**{**service_env, "llm_provider": "offline", **overrides})
        manager = make_client(create_app(settings, embedder=embedder))
        clients.append(manager)
        client: httpx.AsyncClient = await manager.__aenter__()
        return client

    yield start
    for manager in reversed(clients):
        await manager.__aexit__(None, None, None)


async def store(client: httpx.AsyncClient, headers: dict[str, str], **body: Any) -> Any:
    response = await client.post(
        "/handles",
        json={"output": catalogue(), "tool_id": "catalog_export", **body},
        headers=headers,
    )
    assert response.status_code == 201, response.text
    return response.json()


async def search(
    client: httpx.AsyncClient, handle: str, headers: dict[str, str], query: str = "SKU0002718 bin"
) -> httpx.Response:
    return await client.post("/retrieve", json={"query": query, "handle": handle}, headers=headers)


def test_records_cover_every_leaf_once_with_its_path() -> None:
    value = {"a": {"b": [1, "x" * 50]}, "long": "y" * 100, "odd key": True}
    assert list(records(value, 40)) == [
        "$.a.b[0] 1",
        "$.a.b[1] (characters 0-40) " + "x" * 40,
        "$.a.b[1] (characters 40-80) " + "x" * 10,
        "$.long (characters 0-40) " + "y" * 40,
        "$.long (characters 40-80) " + "y" * 40,
        "$.long (characters 80-120) " + "y" * 20,
        '$["odd key"] true',
    ]
    packed = chunks(catalogue(50), 200)
    assert all(len(chunk) <= 200 for chunk in packed)
    assert "\n".join(packed).count('"sku"') == 50


def test_a_deeply_nested_output_is_serialised_about_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each part was serialised whole to learn whether it fits: depth x size (a 16 MB
    output nested 880 deep took 38 s). Its size is now counted bottom-up."""
    serialised = 0

    def counting(value: Any) -> str:
        nonlocal serialised
        text = compact(value)
        serialised += len(text)
        return text

    monkeypatch.setattr(render, "_compact", counting)
    value: Any = "x" * 100_000
    for _ in range(300):
        value = [value, {"n": 1}]
    packed = chunks(value, 2_000)
    assert serialised < 3 * 100_000
    assert "".join(packed).count("x") == 100_000
    assert "\n".join(packed).count('{"n":1}') == 300


async def test_owner_finds_the_deep_record_and_nobody_else_can(
    retriever: Callable[..., Any], sql: Sql
) -> None:
    client = await retriever()
    stored = await store(client, ALICE)
    assert stored["handle"].startswith("out_")
    assert len(stored["handle"]) == 36
    assert stored["chunks"] > 50
    assert stored["total_bytes"] > 100_000
    assert stored["tool_id"] == "catalog_export"

    found = await search(client, stored["handle"], ALICE)
    assert found.status_code == 200, found.text
    body = found.json()
    assert body["mode"] == "bm25"
    top = body["chunks"][0]
    assert "QUARANTINE-ZETA-9" in top["text"]
    assert "$.items[2718]" in top["text"]
    assert top["source"] == stored["handle"]
    assert top["metadata"]["tool_id"] == "catalog_export"

    for headers in (BOB, {}):  # another user; anonymous
        response = await search(client, stored["handle"], headers)
        assert response.status_code in (401, 404), response.text
    assert_error(await search(client, stored["handle"], BOB), 404, "handle_not_found")
    assert_error(
        await client.get(f"/handles/{stored['handle']}", headers=BOB), 404, "handle_not_found"
    )
    assert_error(
        await client.delete(f"/handles/{stored['handle']}", headers=BOB), 404, "handle_not_found"
    )
    # The shared knowledge base never sees the output.
    assert sql("SELECT count(*) FROM retriever.chunk") == [(0,)]
    shared = await client.post("/retrieve", json={"query": "QUARANTINE-ZETA-9"}, headers=ALICE)
    assert shared.status_code == 200
    assert shared.json()["chunks"] == []


async def test_only_a_delegate_may_act_for_another_user(retriever: Callable[..., Any]) -> None:
    client = await retriever()
    on_behalf = {"X-Reach-On-Behalf-Of": "alice"}
    stored = await store(client, {**GATEWAY, **on_behalf})
    assert (await search(client, stored["handle"], ALICE)).status_code == 200
    assert (await search(client, stored["handle"], {**GATEWAY, **on_behalf})).status_code == 200
    # The gateway's own identity owns nothing; bob cannot pose as a delegate.
    assert_error(await search(client, stored["handle"], GATEWAY), 404, "handle_not_found")
    forged = await search(client, stored["handle"], {**BOB, **on_behalf})
    error = assert_error(forged, 403, "insufficient_permission")
    assert "RETRIEVER_DELEGATE_ROLES" in error["message"]
    refused = await client.post(
        "/handles", json={"output": [1]}, headers={**BOB, "X-Reach-On-Behalf-Of": "alice"}
    )
    assert_error(refused, 403, "insufficient_permission")


async def test_strict_mode_needs_a_verified_owner(
    retriever: Callable[..., Any], make_key: KeyMaker
) -> None:
    alice_key = await make_key("alice", ["ops_viewer"])
    bob_key = await make_key("bob", ["ops_viewer"])
    service_key = await make_key("svc-gateway-tools", ["retriever_writer"])
    client = await retriever(auth_mode="strict")
    as_service = {"Authorization": f"Bearer {service_key}", "X-Reach-On-Behalf-Of": "alice"}
    stored = await store(client, as_service)
    alice = {"Authorization": f"Bearer {alice_key}"}
    bob = {"Authorization": f"Bearer {bob_key}"}
    assert (await search(client, stored["handle"], alice)).status_code == 200
    assert_error(await search(client, stored["handle"], bob), 404, "handle_not_found")
    # A claimed identity counts for nothing in strict mode.
    assert_error(await search(client, stored["handle"], ALICE), 401, "unauthenticated")


async def test_expired_handles_are_unreadable_then_swept(
    retriever: Callable[..., Any], sql: Sql, service_env: dict[str, Any]
) -> None:
    client = await retriever()
    stored = await store(client, ALICE, ttl_s=3600)
    kept = await store(client, ALICE)
    sql(
        "UPDATE retriever.handle SET expires_at = now() - interval '1 second' WHERE id = %s"
        " RETURNING id",
        (stored["handle"],),
    )
    assert_error(await search(client, stored["handle"], ALICE), 404, "handle_not_found")
    assert (await search(client, kept["handle"], ALICE)).status_code == 200
    engine = create_engine(service_env["database_url"], pool_size=1)
    try:
        sweeper = HandleStore(create_sessionmaker(engine), POLICY)
        assert await sweeper.sweep() == 1
        assert await sweeper.sweep() == 0
    finally:
        await engine.dispose()
    assert sql("SELECT id FROM retriever.handle") == [(kept["handle"],)]
    assert sql(
        "SELECT count(*) FROM retriever.handle_chunk WHERE handle_id = %s", (stored["handle"],)
    ) == [(0,)]


async def test_bad_handle_searches_are_clear_errors(retriever: Callable[..., Any]) -> None:
    client = await retriever(handle_max_per_owner=1)
    stored = await store(client, ALICE)
    handle = stored["handle"]
    cases = [
        ({"query": "x", "handle": handle, "sources": ["a.md"]}, 422, "invalid_handle_search"),
        ({"query": "x", "handle": handle, "mode": "vector"}, 422, "invalid_handle_search"),
        ({"query": "x", "handle": handle, "rewrite": "hyde"}, 422, "invalid_handle_search"),
        ({"query": "  ", "handle": handle}, 422, "empty_query"),
        ({"query": "x", "handle": handle, "top_k": 0}, 422, "top_k_out_of_range"),
        ({"query": "x", "handle": "out_" + "0" * 32}, 404, "handle_not_found"),
    ]
    for body, status, reason in cases:
        assert_error(await client.post("/retrieve", json=body, headers=ALICE), status, reason)
    nothing = await search(client, handle, ALICE, query="zebra unicorn")
    assert nothing.status_code == 200
    assert nothing.json()["chunks"] == []
    assert_error(
        await client.post("/handles", json={"output": [1]}, headers=ALICE), 429, "too_many_handles"
    )
    assert_error(await client.post("/handles", json={"output": [1]}), 401, "unauthenticated")
