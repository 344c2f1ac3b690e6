"""Stopping background tasks reliably."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel_and_wait(task: asyncio.Task[Any] | None, timeout_s: float = 5.0) -> None:
    """Cancel ``task`` until it ends (or ``timeout_s`` passes).

    A single cancel can be swallowed by a library caught mid-connect (asyncio's
    ``wait_for`` in Python 3.11 may lose it), so it is repeated until it lands.
    """
    if task is None:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not task.done() and loop.time() < deadline:
        task.cancel()
        await asyncio.wait({task}, timeout=0.1)
    if task.done():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            task.result()
