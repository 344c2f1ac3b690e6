"""A scriptable loopback HTTP server standing in for a tool's upstream.

It records every request as received (raw path included, so percent-encoding
can be checked) and answers from a list of scripted responses, then from a
default. Real sockets, real HTTP/1.1: the gateway's client cannot tell it from
a service.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any


@dataclass
class Received:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def query(self) -> str:
        return self.target.partition("?")[2]

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=lambda: {"ok": True})
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    chunked: bool = False  # send the body in chunked transfer-encoding
    close: bool = False  # close the connection after answering


Handler = Callable[[Received], Reply]


class Upstream:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.script: list[Reply] = []
        self.default: Reply | Handler = Reply()
        self._server: asyncio.Server | None = None
        self.port = 0
        self.connections = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def hits(self, path_prefix: str = "") -> int:
        return sum(1 for r in self.received if r.path.startswith(path_prefix))

    async def start(self) -> Upstream:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def reset(self) -> None:
        self.received.clear()
        self.script.clear()
        self.default = Reply()

    def _reply_for(self, request: Received) -> Reply:
        if self.script:
            return self.script.pop(0)
        return self.default(request) if callable(self.default) else self.default

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, target, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = header.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                request = Received(method, target, headers, body)
                self.received.append(request)
                reply = self._reply_for(request)
                if reply.delay_s:
                    await asyncio.sleep(reply.delay_s)
                payload = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                head = [f"HTTP/1.1 {reply.status} {HTTPStatus(reply.status).phrase}"]
                if reply.chunked:
                    head.append("Transfer-Encoding: chunked")
                    half = len(payload) // 2
                    parts = [payload[:half], payload[half:]]
                    payload = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts if p)
                    payload += b"0\r\n\r\n"
                else:
                    head.append(f"Content-Length: {len(payload)}")
                if not isinstance(reply.body, bytes):
                    head.append("Content-Type: application/json")
                head.extend(f"{k}: {v}" for k, v in reply.headers.items())
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
                await writer.drain()
                if reply.close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            writer.close()
