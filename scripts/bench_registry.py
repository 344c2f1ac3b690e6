"""The registry at scale: registration rate, bulk registration, propagation, routing.

Starts throwaway embedded Postgres and Redis and two gateway replicas as real
uvicorn processes on loopback (one database, one Redis), then, with
``--tools`` generated tools (10,000 by default; distinct names, descriptions
and parameters, http endpoints that are never called):

1. registers them one by one through ``POST /tools/register`` on replica A,
   one call at a time, and prints the rate over the first and the last
   ``--window`` registrations (a change must cost the same at 10,000 tools as
   at 0: the end rate within 2x of the start rate);
2. at ``--checkpoint`` tools (1,000) and at the end, ``POST /run`` cache-miss
   latency on replica A (``dry_run``, distinct requests, p50 and p95);
3. at the end, how long a change made on A takes to be seen on replica B
   (``GET /tools/{id}`` there answers it), ``--probes`` times;
4. on a fresh pair of replicas and database, the same tools through
   ``POST /tools:batch`` (``--batch`` manifests per call): total seconds, and
   when replica B has them all, and when both replicas' routing indexes hold them
   (the indexes follow the registry in the background);
5. then how long a third replica takes to be ready (its registry loaded and
   its routing index built from the tools' vectors the first two stored in
   Postgres), and a fourth once that store is emptied (every text embedded
   again, as every start did before the store existed).

    make bench-registry
    python scripts/bench_registry.py --tools 2000 --checkpoint 500
    python scripts/bench_registry.py --bulk-only
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg

from reach_common.db import libpq_url
from reach_common.embedded import process_stack_env
from reach_common.processes import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]
ADMIN = {"X-User-Id": "bench-admin", "X-User-Roles": "admin"}  # permissive: a claimed admin

VERBS = "look up,list,cancel,create,update,export,summarise,archive,approve,track,count,rank"
NOUNS = (
    "invoices,shipments,tickets,sensors,flights,hotel rooms,payments,refunds,accounts,"
    "devices,alerts,metrics,playlists,recipes,contracts,vehicles,patients,courses,"
    "warehouses,campaigns,repositories,builds,policies,leases,subscriptions,meetings"
)
QUALIFIERS = (
    "overdue,recent,regional,archived,pending,priority,international,internal,"
    "customer,weekly,quarterly,failed,shared,draft,public,expired"
)
KEYS = "id,code,name,region,date,owner,status,number"


def _rng(seed: int) -> random.Random:
    return random.Random(seed)  # noqa: S311 - a reproducible catalogue, not a secret


def generated(i: int) -> dict[str, Any]:
    """Tool ``i`` of the generated catalogue: a distinct purpose, name and parameter."""
    pick = _rng(i)
    verb = pick.choice(VERBS.split(","))
    noun = pick.choice(NOUNS.split(","))
    qualifier = pick.choice(QUALIFIERS.split(","))
    key = pick.choice(KEYS.split(","))
    return {
        "tool_id": f"t{i:05d}_{verb.split()[0]}_{noun.split()[0]}",
        "name": f"{verb} {qualifier} {noun} {i}",
        "namespace": f"ns{i % 50}",
        "description": (
            f"{verb.capitalize()} the {qualifier} {noun} of unit {i} by {noun[:-1]} {key}. "
            f"Use for {qualifier} {noun} in site {i % 97} only."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                f"{key}_{i % 13}": {"type": "string", "description": f"the {noun[:-1]} {key}"}
            },
        },
        "endpoint": {"type": "http", "method": "GET", "url": "http://127.0.0.1:9/unused"},
        "permission": "public",
    }


def query(i: int) -> str:
    """A request for tool ``i``, worded differently each time (no two share a shape)."""
    tool = generated(i)
    words = tool["description"].split(".")[0].lower().split()
    _rng(-i).shuffle(words)
    return f"please {' '.join(words[:7])} for me, case {i}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


@dataclass
class Replicas:
    """Gateway processes on one throwaway database and Redis."""

    urls: list[str]
    env: dict[str, str]
    tmp: Path
    stack: ExitStack

    def start(self) -> float:
        """Start one more replica; the seconds until it is ready (``/readyz``: its
        registry loaded and its routing index built)."""
        log_dir = self.tmp / f"gateway-{len(self.urls)}"
        log_dir.mkdir()
        started = time.perf_counter()
        service = self.stack.enter_context(
            running_service("gateway", free_port(), self.env, log_dir, cwd=ROOT, ready_timeout=900)
        )
        self.urls.append(service.url)
        return time.perf_counter() - started

    def forget_vectors(self) -> None:
        """Empty the store of tool texts' vectors (``gateway.text_vector``), as before
        there was one: the next replica embeds every text again."""
        with psycopg.connect(libpq_url(self.env["DATABASE_URL"]), autocommit=True) as conn:
            conn.execute("TRUNCATE gateway.text_vector")


@contextmanager
def replicas(count: int) -> Iterator[Replicas]:
    """Fresh embedded Postgres and Redis, migrated, and ``count`` gateway processes."""
    with process_stack_env("reach-bench-registry-") as (tmp, base), ExitStack() as stack:
        env = {
            **base,
            "TOOL_AUTO_DISCOVERY": "false",
            "CALLER_RATE_LIMIT": "100000000/minute",
            "ROUTE_RATE_LIMIT": "",
            "ROUTE_CACHE_MIN_CONFIDENCE": "1.0",  # nothing cached: every /run is a miss
        }
        group = Replicas([], env, tmp, stack)
        for _ in range(count):
            group.start()
        yield group


async def register_one_by_one(client: httpx.AsyncClient, tools: range, times: list[float]) -> None:
    for i in tools:
        started = time.perf_counter()
        response = await client.post("/tools/register", json=generated(i), headers=ADMIN)
        if response.status_code != 201:
            raise SystemExit(f"register #{i}: {response.status_code} {response.text[:300]}")
        times.append(time.perf_counter() - started)


async def indexed(client: httpx.AsyncClient, tools: int) -> None:
    """Return once the replica's routing index holds all ``tools``: a ``/run`` brings its
    replica's index to the registry's revision before it routes."""
    body = {"user_query": query(tools - 1), "dry_run": True, "user_context": {"user_id": "bench"}}
    response = await client.post("/run", json=body, timeout=1800)
    if response.status_code != 200:
        raise SystemExit(f"/run after the bulk: {response.status_code} {response.text[:300]}")


async def run_misses(client: httpx.AsyncClient, targets: list[int]) -> list[float]:
    """``POST /run`` (dry run) latency in ms for a request per target tool; the first
    request warms the replica up and is not counted."""
    latencies: list[float] = []
    for n, i in enumerate(targets):
        body = {"user_query": query(i), "dry_run": True, "user_context": {"user_id": "bench"}}
        started = time.perf_counter()
        response = await client.post("/run", json=body)
        elapsed = (time.perf_counter() - started) * 1000
        route = response.json().get("route") or {}
        if n and route.get("route_hint") != "route_cache":
            latencies.append(elapsed)
    return latencies


async def seen_on(client: httpx.AsyncClient, tool_id: str, version: int) -> None:
    while True:
        response = await client.get(f"/tools/{tool_id}", headers=ADMIN)
        if response.status_code == 200 and response.json()["version"] == version:
            return
        await asyncio.sleep(0.002)


async def propagation(
    writer: httpx.AsyncClient, reader: httpx.AsyncClient, first: int, probes: int
) -> list[float]:
    """Seconds from the writer's answer to a change until the reader serves it."""
    delays = []
    for i in range(first, first + probes):
        response = await writer.post("/tools/register", json=generated(i), headers=ADMIN)
        answered = time.perf_counter()
        await asyncio.wait_for(seen_on(reader, response.json()["tool_id"], 1), 30)
        delays.append(time.perf_counter() - answered)
    return delays


def report_run(label: str, latencies: list[float]) -> None:
    print(
        f"  POST /run cache miss at {label}: p50 {statistics.median(latencies):.1f} ms, "
        f"p95 {pct(latencies, 95):.1f} ms (n={len(latencies)})"
    )


async def one_by_one(args: argparse.Namespace) -> None:
    with replicas(2) as group:
        a, b = group.urls
        async with (
            httpx.AsyncClient(base_url=a, timeout=120) as one,
            httpx.AsyncClient(base_url=b, timeout=120) as two,
        ):
            times: list[float] = []
            started = time.perf_counter()
            await register_one_by_one(one, range(args.checkpoint), times)
            at_checkpoint = await run_misses(
                one, _rng(1).sample(range(args.checkpoint), args.queries + 1)
            )
            await register_one_by_one(one, range(args.checkpoint, args.tools), times)
            total = time.perf_counter() - started
            at_end = await run_misses(one, _rng(2).sample(range(args.tools), args.queries + 1))
            delays = await propagation(one, two, args.tools, args.probes)
    window = min(args.window, len(times) // 2)
    start_rate = window / sum(times[:window])
    end_rate = window / sum(times[-window:])
    print(f"\none by one, POST /tools/register, {args.tools} tools, 2 replicas:")
    print(f"  total {total:.1f} s (including the /run checks at {args.checkpoint})")
    print(f"  rate over the first {window}: {start_rate:.1f} tools/s")
    print(
        f"  rate over the last {window}:  {end_rate:.1f} tools/s (end/start {end_rate / start_rate:.2f})"
    )
    print(
        f"  registration p50 {statistics.median(times) * 1000:.1f} ms, p95 {pct(times, 95) * 1000:.1f} ms"
    )
    report_run(f"{args.checkpoint} tools", at_checkpoint)
    report_run(f"{args.tools} tools", at_end)
    print(
        f"  a change on replica A seen on replica B at {args.tools} tools: "
        f"p50 {statistics.median(delays) * 1000:.1f} ms, max {max(delays) * 1000:.1f} ms "
        f"(n={len(delays)})"
    )


async def bulk(args: argparse.Namespace) -> None:
    with replicas(2) as group:
        a, b = group.urls
        async with (
            httpx.AsyncClient(base_url=a, timeout=600) as one,
            httpx.AsyncClient(base_url=b, timeout=120) as two,
        ):
            started = time.perf_counter()
            for first in range(0, args.tools, args.batch):
                batch = [generated(i) for i in range(first, min(first + args.batch, args.tools))]
                response = await one.post("/tools:batch", json={"tools": batch}, headers=ADMIN)
                if response.status_code != 201:
                    raise SystemExit(
                        f"batch at #{first}: {response.status_code} {response.text[:300]}"
                    )
            total = time.perf_counter() - started
            last = generated(args.tools - 1)["tool_id"]
            await asyncio.wait_for(seen_on(two, last, 1), 600)
            on_b = time.perf_counter() - started
            listed = (await two.get("/tools/list", headers=ADMIN)).json()
            # The routing indexes follow in the background; a /run waits for its replica's.
            await asyncio.gather(*(indexed(c, args.tools) for c in (one, two)))
            on_both = time.perf_counter() - started
        # Replicas joining (a restart, a scale-out): once reading the vectors the first two
        # stored, then with the store emptied, as every start was before there was one.
        stored = group.start()
        group.forget_vectors()
        embedded = group.start()
    print(f"\nbulk, POST /tools:batch ({args.batch} per call), {args.tools} tools, 2 replicas:")
    print(
        f"  total {total:.1f} s ({args.tools / total:.0f} tools/s); all on replica B after {on_b:.1f} s"
    )
    print(f"  replica B lists {len(listed['tools'])} tools at revision {listed['revision']}")
    print(f"  both replicas' routing indexes hold them all after {on_both:.1f} s")
    print(
        f"  a third replica started at {args.tools} tools: ready in {stored:.1f} s (the "
        f"tools' vectors read from Postgres); a fourth, the store emptied first: {embedded:.1f} s "
        "(every text embedded)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--checkpoint", type=int, default=1_000)
    parser.add_argument("--window", type=int, default=500, help="registrations per rate figure")
    parser.add_argument("--queries", type=int, default=100, help="/run requests per checkpoint")
    parser.add_argument("--probes", type=int, default=20, help="changes timed across replicas")
    parser.add_argument("--batch", type=int, default=1_000, help="manifests per POST /tools:batch")
    parser.add_argument("--skip-bulk", action="store_true")
    parser.add_argument("--bulk-only", action="store_true", help="only step 4 (and 5)")
    args = parser.parse_args()
    if not args.bulk_only:
        asyncio.run(one_by_one(args))
    if not args.skip_bulk:
        asyncio.run(bulk(args))


if __name__ == "__main__":
    main()
