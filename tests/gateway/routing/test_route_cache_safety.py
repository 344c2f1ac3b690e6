"""The route cache cannot spread a mistake: POST /run in process against the real shop.

A cached route is keyed by the query's shape (values abstracted), served only while
its tool is still a coarse-stage candidate for the current query, never replays
arguments, and holds only confident routes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from gateway.routing.cache import abstract, scope_of
from gateway.routing.service import Router
from reach_common.auth.caller import Caller

OPS: dict[str, Any] = {"user_id": "ops_cache", "roles": ["ops_admin"]}


def router_of(app: FastAPI) -> Router:
    router: Router = app.state.runtime.router
    return router


def ops_scope(router: Router) -> str:
    caller = Caller(user_id=OPS["user_id"], roles=frozenset(OPS["roles"]), via="user_context")
    return scope_of(router.registry.revision, router.visible(caller, None))


async def run(gateway: httpx.AsyncClient, query: str) -> dict[str, Any]:
    response = await gateway.post("/run", json={"user_query": query, "user_context": OPS})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize("match", ["exact", "semantic"])
async def test_a_wrong_cached_route_does_not_spread_to_a_query_with_another_id(
    app: FastAPI, gateway: httpx.AsyncClient, match: str
) -> None:
    router = router_of(app)
    scope = ops_scope(router)
    wrong = "report_monthly"  # visible to ops_admin, unrelated to stock
    if match == "exact":
        seen, query = "SKU2024001 还有多少库存", "SKU2024003 还有多少库存"
    else:
        seen, query = "stock on hand for SKU2024001", "how many units of SKU2024003 are in stock"
    # A past query was routed wrongly, confidently, and cached. For "semantic" it is
    # cached under its own shape, with a vector as close as can be to the new query's.
    shape_vector = router.embedder.embed_one(abstract(query))
    await router.cache.put(scope, seen, shape_vector, wrong, 0.9, "llm_rerank")
    probe, _ = await router.cache.probe(scope, query)
    assert (probe is not None) == (match == "exact")

    body = await run(gateway, query)

    assert body["tool_id"] == "inventory_query"
    assert body["arguments"] == {"sku": "SKU2024003"}
    assert body["route"]["route_hint"] != "route_cache"
    assert f"cached route {wrong} ({match} hit" in body["route"]["why"]
    assert "dropped" in body["route"]["why"]
    # Dropped, not just skipped: the wrong route is gone from the cache, the right one
    # (confident) took its place, and the next query of this shape is served it.
    exact = await router.cache.get_exact(scope, seen)
    assert exact is None or exact.tool_id != wrong
    assert await router.cache.get_similar(scope, shape_vector) is not None
    assert (await router.cache.get_similar(scope, shape_vector)).tool_id == "inventory_query"  # type: ignore[union-attr]
    again = await run(gateway, query.replace("SKU2024003", "SKU2024002"))
    assert (again["tool_id"], again["route"]["route_hint"]) == ("inventory_query", "route_cache")
    assert again["arguments"] == {"sku": "SKU2024002"}


async def test_cached_arguments_are_never_reused_for_another_id(
    app: FastAPI, gateway: httpx.AsyncClient
) -> None:
    first = await run(gateway, "SKU2024001 的库存情况")
    assert first["tool_id"] == "inventory_query", first
    assert first["arguments"] == {"sku": "SKU2024001"}

    second = await run(gateway, "SKU2024003 的库存情况")

    assert second["tool_id"] == "inventory_query"
    assert second["route"]["route_hint"] == "route_cache", second["route"]
    assert "arguments filled from this query" in second["route"]["why"]
    assert second["arguments"] == {"sku": "SKU2024003"}
    assert second["output"]["sku"] == "SKU2024003"
    assert second["route"]["candidates"], "a hit still shows the coarse stage it was checked on"
    stored = await router_of(app).cache.get_exact(
        ops_scope(router_of(app)), "SKU2024003 的库存情况"
    )
    assert stored is not None
    assert "SKU2024001" not in repr(stored)  # the route, not the call


async def test_a_low_confidence_route_is_not_cached(
    app: FastAPI, gateway: httpx.AsyncClient
) -> None:
    router = router_of(app)
    query = "sales figures of SKU2024002 lately"
    default = router.settings
    router.settings = dataclasses.replace(default, cache_min_confidence=0.99)
    try:
        first = await run(gateway, query)
        second = await run(gateway, query)
    finally:
        router.settings = default
    assert first["tool_id"] == second["tool_id"] == "sales_query"
    assert first["route"]["confidence"] < 0.99
    assert "not cached (confidence" in first["route"]["why"]
    assert second["route"]["route_hint"] != "route_cache"
    assert await router.cache.get_exact(ops_scope(router), query) is None

    # The same route, confident enough under the default bar, is cached and served.
    assert first["route"]["confidence"] >= default.cache_min_confidence
    await run(gateway, query)
    cached = await run(gateway, query)
    assert cached["route"]["route_hint"] == "route_cache"
