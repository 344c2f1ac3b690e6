"""Helpers of the SIGKILL fault tests: a proxy that holds answers, so a kill lands mid-request.

:class:`HoldingProxy` forwards every request to ``target`` (a service of the fault
stack) and, once :meth:`HoldingProxy.arm` was called, holds the answer of each request
whose path starts with ``hold_prefix``: the service behind it has acted, the caller has
not heard back. ``held`` counts the answers waiting; :meth:`release` lets them all go.
It runs on its own loopback port in a thread (``ServerThread``), so the service in front
of it reaches it over real HTTP.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.agent.servers import ServerThread

_HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding"}


class HoldingProxy:
    def __init__(self, target: str, hold_prefix: str) -> None:
        self.target = target
        self.hold_prefix = hold_prefix
        self.url = ""
        self._armed = threading.Event()
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.held = 0
        self.forwarded = 0
        methods = ["GET", "POST", "PUT", "DELETE"]
        self.app = Starlette(routes=[Route("/{path:path}", self._forward, methods=methods)])

    def arm(self) -> None:
        """From now on, hold the answers of matching requests until :meth:`release`."""
        self._armed.set()

    def release(self) -> None:
        self._released.set()

    async def _forward(self, request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        async with httpx.AsyncClient(timeout=60) as client:
            answer = await client.request(
                request.method,
                self.target + request.url.path,
                params=request.query_params,
                content=await request.body(),
                headers=headers,
            )
        with self._lock:
            self.forwarded += 1
        holding = (
            request.url.path.startswith(self.hold_prefix)
            and self._armed.is_set()
            and not self._released.is_set()
        )
        if holding:
            with self._lock:
                self.held += 1
            await asyncio.to_thread(self._released.wait, 60)
        kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_HEADERS}
        return Response(answer.content, answer.status_code, headers=kept)


@contextmanager
def holding_proxy(target: str, hold_prefix: str) -> Iterator[HoldingProxy]:
    proxy = HoldingProxy(target, hold_prefix)
    with ServerThread(proxy.app) as server:
        proxy.url = server.url
        try:
            yield proxy
        finally:
            proxy.release()


async def wait_for(
    condition: Callable[[], bool],
    limit_s: float,
    what: str,
    state: Callable[[], object] | None = None,
) -> None:
    """Poll ``condition`` (bounded) without blocking the event loop the traffic runs on;
    on a time-out the message carries ``state()``, what was seen meanwhile."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            seen = "" if state is None else f"; seen: {state()}"
            raise AssertionError(f"timed out after {limit_s} s waiting for {what}{seen}")
        await asyncio.sleep(0.05)
