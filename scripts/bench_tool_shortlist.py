"""The agent's tool shortlist on a large catalogue: does it fit the tools' share of a model
request, and is the right tool in it?

    .venv/bin/python scripts/bench_tool_shortlist.py DATASET [--limit N] [--restricted 0.1]
    make bench-shortlist DATASET=path/to/routing/bfcl

DATASET is a folder with ``tools.jsonl`` and ``queries.jsonl`` (e.g. BFCL's 769 tools).
Every tool is registered in an in-process gateway (real Postgres + Redis, embedded); a
share of them (``--restricted``) is made admin-only. For each query, a viewer's turn is
shortlisted by the agent's own code (``agent.react.shortlist.offer`` through the agent's
``GatewayClient``, so ``GET /tools/list?q=``) within the default share of a request
(``Budget(...).tools`` at the default settings). Printed: the whole catalogue's
definitions against the share, the tools and tokens offered, how often the gold tool is
offered, admin-only tools the gateway ranked for the viewer, and the shortlist's latency.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Annotated

import httpx
import typer
from asgi_lifespan import LifespanManager
from bench_mcp_find_tools import catalogue
from bench_routing import register_all

from reach_common.embedded import temporary_backends

VIEWER = {"user_id": "bench-viewer", "roles": ["viewer"]}


async def bench(dataset: Path, limit: int | None, restricted_share: float) -> None:
    from agent.clients.gateway import GatewayClient
    from agent.clients.schemas import Caller
    from agent.react.context import Budget
    from agent.react.shortlist import RANKED, offer
    from agent.settings import Settings as AgentSettings
    from gateway.app import create_app
    from gateway.settings import Settings

    data = catalogue(dataset, limit, restricted_share)
    manifests, queries, ids, restricted = data.manifests, data.queries, data.ids, data.restricted
    fields = AgentSettings.model_fields
    budget = Budget(
        fields["context_token_budget"].default,
        fields["summary_token_budget"].default,
        fields["turn_token_reserve"].default,
        fields["tools_token_share"].default,
    )
    with temporary_backends() as (database_url, redis_url):
        settings = Settings(
            database_url=database_url,
            redis_url=redis_url,
            log_level="WARNING",
            route_rate_limit=None,  # a benchmark routes as fast as it can
            auth_mode="permissive",
            tool_auto_discovery=False,
        )
        async with LifespanManager(create_app(settings)) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://127.0.0.1", timeout=60
            ) as http:
                await register_all(http, manifests)
                gateway = GatewayClient(http, "http://127.0.0.1", timeout_s=60)
                caller = Caller(dict(VIEWER))
                listing = await gateway.list_tools(caller)
                whole = sum(t.definition_tokens for t in listing)
                print(
                    f"{len(manifests)} tools registered ({len(restricted)} admin-only); the "
                    f"viewer may use {len(listing)}: {whole:,} tokens of definitions against "
                    f"a share of {budget.tools:,} (CONTEXT_TOKEN_BUDGET "
                    f"{budget.request:,}, TOOLS_TOKEN_SHARE {budget.tools_share})"
                )
                offered_n: list[int] = []
                offered_tokens: list[int] = []
                latencies: list[float] = []
                counted = hits = leaked = 0
                for query in queries:
                    started = time.perf_counter()
                    turn = await offer(
                        gateway, caller, query["query"], listing, [], budget.tools, int
                    )
                    latencies.append((time.perf_counter() - started) * 1000)
                    chosen = {t.tool_id for t in turn.tools}
                    offered_n.append(len(chosen))
                    offered_tokens.append(sum(t.definition_tokens for t in turn.tools))
                    # The gateway's own answer, before the agent keeps the listing's tools.
                    raw = await gateway.ranked_tools(caller, query["query"], RANKED)
                    leaked += len({t.tool_id for t in raw} & restricted)
                    gold = {ids[g] for g in query["gold"] if g in ids}
                    if not gold or gold & restricted:
                        continue  # the viewer may not use the answer: not an accuracy case
                    counted += 1
                    hits += bool(gold & chosen)
    print(f"{len(queries)} queries, {counted} with a gold tool the viewer may use:")
    print(
        f"  tools offered a turn: median {statistics.median(offered_n):.0f} "
        f"(min {min(offered_n)}, max {max(offered_n)}); tokens: median "
        f"{statistics.median(offered_tokens):,.0f}, max {max(offered_tokens):,} "
        f"(share {budget.tools:,})"
    )
    print(f"  gold tool offered: {hits / max(counted, 1):.3f} ({hits}/{counted})")
    print(f"  admin-only tools ranked for the viewer by the gateway: {leaked}")
    p95 = statistics.quantiles(latencies, n=20)[-1] if len(latencies) > 1 else latencies[0]
    print(
        f"  shortlist (GET /tools/list?q= and the fit) p50 {statistics.median(latencies):.2f} "
        f"ms, p95 {p95:.2f} ms"
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
