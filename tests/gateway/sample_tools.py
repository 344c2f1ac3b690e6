"""Python tools the tests allow through PYTHON_TOOL_PACKAGES=tests.gateway.sample_tools."""

from __future__ import annotations

import asyncio
import time
from typing import Any


def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


async def echo(**arguments: Any) -> dict[str, Any]:
    return {"echo": arguments}


async def slow(seconds: float) -> dict[str, float]:
    await asyncio.sleep(seconds)
    return {"slept": seconds}


def blocking(seconds: float) -> dict[str, float]:
    time.sleep(seconds)
    return {"slept": seconds}


def explode(message: str) -> None:
    raise ValueError(message)


def not_json() -> object:
    return object()
