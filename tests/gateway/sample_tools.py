"""Python tools the tests allow through PYTHON_TOOL_PACKAGES=tests.gateway.sample_tools."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

# What the slow tools went through, so tests can tell without timing them.
SLOW_CANCELLED = threading.Event()  # `slow` was cancelled before it finished
RELEASE_BLOCKED = threading.Event()  # set it to let `blocking` return early
BLOCKED_RETURNED = threading.Event()  # `blocking` returned


def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


async def echo(**arguments: Any) -> dict[str, Any]:
    return {"echo": arguments}


async def slow(seconds: float) -> dict[str, float]:
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        SLOW_CANCELLED.set()
        raise
    return {"slept": seconds}


def blocking(seconds: float) -> dict[str, float]:
    """Blocks its thread for ``seconds``, or until ``RELEASE_BLOCKED`` is set."""
    RELEASE_BLOCKED.wait(seconds)
    BLOCKED_RETURNED.set()
    return {"slept": seconds}


def explode(message: str) -> None:
    raise ValueError(message)


def not_json() -> object:
    return object()
