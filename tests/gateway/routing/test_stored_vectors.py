"""The routing index's vectors are kept in Postgres: a gateway that starts reads the
vectors of texts any gateway embedded before and runs the model only for the rest.

Each test uses embedders of its own (a new embedder holds no vector in memory), so
what the model ran is what the store did not have."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import httpx
import numpy as np
import psycopg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.app import create_app
from gateway.registry.vectors import RETENTION_DAYS, StoredVectors
from gateway.routing.index import index_texts
from gateway.settings import Settings
from reach_common.db import create_engine, create_sessionmaker, libpq_url
from reach_common.embeddings import Embedder, VectorCache, Vectors
from reach_common.processes import free_port
from tests.conftest import Backends, app_client
from tests.gateway.conftest import shipped as shipped_manifest

TEXTS = [
    "Stock level of a product: units on hand in the warehouse.",
    "Weather forecast for a city: temperature and rain.",
    "cancel order SO20240715001",
]
CALLER = {"user_id": "stored_vectors"}


class CountingEmbedder(Embedder):
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, **options: int) -> None:
        super().__init__(threads=1, **options)
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        self.embedded.extend(texts)
        return super().embed(texts, batch_size=batch_size)


@pytest.fixture
def store_db(clean_state: Backends) -> str:
    """The test database with the vector store emptied (tests otherwise keep it)."""
    with psycopg.connect(libpq_url(clean_state.database_url), autocommit=True) as conn:
        conn.execute("TRUNCATE gateway.text_vector")
    return clean_state.database_url


@pytest.fixture
async def engine(store_db: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(store_db, pool_size=2)
    yield engine
    await engine.dispose()


def rows(database_url: str) -> list[tuple[str, bytes, int, float]]:
    """(model, digest, bytes of the vector, age in days) of every stored vector."""
    with psycopg.connect(libpq_url(database_url)) as conn:
        found = conn.execute(
            "SELECT model, digest, length(embedding),"
            " extract(epoch FROM now() - used_at) / 86400 FROM gateway.text_vector"
        ).fetchall()
    return [(m, bytes(d), n, float(age)) for m, d, n, age in found]


def sql(database_url: str, statement: str, *params: object) -> None:
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute(statement, params)


async def test_a_second_embedder_reads_what_the_first_stored(
    engine: AsyncEngine, store_db: str
) -> None:
    first = CountingEmbedder()
    await StoredVectors(create_sessionmaker(engine), VectorCache(first)).fill(TEXTS, start=True)
    assert sorted(first.embedded) == sorted(TEXTS)
    stored = rows(store_db)
    assert {model for model, *_ in stored} == {first.identity}
    assert {digest for _, digest, *_ in stored} == {VectorCache.key(t) for t in TEXTS}
    assert {size for *_, size, _ in stored} == {first.dimensions * 4}

    second = CountingEmbedder()
    cache = VectorCache(second)
    await StoredVectors(create_sessionmaker(engine), cache).fill([*TEXTS, TEXTS[0]])
    assert second.embedded == []  # every vector came from the store
    assert cache.missing(TEXTS) == {}
    # Exactly what the model says for each text.
    np.testing.assert_array_equal(cache.embed(TEXTS), Embedder.embed(second, TEXTS))

    # Only a text no one embedded before runs the model.
    third = CountingEmbedder()
    await StoredVectors(create_sessionmaker(engine), VectorCache(third)).fill(
        [*TEXTS, "monthly sales report"]
    )
    assert third.embedded == ["monthly sales report"]


async def test_what_was_read_stays_held_when_the_cache_fills_up(
    engine: AsyncEngine, store_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry larger than the cache: the vectors read and those embedded are all
    held afterwards (the index looks them all up), not the last ones alone."""
    await StoredVectors(create_sessionmaker(engine), VectorCache(CountingEmbedder())).fill(TEXTS)
    monkeypatch.setattr(VectorCache, "_LIMIT", len(TEXTS))
    model = CountingEmbedder()
    cache = VectorCache(model)
    everything = [*TEXTS, "monthly sales report"]
    await StoredVectors(create_sessionmaker(engine), cache).fill(everything, start=True)
    assert model.embedded == ["monthly sales report"]
    assert cache.missing(everything) == {}


async def test_another_model_setting_never_reads_these_vectors(
    engine: AsyncEngine, store_db: str
) -> None:
    await StoredVectors(create_sessionmaker(engine), VectorCache(CountingEmbedder())).fill(TEXTS)
    shorter = CountingEmbedder(max_tokens=8)  # truncation changes the vectors
    await StoredVectors(create_sessionmaker(engine), VectorCache(shorter)).fill(TEXTS)
    assert sorted(shorter.embedded) == sorted(TEXTS)
    assert len({model for model, *_ in rows(store_db)}) == 2


async def test_a_start_keeps_what_it_read_and_deletes_what_went_unused(
    engine: AsyncEngine, store_db: str
) -> None:
    await StoredVectors(create_sessionmaker(engine), VectorCache(CountingEmbedder())).fill(TEXTS)
    old = f"{RETENTION_DAYS + 10} days"
    sql(store_db, "UPDATE gateway.text_vector SET used_at = now() - %s::interval", old)
    # A row another gateway read two days ago stays; the others are all old.
    recent = VectorCache.key(TEXTS[2])
    sql(
        store_db,
        "UPDATE gateway.text_vector SET used_at = now() - interval '2 days' WHERE digest = %s",
        recent,
    )

    later = CountingEmbedder()
    await StoredVectors(create_sessionmaker(engine), VectorCache(later)).fill(TEXTS[:1], start=True)
    assert later.embedded == []
    ages = {digest: age for _, digest, _, age in rows(store_db)}
    assert set(ages) == {VectorCache.key(TEXTS[0]), recent}  # TEXTS[1]: unused, deleted
    assert ages[VectorCache.key(TEXTS[0])] < 1  # read by this start: used again
    assert 1.9 < ages[recent] < 2.1  # not read here: left as it was


async def test_a_damaged_row_is_embedded_again_and_repaired(
    engine: AsyncEngine, store_db: str
) -> None:
    first = CountingEmbedder()
    await StoredVectors(create_sessionmaker(engine), VectorCache(first)).fill(TEXTS)
    sql(
        store_db,
        "UPDATE gateway.text_vector SET embedding = '\\x00'::bytea WHERE digest = %s",
        VectorCache.key(TEXTS[1]),
    )
    second = CountingEmbedder()
    cache = VectorCache(second)
    await StoredVectors(create_sessionmaker(engine), cache).fill(TEXTS)
    assert second.embedded == [TEXTS[1]]
    assert {size for *_, size, _ in rows(store_db)} == {second.dimensions * 4}
    np.testing.assert_allclose(cache.embed(TEXTS[1:2]), Embedder.embed(second, TEXTS[1:2]))


async def test_without_postgres_the_model_serves_and_nothing_fails() -> None:
    nowhere = f"postgresql://reach:reach@127.0.0.1:{free_port()}/reach"
    engine = create_engine(nowhere, pool_size=1)
    try:
        model = CountingEmbedder()
        cache = VectorCache(model)
        await StoredVectors(create_sessionmaker(engine), cache).fill(TEXTS, start=True)
    finally:
        await engine.dispose()
    assert sorted(model.embedded) == sorted(TEXTS)
    assert cache.missing(TEXTS) == {}


def gateway_settings(database_url: str, redis_url: str, manifests: Path) -> Settings:
    return Settings(
        database_url=database_url,
        redis_url=redis_url,
        log_level="WARNING",
        tool_auto_discovery=True,
        manifests_dir=str(manifests),
        caller_rate_limit=None,
        route_rate_limit=None,
    )


async def route(client: httpx.AsyncClient, query: str) -> str:
    body = {"user_query": query, "dry_run": True, "user_context": CALLER}
    response = await client.post("/run", json=body)
    assert response.status_code == 200, response.text
    tool_id: str = response.json()["tool_id"]
    return tool_id


async def test_a_gateway_restarted_embeds_none_of_its_tools_again(
    store_db: str, clean_state: Backends, tmp_path: Path
) -> None:
    shipped = [shipped_manifest(name) for name in ("inventory_query", "sales_query")]
    for manifest in shipped:
        (tmp_path / f"{manifest['tool_id']}.json").write_text(json.dumps(manifest), "utf-8")
    texts = set(index_texts(shipped))
    settings = gateway_settings(store_db, clean_state.redis_url, tmp_path)
    query = "how many units of SKU2024003 are left in stock?"

    first = CountingEmbedder()
    async with app_client(create_app(settings, embedder=first)) as client:
        first_route = await route(client, query)
    assert texts <= set(first.embedded)
    assert len(rows(store_db)) >= len(texts)

    # As after a test's reset: the registry emptied, so the folder's tools are registered
    # again (each tool's own vector) and indexed again; the model runs for none of it.
    sql(store_db, "TRUNCATE gateway.tool, gateway.registry_state, gateway.tool_history")
    again = CountingEmbedder()
    async with app_client(create_app(settings, embedder=again)) as client:
        assert again.embedded == []  # started: registered and indexed from the store
        assert await route(client, query) == first_route == "inventory_query"
    assert texts.isdisjoint(again.embedded)  # the query alone ran the model
