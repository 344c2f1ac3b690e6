"""``find_tools`` on a large catalogue: is the right tool in its top 5 as often as it is
among ``POST /run``'s candidates, never an empty answer, and only tools the caller may
call?

    .venv/bin/python scripts/bench_mcp_find_tools.py DATASET [--limit N] [--restricted 0.1]

DATASET is a folder with ``tools.jsonl`` and ``queries.jsonl`` (e.g. BFCL's 769 tools).
Every tool is registered in an in-process gateway (real Postgres + Redis, embedded);
a share of them (``--restricted``) is made admin-only, and the questions are asked by a
caller without that role, through the routed virtual server's real ``/mcp/{name}``
endpoint (JSON-RPC ``tools/call`` of ``find_tools``) and through ``POST /run`` (dry run,
its route candidates). Queries whose gold tool is admin-only count for the permission
check, not for accuracy.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from asgi_lifespan import LifespanManager
from bench_routing import ADMIN, manifest, map_ids, read_queries, read_tools, register_all

from reach_common.embedded import temporary_backends

VIEWER = {"X-User-Id": "bench-viewer", "X-User-Roles": "viewer"}
MCP_HEADERS = {"accept": "application/json, text/event-stream", **VIEWER}
K = 5


async def find_tools(client: httpx.AsyncClient, server: str, task: str) -> list[str]:
    """The tool ids ``find_tools`` answers for ``task`` (raises on an MCP error)."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "find_tools", "arguments": {"task": task, "k": K}},
    }
    response = await client.post(f"/mcp/{server}", json=call, headers=MCP_HEADERS)
    response.raise_for_status()
    result = response.json()["result"]
    if result.get("isError"):
        raise RuntimeError(f"find_tools failed: {result}")
    body = json.loads(result["content"][0]["text"])
    return [tool["tool_id"] for tool in body["tools"]]


async def run_candidates(client: httpx.AsyncClient, query: str, session: str) -> list[str]:
    request = {"user_query": query, "dry_run": True, "session_id": session}
    response = await client.post("/run", json=request, headers=VIEWER)
    route = response.json().get("route") or {}
    return [c["tool_id"] for c in route.get("candidates") or []][:K]


@dataclass(frozen=True)
class Catalogue:
    """A dataset's tools as manifests, a share of them admin-only, and its queries."""

    manifests: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    ids: dict[str, str]  # original id -> manifest id
    restricted: set[str]  # admin-only manifest ids


def catalogue(dataset: Path, limit: int | None, restricted_share: float) -> Catalogue:
    tools = read_tools(dataset / "tools.jsonl")
    queries = read_queries(dataset / "queries.jsonl")[:limit]
    ids = map_ids([t["tool_id"] for t in tools])
    rng = random.Random(7)  # noqa: S311 - a fixed, reproducible draw, not a secret
    restricted = {ids[t["tool_id"]] for t in tools if rng.random() < restricted_share}
    manifests = []
    for tool in tools:
        m = manifest(tool, ids[tool["tool_id"]])
        if m["tool_id"] in restricted:
            m["permission"], m["scope"] = "admin", ["admin"]
        manifests.append(m)
    return Catalogue(manifests, queries, ids, restricted)


async def bench(dataset: Path, limit: int | None, restricted_share: float) -> None:
    from gateway.app import create_app
    from gateway.settings import Settings

    data = catalogue(dataset, limit, restricted_share)
    manifests, queries, ids, restricted = data.manifests, data.queries, data.ids, data.restricted
    with temporary_backends() as (database_url, redis_url):
        settings = Settings(
            database_url=database_url,
            redis_url=redis_url,
            log_level="WARNING",
            route_rate_limit=None,  # a benchmark routes as fast as it can
            auth_mode="permissive",
            tool_auto_discovery=False,
            route_cache_min_confidence=1.0,  # nothing cached: /run shows candidates each time
        )
        app = create_app(settings)
        async with LifespanManager(app) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://127.0.0.1", timeout=60
            ) as client:
                started = time.perf_counter()
                await register_all(client, manifests)
                print(
                    f"registered {len(manifests)} tools ({len(restricted)} admin-only) in "
                    f"{time.perf_counter() - started:.1f} s"
                )
                server = {"name": "catalogue", "routed": True, "top_k": K}
                made = await client.post("/mcp/virtual-servers", json=server, headers=ADMIN)
                if made.status_code != 201:
                    raise SystemExit(f"virtual server: {made.status_code} {made.text}")
                await compare(client, server["name"], queries, ids, restricted)


async def compare(
    client: httpx.AsyncClient,
    server: str,
    queries: list[dict[str, Any]],
    ids: dict[str, str],
    restricted: set[str],
) -> None:
    hits = {"find_tools": 0, "/run candidates": 0}
    counted = empty = leaked = 0
    latencies: list[float] = []
    for number, query in enumerate(queries):
        started = time.perf_counter()
        found = await find_tools(client, server, query["query"])
        latencies.append((time.perf_counter() - started) * 1000)
        candidates = await run_candidates(client, query["query"], f"bench-{number}")
        empty += not found
        leaked += len(restricted & (set(found) | set(candidates)))
        gold = {ids[g] for g in query["gold"] if g in ids}
        if not gold or gold & restricted:
            continue  # the caller may not use the answer: a permission case, not accuracy
        counted += 1
        hits["find_tools"] += bool(gold & set(found))
        hits["/run candidates"] += bool(gold & set(candidates))
    print(f"\n{len(queries)} queries, {counted} with a gold tool the caller may use:")
    for name, hit in hits.items():
        print(f"  gold in the top {K} of {name:<16} {hit / max(counted, 1):.3f} ({hit}/{counted})")
    print(f"  empty find_tools answers: {empty}")
    print(f"  admin-only tools shown to a viewer (find_tools or /run): {leaked}")
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) > 1 else latencies[0]
    print(
        f"  find_tools latency through /mcp: p50 {statistics.median(latencies):.2f} ms, "
        f"p95 {p95:.2f} ms"
    )


def main(
    dataset: Annotated[Path, typer.Argument(help="Folder with tools.jsonl and queries.jsonl.")],
    limit: Annotated[int | None, typer.Option(help="At most this many queries.")] = None,
    restricted: Annotated[float, typer.Option(help="Share of tools made admin-only.")] = 0.1,
) -> None:
    if not (dataset / "tools.jsonl").exists():
        raise typer.BadParameter(f"{dataset} has no tools.jsonl")
    asyncio.run(bench(dataset, limit, restricted))


if __name__ == "__main__":
    typer.run(main)
