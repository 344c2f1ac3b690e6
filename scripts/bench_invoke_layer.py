"""What the direct invoke layer saves: gateway CPU per call, FastAPI route against
``gateway.api.invoke_direct``, in one process and one run.

    python scripts/bench_invoke_layer.py [--rounds 10] [--calls 500]

Starts throwaway embedded Postgres and Redis, a minimal upstream HTTP server on
loopback and the gateway app in process (its lifespan, every middleware, a real
HTTP tool with audit, rate limit, spans). Each call is handed to the app as an
ASGI request, with no sockets on the caller's side, so the figure is the gateway's
own work per call plus the upstream call. Rounds alternate between the direct layer
and the FastAPI route (the direct layer's matcher switched off, so every call goes
the way it went before that layer existed). Prints CPU ms per call of this process
(upstream included, the same in both), the median of each and the median of the
per-round ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from asgi_lifespan import LifespanManager

from gateway.api import invoke_direct
from gateway.app import create_app
from gateway.settings import Settings
from reach_common import migrate
from reach_common.embedded import EmbeddedServers

REPLY = json.dumps({"sku": "SKU2024001", "name": "Wireless Mouse", "available": 155}).encode()
BODY = json.dumps({"arguments": {"sku": "SKU2024001"}}).encode()


async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers every request on a kept-alive connection with the same small JSON."""
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
        + str(len(REPLY)).encode()
        + b"\r\n\r\n"
    )
    try:
        while await reader.readuntil(b"\r\n\r\n"):
            writer.write(head + REPLY)
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


def manifest(port: int) -> dict[str, Any]:
    return {
        "tool_id": "item_get",
        "name": "item get",
        "description": "Reads one item by its SKU.",
        "input_schema": {
            "type": "object",
            "properties": {"sku": {"type": "string", "pattern": "^SKU[0-9]{7}$"}},
            "required": ["sku"],
        },
        "endpoint": {
            "type": "http",
            "method": "GET",
            "url": f"http://127.0.0.1:{port}/items/{{sku}}",
        },
        "permission": "public",
        "idempotent": True,
    }


async def call(app: Any) -> None:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/tools/item_get/invoke",
        "raw_path": b"/tools/item_get/invoke",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(BODY)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }
    given = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": BODY, "more_body": False}
        await asyncio.Event().wait()  # no disconnect: the call ends first
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    if status != 200:
        raise SystemExit(f"a call answered {status}")


async def bench(rounds: int, calls: int, database_url: str, redis_url: str) -> None:
    server = await asyncio.start_server(upstream, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    settings = Settings(
        database_url=database_url,
        redis_url=redis_url,
        log_level="WARNING",
        egress_allowlist=["127.0.0.1"],
        caller_rate_limit=None,
        route_rate_limit=None,
    )
    app = create_app(settings)
    matcher = invoke_direct._tool_id
    modes = {"direct layer": matcher, "FastAPI route": lambda scope: None}
    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    async with LifespanManager(app, startup_timeout=120) as manager:
        await app.state.runtime.registry_service.register(manifest(port))
        for round_ in range(rounds + 1):  # the first round warms both up, unrecorded
            for mode, match in modes.items():
                invoke_direct._tool_id = match  # type: ignore[assignment]
                started = time.process_time()
                for _ in range(calls):
                    await call(manager.app)  # it adds the lifespan's state
                if round_:
                    cpu[mode].append((time.process_time() - started) / calls * 1000)
        invoke_direct._tool_id = matcher
    server.close()
    print(f"{rounds} alternating rounds of {calls} calls; CPU ms per call of this process")
    for mode, values in cpu.items():
        shown = " ".join(f"{v:.3f}" for v in values)
        print(f"  {mode:14} median {statistics.median(values):.3f}   rounds: {shown}")
    ratios = [d / r for d, r in zip(cpu["direct layer"], cpu["FastAPI route"], strict=True)]
    print(f"  direct / route: median of per-round ratios {statistics.median(ratios):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=500, help="Calls per round and mode.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reach-bench-invoke-") as tmp:
        servers = EmbeddedServers(Path(tmp) / "data").start()
        try:
            assert servers.postgres is not None
            assert servers.redis is not None
            migrate.upgrade(servers.postgres.url)
            asyncio.run(bench(args.rounds, args.calls, servers.postgres.url, servers.redis.url))
        finally:
            servers.stop()


if __name__ == "__main__":
    main()
