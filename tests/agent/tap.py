"""A tap in front of the real gateway app: it records what the agent sent and can hold calls.

Agent tests run the real gateway (``gateway.app.create_app`` with the shipped
manifests, over the real shop) on a loopback port. :class:`GatewayTap` wraps
that app as an ASGI middleware: every HTTP request is recorded (method, path,
headers, JSON body) and then handed to the gateway unchanged; routing,
auth, validation and execution are all the gateway's own.

A test can also *hold* the requests to one path (``hold``): they wait in the
tap, before the gateway sees them, until the test releases them. That is how a
test keeps a tool call in flight for as long as it needs (two calls at once, a
turn that is busy, a client that goes away mid-call), without sleeping and
hoping. ``arrived`` waits (bounded) until requests reached the tap.

The gateway runs in its own thread and event loop (``ServerThread``), so the
bookkeeping here is guarded by a lock, and holds are released on the gateway's
loop.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]


@dataclass
class _Hold:
    remaining: int | None  # requests still to hold; None: every one until released
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0


class GatewayTap:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.url = ""  # set once the server runs
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Condition()
        self._holds: dict[str, _Hold] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- what the tests use -------------------------------------------------------------

    def invoked(self, tool_id: str) -> list[dict[str, Any]]:
        """The ``/tools/{tool_id}/invoke`` requests received."""
        return self.to(f"/tools/{tool_id}/invoke")

    def to(self, path: str) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["path"] == path]

    def hold(self, path: str, times: int | None = None) -> None:
        """Keep the next ``times`` requests to ``path`` (all of them if None) in the tap until
        :meth:`release`; later ones go straight through."""
        with self._lock:
            self._holds[path] = _Hold(times)

    def held(self, path: str) -> int:
        """How many requests to ``path`` are waiting in the tap right now."""
        with self._lock:
            hold = self._holds.get(path)
            return hold.waiting if hold else 0

    def release(self, path: str | None = None) -> None:
        """Let the held requests to ``path`` (every path if None) go on to the gateway."""
        with self._lock:
            paths = list(self._holds) if path is None else [path]
            holds = [self._holds.pop(p) for p in paths if p in self._holds]
        for hold in holds:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.call_soon_threadsafe(hold.gate.set)

    def wait_until(self, condition: Callable[[], bool], timeout: float = 20) -> None:
        """Block (bounded) until ``condition()`` holds; it is checked whenever a request
        arrives or finishes."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not condition():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [f"{r['method']} {r['path']}" for r in self.requests]
                    raise AssertionError(f"not seen within {timeout} s; the tap saw {seen}")
                self._lock.wait(remaining)

    async def arrived(self, path: str, count: int = 1, within_s: float = 20) -> None:
        """Wait (bounded, without blocking the caller's loop) until ``count`` requests to
        ``path`` reached the tap."""
        await asyncio.to_thread(self.wait_until, lambda: self._count(path) >= count, within_s)

    def _take_hold(self, path: str) -> _Hold | None:
        """The hold a request to ``path`` arriving now waits on, if any (under the lock)."""
        hold = self._holds.get(path)
        if hold is None:
            return None
        if hold.remaining is not None:
            if hold.remaining <= 0:
                return None
            hold.remaining -= 1
        hold.waiting += 1
        return hold

    def _count(self, path: str) -> int:
        return sum(1 for r in self.requests if r["path"] == path)

    # --- ASGI ----------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            self._loop = asyncio.get_running_loop()
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": raw, "more_body": False}
            message: Message = await receive()
            return message

        path = scope["path"]
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with self._lock:
            self.requests.append(
                {
                    "method": scope["method"],
                    "path": path,
                    "query": scope.get("query_string", b"").decode("latin-1"),
                    "headers": {
                        k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]
                    },
                    "body": body,
                }
            )
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            hold = self._take_hold(path)
            self._lock.notify_all()
        try:
            if hold is not None:
                try:
                    await hold.gate.wait()
                finally:
                    with self._lock:
                        hold.waiting -= 1
            await self.app(scope, replay, send)
        finally:
            with self._lock:
                self.in_flight -= 1
                self._lock.notify_all()
