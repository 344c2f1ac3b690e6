"""Gateway overhead: the same load on shop directly and through ``/tools/{id}/invoke``.

Starts throwaway embedded Postgres and Redis, then shop and the gateway as real
uvicorn processes on loopback, registers the shipped ``inventory_query``
manifest (its per-tool rate limit lifted so the load measures the path, not the
limiter's refusals — the limiter still runs on every call), and drives both
targets with the same load, twice: closed loop (``--concurrency`` callers
issuing ``--requests`` calls as fast as answers come: throughput, and latency
under saturation) and fixed rate (the same callers paced to ``--rate`` calls/s,
below saturation: the latency a call gains by going through the gateway).
Prints p50, p99 and req/s for each target, and the gateway's overhead.

    make bench-gateway
    python scripts/bench_gateway.py --requests 4000 --concurrency 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil

from reach_common import migrate
from reach_common.embedded import EmbeddedServers
from reach_common.processes import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]
SKU = "SKU2024001"


@contextmanager
def service(module: str, env: dict[str, str], log_dir: Path) -> Iterator[tuple[str, int]]:
    """``python -m <module>`` on a free loopback port; SIGTERM on exit."""
    with running_service(module, free_port(), env, log_dir, cwd=ROOT, ready_timeout=60) as svc:
        yield svc.url, svc.pid


Call = Callable[[httpx.AsyncClient], Awaitable[httpx.Response]]
Result = tuple[list[float], float, int]  # latencies (ms), req/s, errors


async def load(call: Call, requests: int, concurrency: int) -> tuple[list[float], float, int]:
    """Closed loop: ``concurrency`` workers share ``requests`` calls. Latencies in ms."""
    latencies: list[float] = []
    errors = 0
    remaining = requests
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:

        async def worker() -> None:
            nonlocal remaining, errors
            while remaining > 0:
                remaining -= 1
                started = time.perf_counter()
                response = await call(client)
                latencies.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return latencies, requests / elapsed, errors


async def paced(
    call: Call, requests: int, concurrency: int, rate: float
) -> tuple[list[float], float, int]:
    """Open loop at ``rate`` calls/s over ``concurrency`` callers. Latency counts from each
    call's scheduled start, so a stall is not hidden by the callers waiting it out."""
    latencies: list[float] = []
    errors = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        start = time.perf_counter() + 0.05

        async def worker(first: int) -> None:
            nonlocal errors
            for n in range(first, requests, concurrency):
                scheduled = start + n / rate
                delay = scheduled - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                response = await call(client)
                latencies.append((time.perf_counter() - scheduled) * 1000)
                if response.status_code != 200:
                    errors += 1

        await asyncio.gather(*(worker(i) for i in range(concurrency)))
        elapsed = time.perf_counter() - start
    return latencies, requests / elapsed, errors


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))
    return ordered[index]


def register(gateway: str) -> None:
    manifest = json.loads((ROOT / "manifests" / "inventory_query.json").read_text("utf-8"))
    manifest["rate_limit"] = "100000000/minute"
    # Permissive mode: a claimed registry admin may register.
    admin = {"X-User-Id": "bench-admin", "X-User-Roles": "admin"}
    response = httpx.post(gateway + "/tools/register", json=manifest, headers=admin, timeout=30)
    response.raise_for_status()


class CpuMeter:
    """CPU seconds the services spend, per target: what a call costs, whatever the load."""

    def __init__(self, pids: dict[str, int]) -> None:
        self._processes = {name: psutil.Process(pid) for name, pid in pids.items()}
        self.spent: dict[str, dict[str, float]] = {}

    def _now(self) -> dict[str, float]:
        return {n: sum(p.cpu_times()[:2]) for n, p in self._processes.items()}

    async def measure(self, target: str, work: Awaitable[Result]) -> Result:
        before = self._now()
        result = await work
        after = self._now()
        spent = self.spent.setdefault(target, {})
        for name in after:
            spent[name] = spent.get(name, 0.0) + after[name] - before[name]
        return result

    def per_call_ms(self, target: str, calls: int) -> str:
        spent = self.spent.get(target, {})
        return ", ".join(f"{n} {s / calls * 1000:.2f}" for n, s in sorted(spent.items()))


async def run(args: argparse.Namespace, shop: str, gateway: str, cpu: CpuMeter) -> None:
    body = {"arguments": {"sku": SKU}, "user_context": {"user_id": "bench", "roles": []}}

    async def direct(client: httpx.AsyncClient) -> httpx.Response:
        return await client.get(f"{shop}/api/inventory/{SKU}")

    async def through(client: httpx.AsyncClient) -> httpx.Response:
        return await client.post(f"{gateway}/tools/inventory_query/invoke", json=body)

    for call in (direct, through):  # warm connections and caches
        await load(call, args.warmup, args.concurrency)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}; shop, gateway, "
        "Postgres, Redis and this client share it"
    )
    targets = (("shop direct", direct), ("via gateway", through))
    # Rounds alternate the two targets, so a burst of other work on the machine
    # lands on both rather than on whichever ran at the time.
    per_round = max(1, args.requests // args.rounds)
    closed: dict[str, list[Result]] = {name: [] for name, _ in targets}
    for _ in range(args.rounds):
        for name, call in targets:
            closed[name].append(await cpu.measure(name, load(call, per_round, args.concurrency)))
    merged = {name: merge(results) for name, results in closed.items()}
    report(
        f"closed loop: {per_round * args.rounds} calls per target, {args.concurrency} callers, "
        f"no pause ({args.rounds} alternating rounds)",
        merged,
    )
    calls = per_round * args.rounds
    for name, _ in targets:
        print(f"CPU ms per call, {name}: {cpu.per_call_ms(name, calls)}")
    rate = args.rate or round(0.5 * min(rps for _, rps, _ in merged.values()))
    fixed: dict[str, list[Result]] = {name: [] for name, _ in targets}
    for _ in range(args.rounds):
        for name, call in targets:
            fixed[name].append(await paced(call, per_round, args.concurrency, rate))
    report(
        f"fixed rate: {per_round * args.rounds} calls per target at {rate} req/s over "
        f"{args.concurrency} callers ({args.rounds} alternating rounds)",
        {name: merge(results) for name, results in fixed.items()},
    )


def merge(results: list[Result]) -> Result:
    """Latencies pooled; throughput as calls over the rounds' summed durations."""
    latencies = [x for lat, _, _ in results for x in lat]
    seconds = sum(len(lat) / rps for lat, rps, _ in results)
    return latencies, len(latencies) / seconds, sum(e for _, _, e in results)


def report(title: str, results: dict[str, Result]) -> None:
    print(f"\n{title}")
    print(f"{'target':<14}{'p50 ms':>10}{'p99 ms':>10}{'req/s':>10}{'errors':>8}")
    summary = {}
    for name, (latencies, rate, errors) in results.items():
        p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
        summary[name] = (p50, p99)
        print(f"{name:<14}{p50:>10.2f}{p99:>10.2f}{rate:>10.0f}{errors:>8}")
    d50 = summary["via gateway"][0] - summary["shop direct"][0]
    d99 = summary["via gateway"][1] - summary["shop direct"][1]
    verdict = "met" if d50 <= 5 else "missed"
    print(f"overhead: p50 {d50:+.2f} ms, p99 {d99:+.2f} ms (target p50 <= 5 ms: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="Calls per target.")
    parser.add_argument("--concurrency", type=int, default=32, help="Concurrent callers.")
    parser.add_argument("--warmup", type=int, default=300, help="Warm-up calls per target.")
    parser.add_argument("--rounds", type=int, default=5, help="Alternating rounds per run.")
    parser.add_argument(
        "--rate",
        type=float,
        default=0,
        help="Fixed-rate run, calls/s; default half the slower closed-loop throughput.",
    )
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="reach-bench-gateway-"))
    servers = EmbeddedServers(data_dir / "data").start()
    try:
        assert servers.postgres is not None
        assert servers.redis is not None
        migrate.upgrade(servers.postgres.url)
        env = {
            "DATABASE_URL": servers.postgres.url,
            "REDIS_URL": servers.redis.url,
            "LOG_LEVEL": "WARNING",
        }
        with service("shop", env, data_dir) as (shop, shop_pid):
            gateway_env = {**env, "SHOP_URL": shop, "CALLER_RATE_LIMIT": "100000000/minute"}
            with service("gateway", gateway_env, data_dir) as (gateway, gateway_pid):
                register(gateway)
                cpu = CpuMeter({"gateway": gateway_pid, "shop": shop_pid})
                asyncio.run(run(args, shop, gateway, cpu))
    finally:
        servers.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
