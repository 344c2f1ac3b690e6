"""MCP overhead: the same tool through ``/mcp`` ``tools/call`` and ``POST /tools/{id}/invoke``.

Starts throwaway embedded Postgres and Redis, then shop and the gateway as real
processes on loopback, registers the shipped ``inventory_query`` (its rate
limit lifted; the limiter still runs on every call), then calls it
sequentially, one call at a time, alternating between the two paths in
interleaved rounds of one run: one official ``mcp`` ``ClientSession`` over
Streamable HTTP (initialised once; every call is one HTTP POST to the stateless
endpoint) and one keep-alive HTTP client posting to the invoke endpoint. Prints
p50 and p99 of each path and the MCP overhead (the p50 difference), split into
what the gateway's MCP layer costs (a plain JSON-RPC ``tools/call`` POST with the
invoke path's own HTTP client, a third interleaved path) and what the SDK client
costs.

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
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from reach_common.embedded import process_stack_env
from reach_common.processes import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]
SKU = "SKU2024001"
ADMIN = {"X-User-Id": "bench-admin", "X-User-Roles": "admin"}
RAW = "raw JSON-RPC POST /mcp"
VERSION = "2025-11-25"  # the revision the SDK client negotiates (initialize)


@contextmanager
def service(module: str, env: dict[str, str], log_dir: Path) -> Iterator[str]:
    with running_service(module, free_port(), env, log_dir, cwd=ROOT, ready_timeout=60) as svc:
        yield svc.url


def register(gateway: str) -> None:
    manifest = json.loads((ROOT / "manifests" / "inventory_query.json").read_text("utf-8"))
    manifest["rate_limit"] = "100000000/minute"
    response = httpx.post(gateway + "/tools/register", json=manifest, headers=ADMIN, timeout=30)
    response.raise_for_status()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


async def timed(call: Callable[[], Awaitable[None]], n: int, into: list[float]) -> None:
    for _ in range(n):
        started = time.perf_counter()
        await call()
        into.append((time.perf_counter() - started) * 1000)


async def run(gateway: str, calls: int, rounds: int, warmup: int) -> dict[str, list[float]]:
    arguments = {"sku": SKU}
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx.AsyncClient(base_url=gateway, timeout=30) as rest,
        httpx2.AsyncClient(timeout=timeout) as http,
        streamable_http_client(f"{gateway}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def via_mcp() -> None:
            result = await session.call_tool("inventory_query", arguments)
            if result.is_error:
                raise RuntimeError(f"MCP call failed: {result}")

        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "inventory_query", "arguments": arguments},
        }
        accept = {"accept": "application/json, text/event-stream", "mcp-protocol-version": VERSION}

        async def via_raw_mcp() -> None:
            response = await rest.post("/mcp", json=call, headers=accept)
            response.raise_for_status()
            if response.json()["result"]["isError"]:
                raise RuntimeError(f"MCP call failed: {response.text}")

        async def via_invoke() -> None:
            response = await rest.post(
                "/tools/inventory_query/invoke", json={"arguments": arguments}
            )
            response.raise_for_status()

        samples: dict[str, list[float]] = {"mcp tools/call": [], "POST invoke": [], RAW: []}
        paths = [("mcp tools/call", via_mcp), ("POST invoke", via_invoke), (RAW, via_raw_mcp)]
        for _, path in paths:
            await timed(path, warmup, [])
        per_round = max(1, calls // rounds)
        for index in range(rounds):
            # Alternate which path goes first, so neither always runs on a warmer process.
            for name, path in paths if index % 2 == 0 else reversed(paths):
                await timed(path, per_round, samples[name])
        return samples


def report(samples: dict[str, list[float]]) -> None:
    print(f"{'path':<24} {'calls':>6} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for name, values in samples.items():
        print(
            f"{name:<24} {len(values):>6} {percentile(values, 50):>8.2f} "
            f"{percentile(values, 99):>8.2f} {statistics.fmean(values):>8.2f}"
        )
    mcp, rest = samples["mcp tools/call"], samples["POST invoke"]
    overhead = percentile(mcp, 50) - percentile(rest, 50)
    print(f"MCP overhead (p50 difference): {overhead:+.2f} ms")
    print(f"MCP overhead (p99 difference): {percentile(mcp, 99) - percentile(rest, 99):+.2f} ms")
    raw = percentile(samples[RAW], 50) - percentile(rest, 50)
    print(
        f"  of which the gateway's MCP layer (raw JSON-RPC POST, same client as invoke): {raw:+.2f} ms"
    )
    print(f"  and the mcp SDK client (ClientSession over httpx2): {overhead - raw:+.2f} ms")


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
        service("shop", env, data_dir) as shop,
    ):
        gateway_env = {
            **env,
            "SHOP_URL": shop,
            "CALLER_RATE_LIMIT": "100000000/minute",
            "MCP_JSON_RESPONSE": "false" if args.sse else "true",
        }
        (data_dir / "gateway").mkdir()
        with service("gateway", gateway_env, data_dir / "gateway") as gateway:
            register(gateway)
            samples = asyncio.run(run(gateway, args.calls, args.rounds, args.warmup))
    mode = "SSE" if args.sse else "JSON"
    print(f"inventory_query via one gateway process, sequential calls, MCP answers as {mode}")
    report(samples)


if __name__ == "__main__":
    main()
