"""Letting go of background work a turn no longer needs."""

from __future__ import annotations

import asyncio
from typing import Any


def discard(future: asyncio.Future[Any] | None) -> None:
    """Stop a helper task (or a worker thread's future) the turn no longer needs: cancelled
    if pending; if done, its failure (if any) is read, so it is not reported as unused."""
    if future is None:
        return
    if not future.done():
        future.cancel()
    elif not future.cancelled():
        future.exception()
