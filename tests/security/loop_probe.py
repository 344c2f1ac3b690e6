"""Where work runs: the threads that ran a function (``record_threads``), and a call
timed beside the event loop it runs on: how long the loop went without turning
meanwhile, and when a health check sent during the call was answered (``probed``)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest


def record_threads(
    monkeypatch: pytest.MonkeyPatch, seen: list[str], owner: object, name: str
) -> None:
    """Replace ``owner.name`` (a function of a module or class, or an object's method) by
    one that appends the name of the thread it runs in to ``seen``, then runs it."""
    original = getattr(owner, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)


@dataclass(frozen=True)
class Probed:
    response: httpx.Response  # the call's
    took: float  # seconds the call took
    health_at: float  # seconds after the call began, when /healthz answered
    longest_wait: float  # the longest the loop went without turning meanwhile, seconds


async def probed(
    client: httpx.AsyncClient, call: Awaitable[httpx.Response], *, health_after: float
) -> Probed:
    """Start ``call``; ``health_after`` seconds later (the call under way) ask
    ``/healthz``; then wait for the call. A ticker asks the loop to run it every
    millisecond, so a free loop shows waits of 1-2 ms; the wait from its last turn to
    the end of the call counts too."""
    last = [time.perf_counter()]
    waits = [0.0]
    done = asyncio.Event()

    async def tick() -> None:
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            waits.append(now - last[0])
            last[0] = now

    ticker = asyncio.create_task(tick())
    started = time.perf_counter()
    try:
        task = asyncio.ensure_future(call)
        await asyncio.sleep(health_after)
        health = await client.get("/healthz")
        health_at = time.perf_counter() - started
        response = await task
        took = time.perf_counter() - started
        waits.append(time.perf_counter() - last[0])
    finally:
        done.set()
        await ticker
    assert health.status_code == 200, health.text
    return Probed(response, took, health_at, max(waits))
