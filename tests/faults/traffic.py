"""Traffic that keeps running while a fault happens, and what each request got back.

``Traffic`` keeps requests flowing while a fault happens: ``traffic.add(kind, send)``
registers a loop that calls ``send()`` again and again; ``async with traffic.running():``
runs every loop; ``traffic.outcomes`` holds each answer's time, status and ``reason``
(``connection_error`` when no answer came); ``await traffic.warmed()`` waits until every
kind has succeeded once, ``await traffic.recovered(since, limit_s)`` until every kind has
succeeded after its last failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass(frozen=True)
class Outcome:
    kind: str
    at: float  # time.monotonic() when the answer came
    status: int  # 0: no answer (connection refused, reset, timed out)
    reason: str | None  # None for a success; the error body's reason otherwise
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None

    @property
    def ok(self) -> bool:
        return self.reason is None


def reason_of(response: httpx.Response) -> str | None:
    """None for a success, else the Reach error body's ``reason`` (``http_<status>`` if the
    body is not one)."""
    if response.status_code < 400:
        return None
    try:
        body = response.json()
    except ValueError:
        return f"http_{response.status_code}"
    reason = body.get("reason") if isinstance(body, dict) else None
    return str(reason) if reason else f"http_{response.status_code}"


Sender = Callable[[], Awaitable[httpx.Response]]


@dataclass
class Traffic:
    """Loops of requests, one per kind, each sending again as soon as it has an answer
    (after ``pause`` seconds)."""

    pause: float = 0.05
    loops: dict[str, Sender] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    pauses: dict[str, float] = field(default_factory=dict)

    def add(self, kind: str, send: Sender, pause: float | None = None) -> None:
        """A loop of ``send()``; ``pause`` (seconds between two) overrides the default."""
        self.loops[kind] = send
        if pause is not None:
            self.pauses[kind] = pause

    async def _loop(self, kind: str, send: Sender) -> None:
        while True:
            try:
                response = await send()
            except httpx.HTTPError:
                self.outcomes.append(Outcome(kind, time.monotonic(), 0, "connection_error"))
            else:
                try:
                    body = response.json()
                except ValueError:
                    body = response.text
                self.outcomes.append(
                    Outcome(
                        kind,
                        time.monotonic(),
                        response.status_code,
                        reason_of(response),
                        dict(response.headers),
                        body,
                    )
                )
            await asyncio.sleep(self.pauses.get(kind, self.pause))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Traffic]:
        tasks = [asyncio.create_task(self._loop(k, s)) for k, s in self.loops.items()]
        try:
            yield self
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def warmed(self, limit_s: float = 30.0) -> None:
        """Wait (bounded) until every kind has succeeded at least once."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if {o.kind for o in self.outcomes if o.ok} >= set(self.loops):
                return
            await asyncio.sleep(0.1)

    async def recovered(self, since: float, limit_s: float) -> float | None:
        """Wait (bounded) for :meth:`recovered_at` ``since``; returns it."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if self.recovered_at(since) is not None:
                break
            await asyncio.sleep(0.1)
        return self.recovered_at(since)

    def tally(self, since: float = 0.0) -> dict[str, dict[str, int]]:
        """Per kind, how many answers ``since`` had each reason ("ok" for a success): what
        a wait that timed out says it saw."""
        counts: dict[str, dict[str, int]] = {}
        for o in self.between(since):
            mine = counts.setdefault(o.kind, {})
            key = o.reason or "ok"
            mine[key] = mine.get(key, 0) + 1
        return counts

    def between(self, start: float, end: float = float("inf")) -> list[Outcome]:
        return [o for o in self.outcomes if start <= o.at <= end]

    def recovered_at(self, since: float) -> float | None:
        """When every kind had its last failure behind it: the latest over the kinds of the
        first success after their last failure at or after ``since``; None if a kind never
        succeeded after it."""
        latest = since
        for kind in self.loops:
            mine = [o for o in self.outcomes if o.kind == kind and o.at >= since]
            failures = [o.at for o in mine if not o.ok]
            after = max(failures, default=since)
            first_ok = next((o.at for o in mine if o.ok and o.at >= after), None)
            if first_ok is None:
                return None
            latest = max(latest, first_ok)
        return latest
