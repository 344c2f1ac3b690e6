"""The HTTP clients tools are called with (``TOOL_HTTP_CLIENT``), against a real loopback
server: each test runs on every client."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any

import httpcore
import pytest

from gateway.executor.transport import (
    LeanHttpClient,
    ResponseTooLarge,
    Timing,
    ToolHttpClient,
    UpstreamConnectError,
    create_tool_client,
)
from gateway.executor.transport_httpx import HttpxClient
from tests.e2e.processes import free_port
from tests.gateway.upstream import Reply, Upstream

LOOPBACK = ["127.0.0.1"]
NewClient = Callable[[], ToolHttpClient]


@pytest.fixture(params=["h11", "httpx"])
def new_client(request: pytest.FixtureRequest) -> NewClient:
    return lambda: create_tool_client(request.param)


async def get(client: ToolHttpClient, url: str, **kw: Any) -> Any:
    kw.setdefault("connect_to", LOOPBACK)
    return await client.request(
        "GET", url, [("Accept", "*/*")], None, max_bytes=1 << 20, timing=Timing(), **kw
    )


async def test_keep_alive_reuses_one_connection(upstream: Upstream, new_client: NewClient) -> None:
    client = new_client()
    first = await get(client, upstream.url + "/a?x=1")
    timing = Timing()
    second = await client.request(
        "POST",
        upstream.url + "/b",
        [("Content-Type", "application/json")],
        b'{"k":1}',
        max_bytes=1000,
        timing=timing,
        connect_to=LOOPBACK,
    )
    await client.aclose()
    assert (first.status, first.reused_connection) == (200, False)
    assert (second.status, second.reused_connection) == (200, True)
    assert upstream.connections == 1
    assert timing.connect_start is None  # no new connection, no connect phase
    assert timing.request_start is not None
    assert timing.response_end is not None
    a, b = upstream.received
    assert (a.method, a.target, a.headers["host"]) == (
        "GET",
        "/a?x=1",
        f"127.0.0.1:{upstream.port}",
    )
    assert (b.method, b.json(), b.headers["content-length"]) == ("POST", {"k": 1}, "7")


async def test_connection_close_chunked_bodies_and_fresh_connections(
    upstream: Upstream, new_client: NewClient
) -> None:
    client = new_client()
    upstream.script = [Reply(200, b"0123456789", chunked=True), Reply(200, {"n": 1}, close=True)]
    chunked = await get(client, upstream.url + "/c")
    closing = await get(client, upstream.url + "/d")
    after_close = await get(client, upstream.url + "/e")
    fresh = await get(client, upstream.url + "/f", reuse=False)
    await client.aclose()
    assert chunked.body == b"0123456789"
    assert closing.body == b'{"n": 1}'
    assert after_close.reused_connection is False
    assert fresh.reused_connection is False
    assert upstream.connections == 3


async def test_a_connection_the_server_dropped_while_idle_is_replaced(
    upstream: Upstream, new_client: NewClient
) -> None:
    client = new_client()
    upstream.script = [Reply(200, {"n": 1}, close=True)]
    upstream.script[0].headers = {}  # no "Connection: close": the client cannot know
    first = await get(client, upstream.url + "/a")
    # Whether or not the close has reached the client yet, the second call must not fail:
    # a pooled connection found dead (idle read done, or the send fails) is replaced.
    second = await get(client, upstream.url + "/b")
    await client.aclose()
    assert first.status == second.status == 200
    assert upstream.connections == 2


async def test_body_limit_and_connect_errors(upstream: Upstream, new_client: NewClient) -> None:
    client = new_client()
    upstream.default = Reply(200, b"x" * 5000)
    with pytest.raises(ResponseTooLarge):
        await client.request(
            "GET",
            upstream.url + "/big",
            [],
            None,
            max_bytes=4096,
            timing=Timing(),
            connect_to=LOOPBACK,
        )
    with pytest.raises(UpstreamConnectError):
        await get(client, f"http://127.0.0.1:{free_port()}/")
    upstream.default = Reply(200, {"ok": True})
    after = await get(client, upstream.url + "/ok")  # the oversized answer's socket was dropped
    await client.aclose()
    assert after.status == 200
    assert upstream.connections == 2


async def test_head_and_a_cancelled_request_do_not_poison_the_pool(
    upstream: Upstream, new_client: NewClient
) -> None:
    client = new_client()
    upstream.script = [Reply(200, b"", delay_s=1.0)]
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await get(client, upstream.url + "/slow")
    head = await client.request(
        "HEAD", upstream.url + "/h", [], None, max_bytes=10, timing=Timing(), connect_to=LOOPBACK
    )
    await client.aclose()
    assert head.status == 200
    assert head.body == b""
    assert upstream.connections == 2  # the cancelled request's connection was not reused


async def test_connects_to_the_given_address_and_keeps_the_urls_host(
    upstream: Upstream, new_client: NewClient
) -> None:
    """Security: the name in the URL is never resolved; the connection goes to an address
    the caller checked, the first of them that accepts, and ``Host`` stays the URL's."""
    client = new_client()
    url = f"http://tool.internal.test:{upstream.port}/a"
    # 127.0.0.2 is loopback too, but nothing listens there on this port: refused, next.
    answer = await get(client, url, connect_to=["127.0.0.2", "127.0.0.1"])
    await client.aclose()
    assert answer.status == 200
    assert answer.address == "127.0.0.1"
    assert upstream.received[0].headers["host"] == f"tool.internal.test:{upstream.port}"


async def test_only_ip_addresses_are_dialled(new_client: NewClient) -> None:
    client = new_client()
    with pytest.raises(ValueError, match="does not appear to be an IPv4 or IPv6 address"):
        await get(client, "http://example.test/", connect_to=["localhost"])
    with pytest.raises(UpstreamConnectError, match="no address"):
        await get(client, "http://example.test/", connect_to=[])


async def test_h11_https_dials_the_address_with_the_urls_host_as_tls_server_name() -> None:
    dialled: list[tuple[Any, ...]] = []

    async def refuse(host: str, port: int, **kw: Any) -> Any:
        dialled.append((host, port, kw["server_hostname"], isinstance(kw["ssl"], ssl.SSLContext)))
        raise ConnectionRefusedError("refused by the test")

    client = LeanHttpClient(open_connection=refuse)
    with pytest.raises(UpstreamConnectError, match="refused by the test"):
        await get(
            client, "https://api.example.test:8443/x", connect_to=["2001:db8::7", "192.0.2.7"]
        )
    assert dialled == [
        ("2001:db8::7", 8443, "api.example.test", True),
        ("192.0.2.7", 8443, "api.example.test", True),
    ]


class _RefusingThenTlsFailing(httpcore.AsyncNetworkBackend):
    """Refuses the first address, accepts the next; its TLS handshake then fails."""

    def __init__(self) -> None:
        self.dialled: list[tuple[str, int]] = []
        self.tls: list[tuple[str | None, bool]] = []

    async def connect_tcp(self, host: str, port: int, *args: Any) -> httpcore.AsyncNetworkStream:
        self.dialled.append((host, port))
        if len(self.dialled) == 1:
            raise httpcore.ConnectError("refused by the test")
        backend = self

        class Stream(httpcore.AsyncMockStream):
            async def start_tls(
                self,
                ssl_context: ssl.SSLContext,
                server_hostname: str | None = None,
                timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
            ) -> httpcore.AsyncNetworkStream:
                backend.tls.append((server_hostname, isinstance(ssl_context, ssl.SSLContext)))
                raise httpcore.ConnectError("handshake refused by the test")

        return Stream([])


async def test_httpx_https_dials_the_address_with_the_urls_host_as_tls_server_name() -> None:
    backend = _RefusingThenTlsFailing()
    client = HttpxClient(network_backend=backend)
    with pytest.raises(UpstreamConnectError, match="handshake refused by the test"):
        await get(
            client, "https://api.example.test:8443/x", connect_to=["2001:db8::7", "192.0.2.7"]
        )
    await client.aclose()
    assert backend.dialled == [("2001:db8::7", 8443), ("192.0.2.7", 8443)]
    assert backend.tls == [("api.example.test", True)]


async def test_a_connection_the_server_spoke_on_while_idle_is_not_reused(
    new_client: NewClient,
) -> None:
    """Bytes on an idle connection can only be the server leaving (a 408 before it
    closes): the next request must not read them as its answer."""
    connections = 0
    answered, timed_out = asyncio.Event(), asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        while await reader.readuntil(b"\r\n\r\n"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
            await answered.wait()  # the client has its 200 and parked the connection
            writer.write(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            timed_out.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    client = new_client()
    try:
        first = await get(client, url)
        answered.set()
        await asyncio.wait_for(timed_out.wait(), 5)
        # The 408 is in the socket; the pooled connection's idle read picks it up on the
        # loop's next pass over ready sockets, before this task runs again.
        await asyncio.sleep(0)
        second = await get(client, url)
    finally:
        await client.aclose()
        server.close()
    assert (first.status, second.status) == (200, 200)
    assert second.reused_connection is False
    assert connections == 2
