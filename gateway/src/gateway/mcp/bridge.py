"""``python -m gateway mcp-stdio``: MCP over stdio, forwarded to a gateway's ``/mcp``.

Desktop clients that only launch local processes start this command; it
speaks MCP on stdin/stdout and forwards ``tools/list`` and ``tools/call`` to a
gateway over Streamable HTTP with the official client, carrying the API key
(or JWT) as a bearer token. Forwarding to ``/mcp`` rather than to the REST API
keeps one implementation of everything that matters: the permission filter,
the annotations, the mapping of failures to tool errors, the audit's
``transport: mcp``. The bridge decides nothing; a protocol error from the
gateway is passed on as one.

stdout is the protocol: the bridge logs nothing there.
"""

from __future__ import annotations

from typing import Any

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

BRIDGE_NAME = "reach-gateway-stdio"


def bridge_headers(
    key: str | None, user: str | None = None, roles: str | None = None
) -> dict[str, str]:
    """The credential (strict mode), or a claimed identity (permissive mode only)."""
    headers: dict[str, str] = {}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if user:
        headers["X-User-Id"] = user
    if roles:
        headers["X-User-Roles"] = roles
    return headers


def bridge_server(upstream: ClientSession) -> Server[Any]:
    """A stdio-side server whose handlers ask ``upstream`` (the gateway)."""

    async def list_tools(
        _ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return await upstream.list_tools(params=params)

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await upstream.call_tool(params.name, params.arguments)
        assert isinstance(result, types.CallToolResult)  # Reach asks for no input
        return result

    server: Server[Any] = Server(
        BRIDGE_NAME, version="1", on_list_tools=list_tools, on_call_tool=call_tool
    )
    return server


async def serve_stdio(url: str, headers: dict[str, str]) -> None:
    """Bridge stdin/stdout to the gateway's MCP endpoint at ``url`` until stdin closes."""
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as upstream,
    ):
        await upstream.initialize()  # fails fast on a wrong URL or credential
        server = bridge_server(upstream)
        async with stdio_server() as (stdin, stdout):
            await server.run(stdin, stdout, server.create_initialization_options())
