"""Metrics middleware benchmark: what counting and timing one request costs.

    make bench-metrics

Calls an app in process (no sockets, so the difference is the middleware
alone), with and without ``reach_common.metrics.MetricsMiddleware``, in
alternating rounds: a FastAPI route, and a bare ASGI app that answers at once
(the middleware's cost with nothing else around it). Prints the fastest round
of each (the least disturbed by other work on a busy machine) and the
difference; compare numbers from one run.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from fastapi import FastAPI
from starlette.types import Message

from reach_common.metrics import Metrics, MetricsAccess, MetricsMiddleware

ROUNDS = 15
REQUESTS = 5000


class Route:
    path = "/tools/{tool_id}/invoke"


async def bare(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app that does what a router and a tiny handler must: name the route, answer."""
    scope["route"] = Route
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def metered(app: Any) -> Any:
    return MetricsMiddleware(app, metrics=Metrics(MetricsAccess(strict=False, token=None)))


def build(with_metrics: bool) -> Any:
    app = FastAPI()

    @app.get("/tools/{tool_id}/invoke")
    async def invoke(tool_id: str) -> dict[str, str]:
        return {"tool_id": tool_id}

    if with_metrics:
        app.add_middleware(
            MetricsMiddleware, metrics=Metrics(MetricsAccess(strict=False, token=None))
        )
    return app


async def one_round(app: Any) -> float:
    """Seconds per request over REQUESTS calls of the route."""

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        return None

    started = time.perf_counter()
    for i in range(REQUESTS):
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": f"/tools/tool_{i % 100}/invoke",
            "raw_path": f"/tools/tool_{i % 100}/invoke".encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"localhost")],
            "client": ("127.0.0.1", 1234),
            "server": ("127.0.0.1", 80),
        }
        await app(scope, receive, send)
    return (time.perf_counter() - started) / REQUESTS


async def compare(label: str, plain: Any, with_metrics: Any) -> None:
    for app in (plain, with_metrics):  # warm up: routes compiled, label children created
        await one_round(app)
    timings: dict[str, list[float]] = {"without": [], "with": []}
    for _ in range(ROUNDS):
        timings["without"].append(await one_round(plain))
        timings["with"].append(await one_round(with_metrics))
    without = min(timings["without"]) * 1e6
    metered_us = min(timings["with"]) * 1e6
    spread = statistics.median(timings["with"]) * 1e6 - statistics.median(timings["without"]) * 1e6
    print(
        f"{label:14} without {without:6.1f} µs, with {metered_us:6.1f} µs: "
        f"middleware {metered_us - without:5.1f} µs/request (medians differ by {spread:.1f})"
    )


async def main() -> None:
    print(f"{REQUESTS} requests per round, {ROUNDS} rounds, fastest round shown")
    await compare("bare ASGI", bare, metered(bare))
    await compare("FastAPI route", build(False), build(True))


if __name__ == "__main__":
    asyncio.run(main())
