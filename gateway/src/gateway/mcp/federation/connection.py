"""One kept MCP session per federated server, opened on first use and reopened after a failure.

A session is opened by a background task that owns the SDK's transport and
``ClientSession`` (their anyio task groups must be entered and left in one task);
calls from any request share it, so a call costs one round trip (about 1.5 ms on
loopback) instead of a new session's handshake (about 30 ms). When the transport
fails the task ends, pending calls fail, and the next call opens a new session.

Streamable HTTP servers are reached like ``http`` tools: the host is resolved and
checked against the egress policy (``EgressDenied`` in strict mode), and every
request goes to a checked address (the URL's host stays in ``Host`` and is the TLS
server name), so no second DNS answer is used. Every answer is read up to
``max_message_bytes`` and no further. The credential (bearer or OAuth2, by secret
name) is added per request by :class:`_CredentialAuth`, so an OAuth2 token is
renewed when it expires; a value never leaves the outgoing headers.

Stdio servers are started from the argv an operator listed in ``MCP_STDIO_COMMANDS``,
with only the SDK's safe environment (``PATH``, ``HOME`` ...), none of the gateway's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx2
import structlog
from mcp.client.session import ClientSession, IncomingMessage, MessageHandlerFnT
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation, ToolListChangedNotification
from opentelemetry import trace

from gateway.catalog.egress import IPAddress
from gateway.catalog.spec import OutboundAuth
from gateway.executor.credentials import OutboundCredentials
from gateway.executor.resolver import HostResolver

log = structlog.get_logger(__name__)

CLIENT_INFO = Implementation(name="reach-gateway", version="1")


class MessageTooLarge(httpx2.ReadError):
    """An MCP server's answer went past ``MCP_MAX_MESSAGE_BYTES``."""


@dataclass(frozen=True)
class ServerTarget:
    """Where a federated server is and how to reach it (no secret values)."""

    server_id: str
    transport: Literal["http", "stdio"]
    url: str | None = None
    argv: tuple[str, ...] = ()
    auth: OutboundAuth = field(default_factory=OutboundAuth)


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(
        self, inner: httpx2.AsyncByteStream, limit: int, overflowed: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._overflowed = overflowed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._inner:
            read += len(chunk)
            if read > self._limit:
                self._overflowed()  # the SDK reports only "stream ended": remember why
                raise MessageTooLarge(f"the server's answer passed {self._limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _PinnedTransport(httpx2.AsyncBaseTransport):
    """Sends every request to an address the egress policy checked, reading at most
    ``limit`` bytes of each answer."""

    def __init__(
        self, addresses: list[IPAddress], limit: int, overflowed: Callable[[], None]
    ) -> None:
        self._inner = httpx2.AsyncHTTPTransport(trust_env=False)
        self._addresses = addresses
        self._limit = limit
        self._overflowed = overflowed

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        host = request.url.host
        address = self._addresses[0]
        request.url = request.url.copy_with(host=str(address))
        if request.url.scheme == "https":
            request.extensions = {**request.extensions, "sni_hostname": host}
        response = await self._inner.handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        response.stream = _CappedStream(stream, self._limit, self._overflowed)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CredentialAuth(httpx2.Auth):
    """The server's credential on every request, fresh from the tool secret store."""

    def __init__(self, credentials: OutboundCredentials, auth: OutboundAuth, url: str) -> None:
        self._credentials = credentials
        self._auth = auth
        self._url = url

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        request.headers.update(await self._credentials.headers(self._auth, self._url, 10.0))
        response = yield request
        if response.status_code == 401:
            await self._credentials.forget_token(self._auth)


class _Link:
    """The background task that holds one server's session."""

    def __init__(self, target: ServerTarget) -> None:
        self.target = target
        self.session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    @property
    def alive(self) -> bool:
        return self.session is not None and self._task is not None and not self._task.done()

    async def open(
        self,
        transport: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
        on_message: MessageHandlerFnT,
        timeout_s: float,
    ) -> ClientSession:
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._hold(transport, on_message, ready))
        try:
            async with asyncio.timeout(timeout_s):
                return await asyncio.shield(ready)
        except BaseException:
            await self.close()
            raise

    async def _hold(
        self,
        transport: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
        on_message: MessageHandlerFnT,
        ready: asyncio.Future[ClientSession],
    ) -> None:
        try:
            async with (
                transport() as (read, write),
                ClientSession(
                    read, write, message_handler=on_message, client_info=CLIENT_INFO
                ) as session,
            ):
                await session.initialize()
                self.session = session
                ready.set_result(session)
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - task boundary: the link is just dead
            if not ready.done():
                ready.set_exception(_first(exc))
            elif not isinstance(exc, asyncio.CancelledError):
                log.info("mcp_session_lost", server=self.target.server_id, error=_describe(exc))
        finally:
            self.session = None

    async def close(self) -> None:
        """End the session politely (up to 5 s), or at once if it never opened."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            if self.session is None:
                raise TimeoutError  # still connecting: nothing to end politely
            async with asyncio.timeout(5):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _first(exc: BaseException) -> BaseException:
    """The first real failure inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _first(exc)
    text = str(exc)[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


describe_failure = _describe


class Upstreams:
    """The sessions of every federated server this process talks to."""

    def __init__(
        self,
        *,
        resolver: HostResolver,
        credentials: OutboundCredentials,
        tracer: trace.Tracer,
        max_message_bytes: int,
        connect_timeout_s: float,
        on_list_changed: Callable[[str], None],
    ) -> None:
        self._resolver = resolver
        self._credentials = credentials
        self._tracer = tracer
        self.max_message_bytes = max_message_bytes
        self._connect_timeout_s = connect_timeout_s
        self._on_list_changed = on_list_changed
        self._targets: dict[str, ServerTarget] = {}
        self._links: dict[str, _Link] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._oversized: set[str] = set()

    def oversized(self, server_id: str) -> bool:
        """Whether an answer of ``server_id`` passed the size limit since last asked."""
        found = server_id in self._oversized
        self._oversized.discard(server_id)
        return found

    def configure(self, target: ServerTarget) -> None:
        """Know (or re-know) a server; a changed target gets a new session on next use."""
        self._targets[target.server_id] = target

    def known(self, server_id: str) -> bool:
        return server_id in self._targets

    def server_ids(self) -> set[str]:
        return set(self._targets)

    async def forget(self, server_id: str) -> None:
        self._targets.pop(server_id, None)
        link = self._links.pop(server_id, None)
        if link is not None:
            await link.close()

    async def session(self, server_id: str) -> ClientSession:
        """The live session to ``server_id``, opened if there is none.

        Raises ``KeyError`` for a server this process does not know, ``EgressDenied`` /
        ``SecretUnavailable`` as tool calls do, and the transport's own errors.
        """
        target = self._targets[server_id]
        link = self._links.get(server_id)
        if link is not None and link.alive and link.target == target and link.session:
            return link.session
        async with self._locks.setdefault(server_id, asyncio.Lock()):
            link = self._links.get(server_id)
            if link is not None and link.alive and link.target == target and link.session:
                return link.session
            if link is not None:
                await link.close()
            link = _Link(target)
            self._links[server_id] = link
            transport = await self._transport(target)
            return await link.open(
                transport, self._message_handler(server_id), self._connect_timeout_s
            )

    async def discard(self, server_id: str, session: ClientSession) -> None:
        """Drop a session a call found broken, so the next call opens a new one."""
        link = self._links.get(server_id)
        if link is not None and link.session is session:
            self._links.pop(server_id, None)
            await link.close()

    async def aclose(self) -> None:
        links, self._links = list(self._links.values()), {}
        await asyncio.gather(*(link.close() for link in links), return_exceptions=True)

    def _message_handler(self, server_id: str) -> MessageHandlerFnT:
        async def handle(message: IncomingMessage) -> None:
            if isinstance(message, ToolListChangedNotification):
                self._on_list_changed(server_id)

        return handle

    async def _transport(
        self, target: ServerTarget
    ) -> Callable[[], contextlib.AbstractAsyncContextManager[Any]]:
        if target.transport == "stdio":
            command, *args = target.argv
            parameters = StdioServerParameters(command=command, args=args)
            return lambda: stdio_client(parameters)
        assert target.url is not None
        url = target.url
        host = urlsplit(url).hostname or ""
        # A missing secret is the answer to give before any connection is tried.
        await self._credentials.headers(target.auth, url, self._connect_timeout_s)
        addresses = await self._resolver.resolve(host, self._tracer)
        limit = self.max_message_bytes

        @contextlib.asynccontextmanager
        async def open_http() -> AsyncIterator[Any]:
            client = httpx2.AsyncClient(
                transport=_PinnedTransport(
                    addresses, limit, lambda: self._oversized.add(target.server_id)
                ),
                auth=_CredentialAuth(self._credentials, target.auth, url),
                timeout=httpx2.Timeout(self._connect_timeout_s, read=300.0),
                trust_env=False,
            )
            async with (
                client,
                streamable_http_client(
                    url, http_client=client, max_sse_event_size=limit
                ) as streams,
            ):
                yield streams

        return open_http
