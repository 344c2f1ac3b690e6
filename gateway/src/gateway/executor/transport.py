"""A lean HTTP/1.1 client for tool calls: asyncio streams, ``h11`` for the protocol.

Tool calls are the gateway's hot path. This client does only what a tool call
needs:

- no name resolution: the caller passes the addresses it resolved and
  checked against the egress policy (``connect_to``) and the connection goes
  to one of them, while the ``Host`` header and, for https, the TLS server
  name (SNI and certificate check) stay the URL's host;
- keep-alive connections pooled per origin, dropped when idle for
  ``keepalive_s``, closed by the server, or left mid-message; a read waits on
  each idle connection, so a server that speaks or closes meanwhile is seen;
- TLS through ``ssl.create_default_context()`` (certificates verified);
- no redirects followed (a tool cannot bounce the gateway past egress checks),
  no compression asked for;
- the body read up to a byte limit and no further;
- the timings of the ``connect`` and ``response`` phases.

Deadlines are the caller's: it runs requests under ``asyncio.timeout``; a
request cancelled part-way closes its connection instead of pooling it.

Why not httpx: ``TOOL_HTTP_CLIENT=httpx`` selects the same contract on
``httpx.AsyncClient`` (``transport_httpx.py``), and ``make bench-gateway``
(``scripts/bench_gateway.py --transport both``) runs one gateway with each
client in alternating rounds. One run (``--requests 3000 --rounds 10``, 2
shared cores; ratios httpx / h11, median of the 10 rounds, range in parentheses):

- closed loop, 32 callers: gateway CPU per call 1.61 ms (h11) and 3.61 ms
  (httpx), ratio 2.24 (2.02–2.48); p50 via the gateway ratio 1.33 (1.18–1.47);
- fixed rate, 118 calls/s: CPU per call 2.39 and 2.82 ms, ratio 1.19
  (1.07–1.26); p50 ratio 1.07 (0.90–1.22), within the noise.

httpx costs more CPU in every round of both loads; a profile puts the
difference in ``httpcore``'s pool bookkeeping: whenever a request is added or
removed it walks every pooled connection, polls each idle one's socket and,
for each idle one, counts all connections again. So h11 stays the default.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import ssl
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol
from urllib.parse import urlsplit

import h11

_READ_SIZE = 65536
Origin = tuple[str, str, int]
Address = str | ipaddress.IPv4Address | ipaddress.IPv6Address
# asyncio.open_connection's shape; tests pass their own to see what is dialled.
OpenConnection = Callable[..., Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


class TransportError(Exception):
    """Base of what the tool transports raise; ``executor.errors.call_error`` maps each
    to the caller's error, in one place."""


class UpstreamConnectError(TransportError):
    """The connection could not be opened: nothing was sent."""


class UpstreamProtocolError(TransportError):
    """The connection broke or the answer was not valid HTTP; ``kind`` says which:
    ``not_http`` (bytes that are not an HTTP answer), ``reset`` (the peer reset the
    connection) or ``broken`` (it closed or failed mid-answer)."""

    def __init__(self, message: str, kind: str = "broken") -> None:
        super().__init__(message)
        self.kind = kind


def broken_answer(exc: BaseException) -> UpstreamProtocolError:
    """``UpstreamProtocolError`` for ``exc`` (or what it wraps), with its ``kind``."""
    kind = "broken"
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, h11.ProtocolError):
            kind = "not_http"
            break
        if isinstance(seen, ConnectionResetError) and seen.errno == errno.ECONNRESET:
            kind = "reset"  # an RST from the peer (a FIN mid-answer stays "broken")
            break
        seen = seen.__cause__ or seen.__context__
    return UpstreamProtocolError(f"{type(exc).__name__}: {exc}", kind)


class ResponseTooLarge(TransportError):
    """The answer was longer than the tool's ``max_response_bytes``."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


@dataclass
class Timing:
    """Wall-clock nanoseconds of the phases one request went through."""

    connect_start: int | None = None
    connect_end: int | None = None
    request_start: int | None = None
    response_end: int | None = None


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    reused_connection: bool = False
    address: str = ""  # the IP address the connection went to


class ToolHttpClient(Protocol):
    """What the executor needs of the client it calls tools with."""

    async def request(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        *,
        max_bytes: int,
        timing: Timing,
        connect_to: Sequence[Address],
        reuse: bool = True,
    ) -> RawResponse: ...

    async def aclose(self) -> None: ...


def create_tool_client(kind: Literal["h11", "httpx"] = "h11") -> ToolHttpClient:
    """The client ``TOOL_HTTP_CLIENT`` names."""
    if kind == "httpx":
        from gateway.executor.transport_httpx import HttpxClient

        return HttpxClient()
    return LeanHttpClient()


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    address: str = ""
    protocol: h11.Connection = field(default_factory=lambda: h11.Connection(h11.CLIENT))
    idle_since: float = 0.0
    reused: bool = False
    # While pooled, a read waits on the connection: it finishes only if the server sends
    # something (it can only be closing) or closes. The next request's answer arrives there.
    idle_read: asyncio.Task[bytes] | None = None

    def park(self) -> None:
        self.idle_since = time.monotonic()
        self.idle_read = asyncio.ensure_future(self.reader.read(_READ_SIZE))

    def usable(self, keepalive_s: float) -> bool:
        return (
            not self.writer.is_closing()
            and not (self.idle_read is not None and self.idle_read.done())
            and time.monotonic() - self.idle_since < keepalive_s
        )

    async def read(self) -> bytes:
        pending, self.idle_read = self.idle_read, None
        if pending is not None:
            return await pending
        return await self.reader.read(_READ_SIZE)

    def close(self) -> None:
        pending, self.idle_read = self.idle_read, None
        if pending is not None:
            if pending.done():
                if not pending.cancelled():
                    pending.exception()  # retrieved: the connection is dropped anyway
            else:
                pending.cancel()
        self.writer.close()


class LeanHttpClient:
    def __init__(
        self,
        *,
        keepalive_s: float = 15.0,
        max_idle_per_origin: int = 64,
        open_connection: OpenConnection = asyncio.open_connection,
    ) -> None:
        self._keepalive_s = keepalive_s
        self._max_idle = max_idle_per_origin
        self._idle: defaultdict[Origin, list[_Connection]] = defaultdict(list)
        self._ssl: ssl.SSLContext | None = None
        self._open_connection = open_connection

    async def request(
        self,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        *,
        max_bytes: int,
        timing: Timing,
        connect_to: Sequence[Address],
        reuse: bool = True,
    ) -> RawResponse:
        """Send one request and read the whole answer (up to ``max_bytes``).

        A new connection goes to the first of ``connect_to`` (IP addresses, tried
        in order) that accepts it; the URL's host is never resolved here.
        ``reuse=False`` opens a fresh connection: a request that must never be
        sent twice is then never exposed to a stale keep-alive connection.
        A reused connection found dead before any answer byte is replaced once.
        """
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = parts.hostname or ""
        port = parts.port or (443 if scheme == "https" else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        default_port = port == (443 if scheme == "https" else 80)
        host_header = host if default_port else f"{host}:{port}"
        if ":" in host and not host.startswith("["):
            host_header = f"[{host}]" if default_port else f"[{host}]:{port}"
        all_headers = [("Host", host_header), *headers]
        if body is not None:
            all_headers.append(("Content-Length", str(len(body))))
        origin = (scheme, host, port)
        connection = self._checkout(origin) if reuse else None
        if connection is None:
            connection = await self._connect(origin, connect_to, timing)
        try:
            return await self._exchange(
                connection, origin, method, target, all_headers, body, max_bytes, timing
            )
        except _StaleConnection:
            fresh = await self._connect(origin, connect_to, timing)
            try:
                return await self._exchange(
                    fresh, origin, method, target, all_headers, body, max_bytes, timing
                )
            except _StaleConnection as exc:
                raise UpstreamProtocolError("server closed the connection unanswered") from exc

    def _checkout(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.usable(self._keepalive_s):
                connection.reused = True
                return connection
            connection.close()
        return None

    def _checkin(self, origin: Origin, connection: _Connection) -> None:
        protocol = connection.protocol
        leftover, _ = protocol.trailing_data  # bytes past the answer: the stream is off
        if not leftover and protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
            protocol.start_next_cycle()
            idle = self._idle[origin]
            if len(idle) < self._max_idle:
                connection.park()
                idle.append(connection)
                return
        connection.close()

    async def _connect(
        self, origin: Origin, connect_to: Sequence[Address], timing: Timing
    ) -> _Connection:
        scheme, host, port = origin
        # IP addresses only (a name here would be resolved again by the connect).
        addresses = [str(ipaddress.ip_address(str(a).strip("[]"))) for a in connect_to]
        if not addresses:
            raise UpstreamConnectError(f"no address to connect to for {host}")
        timing.connect_start = time.time_ns()
        tls = None
        if scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            tls = self._ssl
        failure: Exception | None = None
        for address in addresses:
            try:
                # The checked address, with the URL's host as TLS server name (SNI and
                # certificate check): a second DNS answer can no longer redirect the call.
                reader, writer = await self._open_connection(
                    address, port, ssl=tls, server_hostname=host if tls else None, limit=_READ_SIZE
                )
            except (OSError, ssl.SSLError) as exc:
                failure = exc
                continue
            timing.connect_end = time.time_ns()
            return _Connection(reader, writer, address)
        assert failure is not None
        raise UpstreamConnectError(f"{type(failure).__name__}: {failure}") from failure

    async def _exchange(
        self,
        connection: _Connection,
        origin: Origin,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        max_bytes: int,
        timing: Timing,
    ) -> RawResponse:
        protocol = connection.protocol
        answered = False
        try:
            timing.request_start = time.time_ns()
            data = protocol.send(h11.Request(method=method, target=target, headers=headers))
            if body:
                data += protocol.send(h11.Data(data=body)) or b""
            data += protocol.send(h11.EndOfMessage()) or b""
            connection.writer.write(data or b"")
            await connection.writer.drain()
            status, response_headers, chunks, size = 0, {}, [], 0
            while True:
                event = protocol.next_event()
                if event is h11.NEED_DATA:
                    protocol.receive_data(await connection.read())
                    continue
                if isinstance(event, h11.Response):
                    answered = True
                    status = event.status_code
                    response_headers = {
                        name.decode("latin-1"): value.decode("latin-1")
                        for name, value in event.headers
                    }
                elif isinstance(event, h11.Data):
                    size += len(event.data)
                    if size > max_bytes:
                        raise ResponseTooLarge(max_bytes)
                    chunks.append(event.data)
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    raise ConnectionResetError("connection closed mid-answer")
        except ResponseTooLarge:
            connection.close()
            raise
        except (OSError, h11.ProtocolError, asyncio.IncompleteReadError) as exc:
            connection.close()
            if connection.reused and not answered:
                raise _StaleConnection from exc
            raise broken_answer(exc) from exc
        except BaseException:  # cancelled (deadline) or worse: the connection is mid-message
            connection.close()
            raise
        timing.response_end = time.time_ns()
        reused = connection.reused
        self._checkin(origin, connection)
        return RawResponse(status, response_headers, b"".join(chunks), reused, connection.address)

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


class _StaleConnection(Exception):
    """A pooled connection turned out dead before any answer: safe to use a fresh one."""
