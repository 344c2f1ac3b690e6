"""The tool-call HTTP client on ``httpx`` (``TOOL_HTTP_CLIENT=httpx``): the h11 client's
contract. Not the default: it costs more CPU per call (figures in ``transport.py``).

- no name resolution: the request carries the addresses the caller resolved
  and checked (``connect_to``); an ``httpcore`` network backend dials the
  first of them that accepts, while the URL keeps its host, so ``Host`` and,
  for https, the TLS server name (SNI and certificate check) stay the URL's
  (unlike the h11 client, a failed TLS handshake does not move on to the
  next address);
- keep-alive connections pooled per origin (``httpcore``), dropped after
  ``keepalive_s``; ``reuse=False`` takes a client that keeps no connection,
  so the request goes out on a connection of its own;
- TLS through ``ssl.create_default_context()``; no proxy from the
  environment, no redirects followed, no compression asked for;
- the body read up to a byte limit and no further;
- the timings of the ``connect`` and ``response`` phases, from ``httpcore``'s
  trace events.

Deadlines are the caller's (``asyncio.timeout``); a request cancelled
part-way closes its connection.
"""

from __future__ import annotations

import ipaddress
import ssl
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from contextvars import ContextVar
from typing import Any

import httpcore
import httpx

from gateway.executor.transport import (
    Address,
    RawResponse,
    ResponseTooLarge,
    Timing,
    UpstreamConnectError,
    UpstreamProtocolError,
    broken_answer,
)

# The checked addresses of the request being sent: connections open in the task that
# sends the request, so the network backend reads them from here.
_CONNECT_TO: ContextVar[Sequence[str]] = ContextVar("tool_http_connect_to")


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Dials the request's checked addresses in order; the URL's host is never resolved."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        failure: Exception = httpcore.ConnectError(f"no address to connect to for {host}")
        for address in _CONNECT_TO.get(()):
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("tools are called over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Body(httpx.AsyncByteStream):
    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._response.aiter_stream():
            yield chunk

    async def aclose(self) -> None:
        await self._response.aclose()


class _PoolTransport(httpx.AsyncBaseTransport):
    """httpx over an ``httpcore`` pool with our network backend (httpx's own transport
    takes no backend). ``httpcore`` errors pass through unmapped: the client maps them."""

    def __init__(self, pool: httpcore.AsyncConnectionPool) -> None:
        self._pool = pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        response = await self._pool.handle_async_request(
            httpcore.Request(
                method=request.method,
                url=httpcore.URL(
                    scheme=request.url.raw_scheme,
                    host=request.url.raw_host,
                    port=request.url.port,
                    target=request.url.raw_path,
                ),
                headers=request.headers.raw,
                content=request.stream,
                extensions=request.extensions,
            )
        )
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _Phases:
    """One request's ``httpcore`` trace events, turned into :class:`Timing`."""

    __slots__ = ("connected", "timing")

    def __init__(self, timing: Timing) -> None:
        self.timing = timing
        self.connected = False

    async def __call__(self, event: str, info: dict[str, Any]) -> None:
        if event == "connection.connect_tcp.started":
            self.connected = True
            self.timing.connect_start = time.time_ns()
        elif event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            self.timing.connect_end = time.time_ns()
        elif event == "http11.send_request_headers.started":
            self.timing.request_start = time.time_ns()


class HttpxClient:
    def __init__(
        self,
        *,
        keepalive_s: float = 15.0,
        max_idle: int = 64,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        backend = PinnedBackend(network_backend)
        tls = ssl.create_default_context()
        self._pooled = self._client(backend, tls, keepalive_s, max_idle)
        self._fresh = self._client(backend, tls, keepalive_s, 0)

    @staticmethod
    def _client(
        backend: httpcore.AsyncNetworkBackend, tls: ssl.SSLContext, keepalive_s: float, idle: int
    ) -> httpx.AsyncClient:
        pool = httpcore.AsyncConnectionPool(
            ssl_context=tls,
            max_connections=None,
            max_keepalive_connections=idle,
            keepalive_expiry=keepalive_s,
            network_backend=backend,
        )
        client = httpx.AsyncClient(
            transport=_PoolTransport(pool),
            timeout=None,  # noqa: S113 - the caller's deadline (asyncio.timeout) bounds it
            follow_redirects=False,
            trust_env=False,
        )
        del client.headers["Accept-Encoding"]
        return client

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
        ``reuse=False`` opens a fresh connection. A reused connection found dead
        before any answer is replaced once.
        """
        # IP addresses only (a name here would be resolved by the connect).
        addresses = [str(ipaddress.ip_address(str(a).strip("[]"))) for a in connect_to]
        if not addresses:
            host = httpx.URL(url).host
            raise UpstreamConnectError(f"no address to connect to for {host}")
        token = _CONNECT_TO.set(addresses)
        try:
            try:
                return await self._send(
                    self._pooled if reuse else self._fresh,
                    method,
                    url,
                    headers,
                    body,
                    max_bytes,
                    timing,
                )
            except _StaleConnection:
                try:
                    return await self._send(
                        self._fresh, method, url, headers, body, max_bytes, timing
                    )
                except _StaleConnection as exc:
                    raise UpstreamProtocolError("server closed the connection unanswered") from exc
        finally:
            _CONNECT_TO.reset(token)

    async def _send(
        self,
        client: httpx.AsyncClient,
        method: str,
        url: str,
        headers: list[tuple[str, str]],
        body: bytes | None,
        max_bytes: int,
        timing: Timing,
    ) -> RawResponse:
        phases = _Phases(timing)
        answered = False
        try:
            async with client.stream(
                method, url, headers=headers, content=body, extensions={"trace": phases}
            ) as response:
                answered = True
                chunks, size = [], 0
                async for chunk in response.aiter_raw():
                    size += len(chunk)
                    if size > max_bytes:
                        raise ResponseTooLarge(max_bytes)
                    chunks.append(chunk)
                timing.response_end = time.time_ns()
                stream = response.extensions.get("network_stream")
                peer = stream.get_extra_info("server_addr") if stream is not None else None
        except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
            raise UpstreamConnectError(f"{type(exc).__name__}: {exc}") from exc
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException) as exc:
            if not phases.connected and not answered:
                raise _StaleConnection from exc
            raise broken_answer(exc) from exc
        return RawResponse(
            response.status_code,
            dict(response.headers),
            b"".join(chunks),
            not phases.connected,
            str(peer[0]) if peer else "",
        )

    async def aclose(self) -> None:
        await self._pooled.aclose()
        await self._fresh.aclose()


class _StaleConnection(Exception):
    """A pooled connection turned out dead before any answer: safe to use a fresh one."""
