"""MCP overhead: the same tool through ``/mcp`` ``tools/call`` and ``POST /tools/{id}/invoke``.

Starts throwaway embedded Postgres and Redis, then shop and the gateway as real
processes on loopback, registers the shipped ``inventory_query`` (its rate
limit lifted; the limiter still runs on every call), then calls it
sequentially, one call at a time, over five paths in interleaved rounds of one
run (the order turns every round, so no path always runs on a warmer process):

- ``POST invoke``: a keep-alive ``httpx`` client posting to the invoke endpoint;
- ``raw 2025-11-25`` and ``raw 2026-07-28``: the *same* ``httpx`` client posting
  one JSON-RPC ``tools/call`` to ``/mcp`` with the protocol headers, at a
  handshake-era revision (what ``initialize`` negotiates) and at the
  per-request revision (``_meta`` envelope, no handshake). The same client on
  both sides, so the difference to invoke is what the gateway's MCP layer
  costs (the SDK's transport and dispatcher included): **the fair figure**;
- ``SDK initialize`` and ``SDK discover``: the official ``mcp`` ``ClientSession``
  over Streamable HTTP (``httpx2``), opened once with ``initialize()``
  (2025-11-25) or ``discover()`` (2026-07-28): what an MCP client sees, its own
  cost included.

Prints p50 and p99 per path, the median over rounds of the paired difference
to invoke (each round's p50 minus invoke's p50 in that round: robust to a
machine whose load moves between rounds), and the gateway process's CPU ms per
call on each path.

    make bench-mcp
    python scripts/bench_mcp.py --calls 2000 --rounds 10
    python scripts/bench_mcp.py --sse     # answers as SSE streams (MCP_JSON_RESPONSE=false)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import psutil
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from reach_common.embedded import process_stack_env
from reach_common.processes import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]
TOOL = "inventory_query"
SKU = "SKU2024001"
ADMIN = {"X-User-Id": "bench-admin", "X-User-Roles": "admin"}
HANDSHAKE, PER_REQUEST = "2025-11-25", "2026-07-28"
INVOKE = "POST invoke"
Call = Callable[[], Awaitable[None]]


@contextmanager
def service(module: str, env: dict[str, str], log_dir: Path) -> Iterator[tuple[str, int]]:
    with running_service(module, free_port(), env, log_dir, cwd=ROOT, ready_timeout=60) as svc:
        yield svc.url, svc.pid


def register(gateway: str) -> None:
    manifest = json.loads((ROOT / "manifests" / f"{TOOL}.json").read_text("utf-8"))
    manifest["rate_limit"] = "100000000/minute"
    response = httpx.post(gateway + "/tools/register", json=manifest, headers=ADMIN, timeout=30)
    response.raise_for_status()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def raw_call(version: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A JSON-RPC ``tools/call`` body and its headers, as a client at ``version`` sends it."""
    params: dict[str, Any] = {"name": TOOL, "arguments": {"sku": SKU}}
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": version}
    if version == PER_REQUEST:  # no handshake: each request says who asks, with what
        params["_meta"] = {
            types.PROTOCOL_VERSION_META_KEY: version,
            types.CLIENT_CAPABILITIES_META_KEY: {},
            types.CLIENT_INFO_META_KEY: {"name": "bench-mcp", "version": "1"},
        }
        headers |= {"mcp-method": "tools/call", "mcp-name": TOOL}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers


@asynccontextmanager
async def sdk_session(url: str, modern: bool) -> AsyncIterator[ClientSession]:
    """One ``ClientSession``: ``discover()`` (per-request era) or ``initialize()``."""
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=300.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await (session.discover() if modern else session.initialize())
        yield session


async def paths(gateway: str, stack: AsyncExitStack) -> dict[str, Call]:
    rest = await stack.enter_async_context(httpx.AsyncClient(base_url=gateway, timeout=30))
    arguments = {"sku": SKU}

    async def via_invoke() -> None:
        response = await rest.post(f"/tools/{TOOL}/invoke", json={"arguments": arguments})
        response.raise_for_status()

    def via_raw(version: str) -> Call:
        body, headers = raw_call(version)

        async def call() -> None:
            response = await rest.post("/mcp", json=body, headers=headers)
            response.raise_for_status()
            if response.json()["result"]["isError"]:
                raise RuntimeError(f"MCP call failed: {response.text}")

        return call

    def via_sdk(session: ClientSession) -> Call:
        async def call() -> None:
            result = await session.call_tool(TOOL, arguments)
            if result.is_error:
                raise RuntimeError(f"MCP call failed: {result}")

        return call

    initialized = await stack.enter_async_context(sdk_session(f"{gateway}/mcp", modern=False))
    discovered = await stack.enter_async_context(sdk_session(f"{gateway}/mcp", modern=True))
    return {
        INVOKE: via_invoke,
        f"raw {HANDSHAKE}": via_raw(HANDSHAKE),
        f"raw {PER_REQUEST}": via_raw(PER_REQUEST),
        f"SDK initialize ({HANDSHAKE})": via_sdk(initialized),
        f"SDK discover ({PER_REQUEST})": via_sdk(discovered),
    }


class Samples:
    def __init__(self, names: list[str]) -> None:
        self.calls: dict[str, list[float]] = {name: [] for name in names}
        self.round_p50: dict[str, list[float]] = {name: [] for name in names}
        self.cpu_s: dict[str, float] = dict.fromkeys(names, 0.0)

    async def time(self, name: str, call: Call, n: int, process: psutil.Process) -> None:
        values: list[float] = []
        cpu = sum(process.cpu_times()[:2])
        for _ in range(n):
            started = time.perf_counter()
            await call()
            values.append((time.perf_counter() - started) * 1000)
        self.cpu_s[name] += sum(process.cpu_times()[:2]) - cpu
        self.calls[name].extend(values)
        self.round_p50[name].append(statistics.median(values))


async def run(gateway: str, pid: int, calls: int, rounds: int, warmup: int) -> Samples:
    process = psutil.Process(pid)
    async with AsyncExitStack() as stack:
        by_name = await paths(gateway, stack)
        names = list(by_name)
        for call in by_name.values():
            for _ in range(warmup):
                await call()
        samples = Samples(names)
        per_round = max(1, calls // rounds)
        for index in range(rounds):
            turned = names[index % len(names) :] + names[: index % len(names)]
            for name in turned if index % 2 == 0 else reversed(turned):
                await samples.time(name, by_name[name], per_round, process)
        return samples


def report(samples: Samples) -> None:
    base = samples.round_p50[INVOKE]

    def paired(name: str) -> float:
        """Median over rounds of this path's p50 minus invoke's p50 in the same round."""
        return statistics.median(a - b for a, b in zip(samples.round_p50[name], base, strict=True))

    print(
        f"{'path':<30} {'calls':>6} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'vs invoke p50 (median of rounds)':>33} {'gateway CPU ms/call':>20}"
    )
    for name, values in samples.calls.items():
        diff = "" if name == INVOKE else f"{paired(name):+.2f} ms"
        cpu = samples.cpu_s[name] / len(values) * 1000
        print(
            f"{name:<30} {len(values):>6} {percentile(values, 50):>7.2f} "
            f"{percentile(values, 99):>7.2f} {diff:>33} {cpu:>20.2f}"
        )
    raw, sdk = paired(f"raw {HANDSHAKE}"), paired(f"SDK initialize ({HANDSHAKE})")
    print(f"MCP overhead, gateway side (same httpx client, {HANDSHAKE}): {raw:+.2f} ms p50")
    print(f"MCP overhead, as the SDK client sees it (initialize, {HANDSHAKE}): {sdk:+.2f} ms p50")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="Timed calls per path.")
    parser.add_argument("--rounds", type=int, default=10, help="Interleaved rounds.")
    parser.add_argument("--warmup", type=int, default=200, help="Untimed calls per path first.")
    parser.add_argument(
        "--sse", action="store_true", help="Answer /mcp calls as SSE (MCP_JSON_RESPONSE=false)."
    )
    args = parser.parse_args()
    with (
        process_stack_env("reach-bench-mcp-") as (data_dir, env),
        service("shop", env, data_dir) as (shop, _),
    ):
        gateway_env = {
            **env,
            "SHOP_URL": shop,
            "CALLER_RATE_LIMIT": "100000000/minute",
            "ROUTE_RATE_LIMIT": "",
            "MCP_JSON_RESPONSE": "false" if args.sse else "true",
        }
        (data_dir / "gateway").mkdir()
        with service("gateway", gateway_env, data_dir / "gateway") as (gateway, pid):
            register(gateway)
            samples = asyncio.run(run(gateway, pid, args.calls, args.rounds, args.warmup))
    mode = "SSE" if args.sse else "JSON"
    print(f"inventory_query via one gateway process, sequential calls, MCP answers as {mode}")
    report(samples)


if __name__ == "__main__":
    main()
