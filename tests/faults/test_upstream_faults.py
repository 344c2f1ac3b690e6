"""Misbehaving upstreams: each fault maps to a clear ``reason`` within the tool's timeout.

A raw asyncio server stands in for a tool's upstream and misbehaves one way per test:
it hangs after reading the request, resets the connection (``SO_LINGER`` 0: an RST, not
a FIN), answers bytes that are not HTTP, answers 10 MB, or answers a valid response one
byte every 100 ms. The tool is a non-idempotent ``POST`` with a short ``timeout_ms``, so
the test also sees that no fault makes the gateway send a call twice. While the fault is
on, a healthy tool on another loopback upstream is called alongside: it must keep
answering (the gateway stays healthy), and once the upstream heals the faulty tool
answers again.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.embeddings import Embedder
from tests.conftest import Backends, app_client
from tests.faults.matrix import Row, record
from tests.gateway.conftest import ADMIN, http_tool
from tests.gateway.upstream import Reply, Upstream

TIMEOUT_MS = 1000
SLACK_S = 2.5  # a loaded 2-core machine; the promise is "bounded", not "fast"
CALLER = {"user_id": "u1", "roles": ["ops_admin"]}
TEN_MB = 10 * 1024 * 1024
HEALED = (
    b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}'
)


@dataclass(frozen=True)
class Fault:
    name: str
    reason: str  # what every call made during the fault must answer
    words: str  # what its message must say, so a reader knows which fault it was


FAULTS = [
    Fault("hang", "tool_timeout", f"{TIMEOUT_MS} ms timeout"),
    Fault("reset", "tool_error", "reset the connection"),
    Fault("garbage", "tool_error", "not valid HTTP"),
    Fault("10mb", "tool_error", "byte limit"),
    Fault("drip", "tool_timeout", f"{TIMEOUT_MS} ms timeout"),
]


class BadUpstream:
    """A loopback TCP server that reads one HTTP request and then misbehaves as ``mode``
    says; ``mode = "ok"`` answers a valid JSON response."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._stop = asyncio.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/act"

    async def start(self) -> BadUpstream:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length:
            await reader.readexactly(length)
        return True

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._read_request(reader)
            self.requests += 1
            await self._misbehave(self.mode, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _misbehave(self, mode: str, writer: asyncio.StreamWriter) -> None:
        if mode == "hang":
            await self._stop.wait()
        elif mode == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()  # close with linger 0: the peer gets an RST
        elif mode == "garbage":
            writer.write(b"\x00\x17\xffSSH-2.0-definitely not http\r\n\r\n\x8b\x1f")
            await writer.drain()
            await self._stop.wait()  # stays open: it is the answer that is wrong
        elif mode == "10mb":
            writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {TEN_MB}\r\n\r\n".encode())
            block = b"x" * 65536
            for _ in range(TEN_MB // len(block)):
                writer.write(block)
                await writer.drain()
        elif mode == "drip":
            for byte in HEALED:
                if self._stop.is_set():
                    return
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.1)
        else:
            writer.write(HEALED)
            await writer.drain()


@pytest.fixture(scope="module")
def model() -> Embedder:
    return Embedder()


@pytest.fixture(params=["h11", "httpx"])
async def gateway(
    request: pytest.FixtureRequest, clean_state: Backends, model: Embedder
) -> AsyncIterator[httpx.AsyncClient]:
    """The gateway in process, with each of its two tool HTTP clients."""
    settings = Settings(
        tool_http_client=request.param,
        database_url=clean_state.database_url,
        redis_url=clean_state.redis_url,
        log_level="WARNING",
        caller_rate_limit=None,
        route_rate_limit=None,
        audit_flush_ms=20,
        gc_freeze=False,
    )
    async with app_client(create_app(settings, embedder=model)) as client:
        yield client


async def invoke(client: httpx.AsyncClient, tool_id: str) -> tuple[str | None, str, float]:
    """``(reason or None, message, seconds)`` of one call."""
    started = time.monotonic()
    answer = await client.post(
        f"/tools/{tool_id}/invoke", json={"arguments": {}, "user_context": CALLER}, timeout=30
    )
    elapsed = time.monotonic() - started
    body: dict[str, Any] = answer.json()
    if answer.status_code == 200 and body["success"]:
        return None, "", elapsed
    return body["error"]["reason"], body["error"]["message"], elapsed


async def register(client: httpx.AsyncClient, bad: BadUpstream, good: Upstream) -> None:
    faulty = http_tool(
        "faulty",
        bad.url,
        timeout_ms=TIMEOUT_MS,
        idempotent=False,  # never retried: the server must see each call once
        circuit_breaker={"failure_threshold": 100, "reset_timeout_ms": 1000},
    )
    faulty["endpoint"]["method"] = "POST"
    healthy = http_tool("healthy", good.url + "/stock", timeout_ms=5000)
    for manifest in (faulty, healthy):
        answer = await client.post("/tools/register", json=manifest, headers=ADMIN)
        assert answer.status_code == 201, answer.text


@pytest.mark.parametrize("fault", FAULTS, ids=[f.name for f in FAULTS])
async def test_a_misbehaving_upstream_maps_to_a_clear_reason_within_the_timeout(
    gateway: httpx.AsyncClient, fault: Fault, request: pytest.FixtureRequest
) -> None:
    transport = request.node.callspec.params["gateway"]
    bad = await BadUpstream(fault.name).start()
    good = await Upstream().start()
    good.default = Reply(200, {"available": 3})
    row = Row(
        fault=f"upstream {fault.name}",
        service=f"gateway ({transport} client)",
        promise=f"every call answers {fault.reason} within timeout_ms + {SLACK_S} s; "
        "no call sent twice; other tools unaffected",
    )
    try:
        await register(gateway, bad, good)
        # One call first: the tool client is warm (pool, TLS context) before the clock runs.
        assert (await invoke(gateway, "healthy"))[0] is None
        faulty_calls = [invoke(gateway, "faulty") for _ in range(4)]
        healthy_calls = [invoke(gateway, "healthy") for _ in range(8)]
        outcomes = await asyncio.gather(*faulty_calls, *healthy_calls)
        health = await gateway.get("/healthz")
        bad.mode = "ok"
        healed_at = time.monotonic()
        recovered = await invoke(gateway, "faulty")
        row.recover_s = round(time.monotonic() - healed_at, 3)
    finally:
        await bad.stop()
        await good.stop()
    for reason, _, _ in outcomes:
        row.count(reason)
    faulty, healthy = outcomes[:4], outcomes[4:]
    row.lost = sum(1 for reason, _, _ in healthy if reason is not None)
    reached = bad.requests - 1  # the calls made during the fault (the last one is healed)
    row.duplicates = max(0, reached - len(faulty))
    record(row)

    for reason, message, elapsed in faulty:
        assert reason == fault.reason, message
        assert fault.words in message, message
        assert elapsed < TIMEOUT_MS / 1000 + SLACK_S, (fault.name, elapsed)
    assert row.lost == 0, healthy
    assert reached == len(faulty)  # each call reached the upstream once: none sent twice
    assert health.status_code == 200
    assert recovered[0] is None, recovered
