"""A route-cache miss does only the work its answer needs.

The query's shape (values abstracted) costs a second model run. It is embedded when
something can use it, the tools' examples or an LLM re-rank's semantic route cache, and
left out otherwise; the answer is the same either way. The route cache's probe brings
the vectors other replicas added in its one round trip, so a semantic lookup needs none.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import numpy as np
import pytest
from fastapi import FastAPI
from redis.asyncio import Redis

from gateway.app import create_app
from gateway.routing.cache import RouteCache, scope_of
from gateway.settings import Settings
from reach_common.embeddings import Embedder, Vectors
from tests.conftest import Backends, app_client
from tests.gateway.conftest import ADMIN, http_tool

CALLER = {"user_id": "miss_path"}
SKU = {"type": "string", "pattern": "^SKU\\d{7}$", "description": "The product's SKU."}


class RecordingEmbedder(Embedder):
    """The real model; remembers which texts each call embedded."""

    def __init__(self) -> None:
        super().__init__(threads=1)
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        self.calls.append(list(texts))
        return super().embed(texts, batch_size=batch_size)


def tools() -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"sku": SKU}, "required": ["sku"]}
    url = "http://127.0.0.1:9/unused"  # dry runs only: nothing is called
    return [
        http_tool(
            "plain_stock",
            url,
            namespace="plain",
            description="Stock level of a product: units on hand in the warehouse.",
            input_schema=schema,
        ),
        http_tool(
            "plain_weather",
            url,
            namespace="plain",
            description="Weather forecast for a city: temperature and rain.",
        ),
        http_tool(
            "shown_stock",
            url,
            namespace="shown",
            description="Stock level of a product: units on hand in the warehouse.",
            input_schema=schema,
            examples=["how many units of SKU2024001 are left"],
        ),
    ]


@pytest.fixture(scope="module")
def recording() -> RecordingEmbedder:
    return RecordingEmbedder()


@pytest.fixture(scope="module")
def app(backends: Backends, recording: RecordingEmbedder) -> FastAPI:
    settings = Settings(
        database_url=backends.database_url,
        redis_url=backends.redis_url,
        log_level="WARNING",
        tool_auto_discovery=False,
        caller_rate_limit=None,
        route_rate_limit=None,
    )
    return create_app(settings, embedder=recording)


@pytest.fixture(scope="module")
async def gateway(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(app) as client:
        for manifest in tools():
            response = await client.post("/tools/register", json=manifest, headers=ADMIN)
            assert response.status_code in (200, 201), response.text
        # The index takes the registrations in (their texts embedded) before any test
        # counts the model's calls: a lagging update would otherwise land inside one.
        body = {"user_query": "index warm-up", "dry_run": True, "user_context": CALLER}
        await client.post("/run", json=body)
        yield client


async def dry_run(client: httpx.AsyncClient, query: str, domain: str) -> dict[str, Any]:
    body = {"user_query": query, "dry_run": True, "user_context": {**CALLER, "domain": domain}}
    response = await client.post("/run", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_offline_without_examples_the_model_runs_once_per_miss(
    gateway: httpx.AsyncClient, recording: RecordingEmbedder
) -> None:
    recording.calls.clear()
    first = await dry_run(gateway, "how many units of SKU2024001 are in stock", "plain")

    assert (first["tool_id"], first["arguments"]) == ("plain_stock", {"sku": "SKU2024001"})
    assert recording.calls == [["how many units of SKU2024001 are in stock"]]

    # The exact route cache needs no vector: the same shape with another value is a hit,
    # its arguments filled from this query.
    second = await dry_run(gateway, "how many units of SKU2024007 are in stock", "plain")
    assert second["route"]["route_hint"] == "route_cache", second["route"]
    assert second["arguments"] == {"sku": "SKU2024007"}


async def test_with_examples_in_view_the_shape_is_embedded_too(
    gateway: httpx.AsyncClient, recording: RecordingEmbedder
) -> None:
    recording.calls.clear()
    body = await dry_run(gateway, "units of SKU2024005 left in the warehouse", "shown")

    assert (body["tool_id"], body["arguments"]) == ("shown_stock", {"sku": "SKU2024005"})
    assert recording.calls == [
        ["units of SKU2024005 left in the warehouse", "units of <id:sku> left in the warehouse"]
    ]


async def test_a_query_without_values_is_its_own_shape(
    gateway: httpx.AsyncClient, recording: RecordingEmbedder
) -> None:
    recording.calls.clear()
    body = await dry_run(gateway, "will it rain in the city tomorrow", "plain")

    assert body["tool_id"] == "plain_weather"
    assert recording.calls == [["will it rain in the city tomorrow"]]


def unit(position: int) -> np.ndarray:
    vector = np.zeros(384, dtype=np.float32)
    vector[position] = 1.0
    return vector


async def commands(redis: Redis, *names: str) -> int:
    stats = await redis.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{name}", {}).get("calls", 0)) for name in names)


async def test_the_probe_brings_new_vectors_so_the_lookup_needs_no_round_trip(
    redis_client: Redis,
) -> None:
    writer, reader = RouteCache(redis_client), RouteCache(redis_client)
    scope = scope_of(5, {"a", "b"})
    await writer.put(scope, "first", unit(0), "a", 0.9)
    await writer.put(scope, "second", unit(1), "b", 0.9)

    cached, length = await reader.probe(scope, "something else")
    before = await commands(redis_client, "lrange", "llen", "lindex")
    hit = await reader.get_similar(scope, unit(1), length)

    assert (cached, length) == (None, 2)
    assert hit is not None
    assert (hit.tool_id, hit.position) == ("b", 1)
    assert await commands(redis_client, "lrange", "llen", "lindex") == before


async def test_concurrent_probes_mirror_each_vector_once(redis_client: Redis) -> None:
    writer, reader = RouteCache(redis_client), RouteCache(redis_client)
    scope = scope_of(6, {"a", "b", "c"})
    await writer.put(scope, "first", unit(0), "a", 0.9)
    await writer.put(scope, "second", unit(1), "b", 0.9)
    await asyncio.gather(*(reader.probe(scope, "q") for _ in range(3)))
    await writer.put(scope, "third", unit(2), "c", 0.9)

    _, length = await reader.probe(scope, "q")
    hit = await reader.get_similar(scope, unit(2), length)

    # Positions match the list in Redis (a drop writes its tombstone there).
    assert length == 3
    assert hit is not None
    assert (hit.tool_id, hit.position) == ("c", 2)


async def test_a_probe_without_similar_fetches_no_vectors(redis_client: Redis) -> None:
    writer, reader = RouteCache(redis_client), RouteCache(redis_client)
    scope = scope_of(7, {"a"})
    await writer.put(scope, "first", unit(0), "a", 0.9)

    before = await commands(redis_client, "lrange")
    _, length = await reader.probe(scope, "q", similar=False)

    assert length == 1
    assert await commands(redis_client, "lrange") == before
