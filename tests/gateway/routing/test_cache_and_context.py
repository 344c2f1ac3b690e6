"""Route cache and session context against real Redis."""

from __future__ import annotations

import numpy as np
from redis.asyncio import Redis

from gateway.routing.cache import RouteCache, abstract, normalise, scope_of
from gateway.routing.context import OUTPUT_LIMIT, SessionContext, previous_arguments
from reach_common.embeddings import Embedder


def unit(v: list[float]) -> np.ndarray:
    a = np.zeros(384, dtype=np.float32)
    a[: len(v)] = v
    return (a / np.linalg.norm(a)).astype(np.float32)


def test_values_become_typed_placeholders() -> None:
    assert abstract("SKU2024001 还有多少库存?") == abstract("sku2024003还有多少库存")
    assert abstract("SKU2024001 还有多少库存") == "<id:sku> 还有多少库存"
    assert abstract("where is order SO20240715001") == "where is order <id:so>"
    assert abstract('buy 2 of SKU2024003 for "Ada"') == "buy <num> of <id:sku> for <str>"
    assert abstract("2024年7月的销售报表") == "<date> 的销售报表"
    assert abstract("sales on 2024-07-15 vs March 2024") == "sales on <date> vs <date>"
    assert abstract("ingest q3_report.pdf") == "ingest <file>"
    assert abstract("I may buy 3.5 units") == "i may buy <num> units"
    assert normalise("  Hello   World?! ") == "hello world"


async def test_exact_hit_is_by_shape_and_needs_no_vector(redis_client: Redis) -> None:
    cache = RouteCache(redis_client)
    scope = scope_of(3, {"inventory_query", "order_query"})
    await cache.put(
        scope, "SKU2024001 还有多少库存?", None, "inventory_query", 0.8, "semantic_match"
    )
    hit = await cache.get_exact(scope, "  sku2024003   还有多少库存 ")
    assert hit is not None
    assert (hit.tool_id, hit.match, hit.via) == ("inventory_query", "exact", "semantic_match")
    assert hit.key == "<id:sku> 还有多少库存"
    assert await cache.get_exact(scope, "SO20240715001 还有多少库存") is None  # another kind of id
    stored = await redis_client.hgetall(RouteCache._keys(scope)[0])
    assert "sku2024001" not in repr(stored).lower()  # a route, never a call's arguments


async def test_a_dropped_route_is_gone_for_every_replica(redis_client: Redis) -> None:
    one, two = RouteCache(redis_client), RouteCache(redis_client)
    scope = scope_of(2, {"a", "b"})
    await one.put(scope, "first", unit([1, 0]), "a", 0.9)
    await one.put(scope, "second", unit([0, 1]), "b", 0.9)
    hit = await one.get_similar(scope, unit([1, 0.1]))
    assert hit is not None
    assert (hit.tool_id, hit.key, hit.position) == ("a", "first", 0)
    await one.drop(scope, hit)
    assert await one.get_exact(scope, "first") is None
    assert await one.get_similar(scope, unit([1, 0.1])) is None
    assert await two.get_similar(scope, unit([1, 0.1])) is None  # loads the tombstone
    assert (await two.get_similar(scope, unit([0, 1]))).tool_id == "b"  # type: ignore[union-attr]


async def test_semantic_hit_only_above_threshold(redis_client: Redis) -> None:
    cache = RouteCache(redis_client, threshold=0.92)
    scope = scope_of(1, {"a", "b"})
    await cache.put(scope, "first", unit([1, 0, 0]), "a", 0.7)
    near = await cache.get_similar(scope, unit([1, 0.2, 0]))  # cosine ~0.98
    far = await cache.get_similar(scope, unit([1, 1, 0]))  # cosine ~0.71
    assert near is not None
    assert near.tool_id == "a"
    assert near.similarity > 0.92
    assert far is None


async def test_scope_changes_with_permissions_and_revision(redis_client: Redis) -> None:
    cache = RouteCache(redis_client)
    admin_scope = scope_of(5, {"order_query", "inventory_query"})
    await cache.put(admin_scope, "where is my order", unit([0, 1]), "order_query", 0.9)
    fewer_rights = scope_of(5, {"inventory_query"})
    next_revision = scope_of(6, {"order_query", "inventory_query"})
    assert await cache.get_exact(fewer_rights, "where is my order") is None
    assert await cache.get_similar(fewer_rights, unit([0, 1])) is None
    assert await cache.get_exact(next_revision, "where is my order") is None
    assert await cache.get_exact(admin_scope, "where is my order") is not None


async def test_a_second_replica_sees_new_entries(redis_client: Redis) -> None:
    one, two = RouteCache(redis_client), RouteCache(redis_client)
    scope = scope_of(1, {"a", "b"})
    await one.put(scope, "q1", unit([1, 0]), "a", 0.5)
    assert (await two.get_similar(scope, unit([1, 0]))).tool_id == "a"  # type: ignore[union-attr]
    await one.put(scope, "q2", unit([0, 1]), "b", 0.5)
    assert (await two.get_similar(scope, unit([0, 1]))).tool_id == "b"  # type: ignore[union-attr]


async def test_real_paraphrase_hits_semantically(redis_client: Redis) -> None:
    embedder = Embedder(threads=1)
    cache = RouteCache(redis_client, threshold=0.92)
    scope = scope_of(1, {"inventory_query"})

    def shape(query: str) -> np.ndarray:  # what the router embeds for the cache
        return embedder.embed_one(abstract(query))

    query = "how many units of SKU2024001 are in stock"
    await cache.put(scope, query, shape(query), "inventory_query", 0.7)
    same = await cache.get_similar(scope, shape("How many units are in stock of SKU2024003?"))
    other = await cache.get_similar(scope, shape("cancel my order SO20240715001"))
    assert same is not None
    assert other is None


async def test_session_context_is_scoped_trimmed_and_expires(redis_client: Redis) -> None:
    context = SessionContext(redis_client, max_calls=2, ttl_s=60)
    await context.remember("u1", "s1", "inventory_query", {"sku": "SKU2024001"}, {"n": "x" * 5000})
    await context.remember("u1", "s1", "order_query", {"order_id": "SO20240715001"}, "ok")
    await context.remember("u1", "s1", "sales_query", {"sku": "SKU2024002"}, "ok")
    calls = await context.recent("u1", "s1")
    assert [c.tool_id for c in calls] == ["sales_query", "order_query"]
    assert await context.recent("u2", "s1") == []
    assert await context.recent("u1", None) == []
    assert 0 < await redis_client.ttl(SessionContext.key("u1", "s1")) <= 60
    assert previous_arguments(calls) == {"order_id": "SO20240715001", "sku": "SKU2024002"}

    await context.remember("u9", "s9", "t", {}, "y" * 5000)
    (only,) = await context.recent("u9", "s9")
    assert len(only.output) == OUTPUT_LIMIT
