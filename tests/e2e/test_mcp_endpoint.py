"""MCP end to end: shop and two gateways as real processes on one database (strict mode,
API keys). The official ``mcp`` client lists and calls tools over Streamable HTTP and,
through ``python -m gateway mcp-stdio``, over stdio."""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged, listen

from reach_common.stack import mint_key
from tests.conftest import REPO_ROOT, Backends
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
SKU = "SKU2024001"
CALLER_LIMIT = 12  # per caller per minute (CALLER_RATE_LIMIT), shared by both gateways


def _key(database_url: str, user_id: str, roles: list[str]) -> str:
    return mint_key(database_url, user_id, roles)


class Alternating(httpx2.AsyncBaseTransport):
    """Sends each JSON-RPC request to the next of several gateways: one client, many
    replicas (a notification goes where the request before it went)."""

    def __init__(self, ports: list[int]) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._ports = itertools.cycle(ports)
        self._port = next(self._ports)
        self.served: list[tuple[int, int]] = []  # (port, HTTP status)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if b'"id"' in request.content:
            self._port = next(self._ports)
        port = self._port
        request.url = request.url.copy_with(port=port)
        request.headers["host"] = f"127.0.0.1:{port}"
        response = await self._inner.handle_async_request(request)
        self.served.append((port, response.status_code))
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


@asynccontextmanager
async def over_http(
    url: str, key: str, transport: httpx2.AsyncBaseTransport | None = None
) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, transport=transport)
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def over_stdio(url: str, key: str) -> AsyncIterator[ClientSession]:
    bridge = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gateway", "mcp-stdio", "--url", url],
        env={**os.environ, "REACH_API_KEY": key, "LOG_LEVEL": "WARNING"},
    )
    async with stdio_client(bridge) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def tools_changed_on(url: str, key: str, change: Callable[[], Awaitable[None]]) -> object:
    """Listen (2026-07-28 ``subscriptions/listen``) at ``url``, make ``change``; the event."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.discover()
        async with listen(session, tools_list_changed=True) as subscription:
            await change()
            with anyio.fail_after(20):
                return await anext(subscription)


def text(result: types.CallToolResult) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    body: dict[str, Any] = json.loads(block.text)
    return body


async def same_calls(
    alice: ClientSession, bob: ClientSession, hammer: ClientSession
) -> dict[str, Any]:
    """List as two callers, read stock, send a bad argument, run into the rate limit."""
    alice_tools = {t.name for t in (await alice.list_tools()).tools}
    bob_tools = {t.name for t in (await bob.list_tools()).tools}
    stock = await alice.call_tool("inventory_query", {"sku": SKU})
    invalid = await alice.call_tool("inventory_query", {"sku": "not-a-sku"})
    results = [
        await hammer.call_tool("inventory_query", {"sku": SKU}) for _ in range(CALLER_LIMIT + 1)
    ]
    return {
        "alice": alice_tools,
        "bob": bob_tools,
        "stock": stock,
        "invalid": invalid,
        "limited": results[-1],
        "before_limit": results[0],
    }


def check(seen: dict[str, Any], shop_stock: dict[str, Any]) -> None:
    assert {"order_query", "report_monthly", "inventory_query", "sales_query"} <= seen["alice"]
    assert "sales_query" in seen["bob"]
    assert not {"order_query", "report_monthly"} & seen["bob"]  # someone else's tools
    assert not seen["stock"].is_error
    assert text(seen["stock"]) == shop_stock  # the shop's real stock
    assert seen["invalid"].is_error
    invalid = text(seen["invalid"])
    assert invalid["reason"] == "invalid_arguments"
    assert "sku" in invalid["message"]
    assert not seen["before_limit"].is_error
    assert seen["limited"].is_error
    assert text(seen["limited"])["reason"] == "rate_limited"


async def test_mcp_over_http_and_stdio_against_real_processes(
    clean_state: Backends, tmp_path: Path
) -> None:
    db = clean_state.database_url
    keys = {
        name: _key(db, name, roles)
        for name, roles in {
            "alice": ["ops_admin"],
            "bob": ["viewer"],
            "carol": ["viewer"],
            "dave": ["viewer"],
            "erin": ["ops_admin"],
            "root": ["admin"],
        }.items()
    }
    env = {
        "DATABASE_URL": db,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
        "AUTH_MODE": "strict",
    }
    shop_port, first_port, second_port = free_port(), free_port(), free_port()
    gateway_env = {
        **env,
        "SHOP_URL": f"http://127.0.0.1:{shop_port}",
        "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
        "EGRESS_ALLOWLIST": "127.0.0.1",
        "CALLER_RATE_LIMIT": f"{CALLER_LIMIT}/minute",
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with (
        service_process("shop", shop_port, env, tmp_path) as shop,
        service_process(
            "gateway", first_port, {**gateway_env, "TOOL_AUTO_DISCOVERY": "true"}, tmp_path / "a"
        ) as first,
        service_process("gateway", second_port, gateway_env, tmp_path / "b") as second,
    ):
        async with httpx.AsyncClient(timeout=10) as client:
            shop_stock = (await client.get(f"{shop}/api/inventory/{SKU}")).json()
            anonymous = await client.post(
                f"{first}/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"accept": "application/json, text/event-stream"},
            )
            # A registry change on the first gateway reaches a listener on the second.
            manifest = json.loads((REPO_ROOT / "manifests" / "sales_query.json").read_text())
            manifest["tool_id"] = "sales_query_copy"

            async def register() -> None:
                root = {"Authorization": f"Bearer {keys['root']}"}
                created = await client.post(f"{first}/tools/register", json=manifest, headers=root)
                assert created.status_code == 201, created.text

            changed = await tools_changed_on(f"{second}/mcp", keys["bob"], register)
        # Over Streamable HTTP, every request alternating between the two gateways.
        transports = [Alternating([first_port, second_port]) for _ in range(3)]
        async with (
            over_http(f"{first}/mcp", keys["alice"], transports[0]) as alice,
            over_http(f"{first}/mcp", keys["bob"], transports[1]) as bob,
            over_http(f"{first}/mcp", keys["carol"], transports[2]) as carol,
        ):
            over_replicas = await same_calls(alice, bob, carol)
        # Over stdio, through the bridge.
        async with (
            over_stdio(f"{second}/mcp", keys["erin"]) as erin,
            over_stdio(f"{second}/mcp", keys["bob"]) as bob,
            over_stdio(f"{second}/mcp", keys["dave"]) as dave,
        ):
            over_bridge = await same_calls(erin, bob, dave)
    assert isinstance(changed, ToolsListChanged)
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith('Bearer resource_metadata="')
    check(over_replicas, shop_stock)
    check(over_bridge, shop_stock)
    for transport in transports:
        ports = {port for port, status in transport.served if status == 200}
        assert ports == {first_port, second_port}
        assert all(status < 400 for _, status in transport.served), transport.served
