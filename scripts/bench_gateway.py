"""Gateway overhead: the same load on shop directly and through ``/tools/{id}/invoke``.

Starts throwaway embedded Postgres and Redis, then shop and the gateway as real
uvicorn processes on loopback, registers the shipped ``inventory_query``
manifest (its per-tool rate limit lifted so the load measures the path, not the
limiter's refusals — the limiter still runs on every call), and drives both
targets with the same load, twice: closed loop (``--concurrency`` callers
issuing ``--requests`` calls as fast as answers come: throughput, and latency
under saturation) and fixed rate (the same callers paced to ``--rate`` calls/s,
below saturation: the latency a call gains by going through the gateway).
Prints p50, p99 and req/s for each target, the gateway's overhead, and each figure
against its target: at the fixed rate, overhead p50 <= 1 ms and gateway CPU <= 1 ms per
call; closed loop, throughput through the gateway >= 70% of direct.

``--transport both`` (the default) starts two gateways, one per tool-call HTTP
client (``TOOL_HTTP_CLIENT=h11`` and ``httpx``), and drives them in the same
alternating rounds, so one run compares the clients under the same machine
load: the gateway process's CPU ms per call and the p50 via the gateway, per
round, and the median of the per-round ratios httpx / h11. ``--lease both`` does the
same for rate-limit counting: one h11 gateway leasing (``RATE_LIMIT_LEASE_SHARE``'s
default) and one counting call by call (``RATE_LIMIT_LEASE_SHARE=0``), ratios
call-by-call / leased.

    make bench-gateway
    python scripts/bench_gateway.py --requests 4000 --concurrency 32
    python scripts/bench_gateway.py --transport httpx
    python scripts/bench_gateway.py --transport h11 --lease both
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import psutil

from reach_common import migrate
from reach_common.embedded import EmbeddedServers
from reach_common.processes import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]
SKU = "SKU2024001"
CLIENTS = ("h11", "httpx")
# Rate-limit counting: the default lease share, and call by call.
LEASES = {"leased": {}, "call-by-call": {"RATE_LIMIT_LEASE_SHARE": "0"}}
SHOP = "shop direct"


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


def register(gateways: list[str]) -> None:
    manifest = json.loads((ROOT / "manifests" / "inventory_query.json").read_text("utf-8"))
    manifest["rate_limit"] = "100000000/minute"
    # Permissive mode: a claimed registry admin may register.
    admin = {"X-User-Id": "bench-admin", "X-User-Roles": "admin"}
    response = httpx.post(gateways[0] + "/tools/register", json=manifest, headers=admin, timeout=30)
    response.raise_for_status()
    version = response.json()["version"]
    for gateway in gateways:  # the others hear of it through the registry channel
        deadline = time.monotonic() + 30
        while True:
            tool = httpx.get(gateway + "/tools/inventory_query", headers=admin, timeout=30)
            if tool.status_code == 200 and tool.json().get("version") == version:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{gateway} does not list the registered tool")
            time.sleep(0.1)


class CpuMeter:
    """CPU seconds the services spend, per target: what a call costs, whatever the load."""

    def __init__(self, pids: dict[str, int]) -> None:
        self._processes = {name: psutil.Process(pid) for name, pid in pids.items()}
        self.spent: dict[str, dict[str, float]] = {}
        self.rounds: dict[str, list[dict[str, float]]] = {}  # target -> per round, per process

    def fresh(self) -> CpuMeter:
        """A meter of the same processes with nothing counted yet."""
        return CpuMeter({name: process.pid for name, process in self._processes.items()})

    def _now(self) -> dict[str, float]:
        return {n: sum(p.cpu_times()[:2]) for n, p in self._processes.items()}

    async def measure(self, target: str, work: Awaitable[Result]) -> Result:
        before = self._now()
        result = await work
        after = self._now()
        spent = self.spent.setdefault(target, {})
        for name in after:
            spent[name] = spent.get(name, 0.0) + after[name] - before[name]
        self.rounds.setdefault(target, []).append({n: after[n] - before[n] for n in after})
        return result

    def per_call_ms(self, target: str, calls: int) -> str:
        spent = self.spent.get(target, {})
        return ", ".join(f"{n} {s / calls * 1000:.2f}" for n, s in sorted(spent.items()))


async def run(
    args: argparse.Namespace,
    shop: str,
    gateways: dict[str, str],
    cpu: CpuMeter,
    pair: tuple[str, str] | None,
) -> None:
    """``pair``: two of ``gateways`` to compare round by round (``compare``)."""
    body = {"arguments": {"sku": SKU}, "user_context": {"user_id": "bench", "roles": []}}

    async def direct(client: httpx.AsyncClient) -> httpx.Response:
        return await client.get(f"{shop}/api/inventory/{SKU}")

    def through(gateway: str) -> Call:
        async def call(client: httpx.AsyncClient) -> httpx.Response:
            return await client.post(f"{gateway}/tools/inventory_query/invoke", json=body)

        return call

    targets: list[tuple[str, Call]] = [(SHOP, direct)]
    targets += [(name, through(url)) for name, url in gateways.items()]
    for _, call in targets:  # warm connections and caches
        await load(call, args.warmup, args.concurrency)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}, Python {platform.python_version()}; shop, "
        f"{'the gateways' if len(gateways) > 1 else 'gateway'}, Postgres, Redis and this "
        "client share it"
    )
    # Rounds alternate the targets, so a burst of other work on the machine
    # lands on all of them rather than on whichever ran at the time.
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
        closed=True,
    )
    calls = per_round * args.rounds
    cpu_report(cpu, [name for name, _ in targets], calls, fixed=False)
    if pair is not None:
        compare(closed, cpu, per_round, pair)
    rate = args.rate or round(0.5 * min(rps for _, rps, _ in merged.values()))
    fixed: dict[str, list[Result]] = {name: [] for name, _ in targets}
    fixed_cpu = cpu.fresh()
    for _ in range(args.rounds):
        for name, call in targets:
            work = paced(call, per_round, args.concurrency, rate)
            fixed[name].append(await fixed_cpu.measure(name, work))
    report(
        f"fixed rate: {per_round * args.rounds} calls per target at {rate} req/s over "
        f"{args.concurrency} callers ({args.rounds} alternating rounds)",
        {name: merge(results) for name, results in fixed.items()},
        closed=False,
    )
    cpu_report(fixed_cpu, [name for name, _ in targets], calls, fixed=True)
    if pair is not None:
        compare(fixed, fixed_cpu, per_round, pair)


def compare(
    rounds: dict[str, list[Result]], cpu: CpuMeter, per_round: int, pair: tuple[str, str]
) -> None:
    """Two gateways, round by round: gateway CPU per call and p50 via the gateway, and the
    medians of the per-round ratios second / first."""
    a, b = pair
    print(f"\n{a} vs {b}, per round (gateway process CPU ms per call; p50 ms via the gateway):")
    print(f"{'round':<7}{'cpu a':>9}{'cpu b':>9}{'ratio':>7}{'p50 a':>9}{'p50 b':>9}{'ratio':>7}")
    cpu_ratios: list[float] = []
    p50_ratios: list[float] = []
    for n, (ra, rb) in enumerate(zip(rounds[a], rounds[b], strict=True)):
        pa, pb = percentile(ra[0], 50), percentile(rb[0], 50)
        ca = cpu.rounds[a][n][a] / per_round * 1000
        cb = cpu.rounds[b][n][b] / per_round * 1000
        p50_ratios.append(pb / pa)
        cpu_ratios.append(cb / ca)
        print(f"{n + 1:<7}{ca:>9.3f}{cb:>9.3f}{cb / ca:>7.2f}{pa:>9.2f}{pb:>9.2f}{pb / pa:>7.2f}")
    print(
        f"b / a ({b} / {a}), median of rounds: CPU per call {spread(cpu_ratios)}, "
        f"p50 {spread(p50_ratios)}"
    )


def spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f} (rounds {min(ratios):.2f}–{max(ratios):.2f})"


def gateway_target(kind: str) -> str:
    return f"gateway {kind}"


def merge(results: list[Result]) -> Result:
    """Latencies pooled; throughput as calls over the rounds' summed durations."""
    latencies = [x for lat, _, _ in results for x in lat]
    seconds = sum(len(lat) / rps for lat, rps, _ in results)
    return latencies, len(latencies) / seconds, sum(e for _, _, e in results)


# Issue 16's targets: at a fixed rate below saturation, overhead p50 and gateway CPU per
# call; at saturation (closed loop), throughput through the gateway against direct.
OVERHEAD_P50_MS = 1.0
CPU_PER_CALL_MS = 1.0
SATURATION_SHARE = 0.70


def verdict(met: bool) -> str:
    return "met" if met else "missed"


def report(title: str, results: dict[str, Result], *, closed: bool) -> None:
    print(f"\n{title}")
    width = max(14, *(len(name) + 2 for name in results))
    print(f"{'target':<{width}}{'p50 ms':>10}{'p99 ms':>10}{'req/s':>10}{'errors':>8}")
    summary = {}
    for name, (latencies, rate, errors) in results.items():
        p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
        summary[name] = (p50, p99, rate)
        print(f"{name:<{width}}{p50:>10.2f}{p99:>10.2f}{rate:>10.0f}{errors:>8}")
    for name in summary:
        if name == SHOP:
            continue
        d50 = summary[name][0] - summary[SHOP][0]
        d99 = summary[name][1] - summary[SHOP][1]
        line = f"overhead, {name}: p50 {d50:+.2f} ms, p99 {d99:+.2f} ms"
        if closed:
            share = summary[name][2] / summary[SHOP][2]
            line += (
                f"; throughput {share:.0%} of direct "
                f"(target >= {SATURATION_SHARE:.0%}: {verdict(share >= SATURATION_SHARE)})"
            )
        else:
            line += f" (target p50 <= {OVERHEAD_P50_MS} ms: {verdict(d50 <= OVERHEAD_P50_MS)})"
        print(line)


def cpu_report(cpu: CpuMeter, targets: list[str], calls: int, *, fixed: bool) -> None:
    """CPU ms per call of each process, per target; at a fixed rate, the gateway's against
    the target."""
    for name in targets:
        print(f"CPU ms per call, {name}: {cpu.per_call_ms(name, calls)}")
        if fixed and name != SHOP:
            ms = cpu.spent.get(name, {}).get(name, 0.0) / calls * 1000
            print(
                f"gateway CPU per call, {name}: {ms:.2f} ms "
                f"(target <= {CPU_PER_CALL_MS} ms: {verdict(ms <= CPU_PER_CALL_MS)})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="Calls per target.")
    parser.add_argument("--concurrency", type=int, default=32, help="Concurrent callers.")
    parser.add_argument("--warmup", type=int, default=300, help="Warm-up calls per target.")
    parser.add_argument("--rounds", type=int, default=5, help="Alternating rounds per run.")
    parser.add_argument(
        "--transport",
        choices=[*CLIENTS, "both"],
        default="both",
        help="The gateways' tool-call HTTP client (TOOL_HTTP_CLIENT); both: one gateway each.",
    )
    parser.add_argument(
        "--lease",
        choices=["on", "both"],
        default="on",
        help="Rate-limit counting: on (the default lease share), or both: one gateway leasing "
        "and one counting call by call (with one --transport).",
    )
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
        kinds = CLIENTS if args.transport == "both" else (args.transport,)
        variants = {gateway_target(kind): {"TOOL_HTTP_CLIENT": kind} for kind in kinds}
        if args.lease == "both":
            if len(kinds) > 1:
                parser.error("--lease both compares one transport: give --transport")
            client = {"TOOL_HTTP_CLIENT": kinds[0]}
            variants = {f"gateway {name}": {**client, **extra} for name, extra in LEASES.items()}
        if len(variants) == 1:
            variants = {"via gateway": next(iter(variants.values()))}
        names = list(variants)
        pair = (names[0], names[1]) if len(names) == 2 else None
        with service("shop", env, data_dir) as (shop, shop_pid), ExitStack() as gateways:
            gateway_env = {**env, "SHOP_URL": shop, "CALLER_RATE_LIMIT": "100000000/minute"}
            gateway_env["ROUTE_RATE_LIMIT"] = ""
            urls: dict[str, str] = {}
            pids = {"shop": shop_pid}
            for n, (name, extra) in enumerate(variants.items()):
                log_dir = data_dir / f"gateway-{n}"
                log_dir.mkdir()
                urls[name], pids[name] = gateways.enter_context(
                    service("gateway", {**gateway_env, **extra}, log_dir)
                )
            register(list(urls.values()))
            asyncio.run(run(args, shop, urls, CpuMeter(pids), pair))
    finally:
        servers.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
