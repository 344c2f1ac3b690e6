"""The gateway's MCP server: ``tools/list`` and ``tools/call`` over Reach's pipeline.

One low-level ``mcp.server.lowlevel.Server`` behind one stateless
``StreamableHTTPSessionManager``: every HTTP request is served on its own, by
any replica (no session to find). The ASGI endpoint (``gateway.api.mcp``) has
already resolved the caller from the request's credential and the surface from
its path, and left both in the request scope (:class:`McpCall`).

- ``tools/list``: the surface's tools the caller may use, by ``can_use``: the
  decision ``GET /tools/list`` and invoking apply.
- ``tools/call``: ``InvokeService.invoke``, as ``POST /tools/{id}/invoke``
  calls it: validation, rate limits, timeout/retry, breaker, audit, one trace.
  A tool the caller may not use (or that is not on this surface) is a protocol
  error, "unknown tool", as it would be a 404 over REST.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from opentelemetry import trace
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.types import Receive, Scope, Send

from gateway.audit.writer import transport_name
from gateway.auth.service import can_use
from gateway.invoke.service import InvokeService, failure_envelope
from gateway.mcp.convert import call_result, mcp_tool
from gateway.mcp.routed import ROUTED_TOOLS, RoutedTools
from gateway.mcp.surface import SCOPE_KEY, McpCall
from gateway.mcp.virtual.service import VirtualServers
from gateway.registry.cache import RegistryCache
from gateway.registry.errors import ToolNotFound
from gateway.routing.service import Router
from gateway.run.service import RunService
from reach_common.middleware import replaying

SERVER_NAME = "reach-gateway"
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")
UNKNOWN_TOOL = types.INVALID_PARAMS


class McpService:
    def __init__(
        self,
        *,
        registry: RegistryCache,
        invoke: InvokeService,
        router: Router,
        run: RunService,
        sessionmaker: async_sessionmaker[AsyncSession],
        security: TransportSecuritySettings,
        tracer: trace.Tracer,
        json_response: bool = False,
    ) -> None:
        self._registry = registry
        self._invoke = invoke
        self._routed = RoutedTools(
            router=router, run=run, registry=registry, tracer=tracer, call_tool=self._call_listed
        )
        self._tracer = tracer
        self.virtual = VirtualServers(sessionmaker, changed=self.tools_changed)
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.server: Server[Any] = Server(
            SERVER_NAME,
            version="1",
            instructions=(
                "Reach's tools, filtered to what your credential may call. Tool failures come "
                'back as results with isError and JSON text {"reason", "message", ...}.'
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self.listen,
            # Reach's schemas declare no Mcp-Param headers; without this the SDK would
            # run tools/list on every 2026-07-28 call to look for some.
            get_tool_input_schema=lambda _name: None,
        )
        # The HTTP request's span is the MCP call's parent: one trace per request. The
        # SDK's own middleware would open a second root from a client's _meta.traceparent.
        self.server.middleware = []
        self.manager = StreamableHTTPSessionManager(
            self.server, stateless=True, json_response=json_response, security_settings=security
        )
        # subscriptions/listen answers with a stream that stays open: always SSE.
        self.streaming = StreamableHTTPSessionManager(
            self.server, stateless=True, json_response=False, security_settings=security
        )
        registry.add_listener(self._registry_changed)

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """The session manager's task group; lives as long as the gateway (its lifespan)."""
        async with self.manager.run(), self.streaming.run():
            try:
                yield
            finally:
                self.listen.close()

    async def handle(self, call: McpCall, scope: Scope, receive: Receive, send: Send) -> None:
        scope[SCOPE_KEY] = call
        manager = self.manager
        if manager.json_response and _per_request_era(scope):
            # Only a 2026-07-28 POST can be ``subscriptions/listen``: read the body to
            # find out. A handshake-era call (most ``tools/call``) goes on unread.
            body, receive = await _buffered(receive)
            if b"subscriptions/listen" in body:
                manager = self.streaming
        await manager.handle_request(scope, receive, send)

    async def tools_changed(self) -> None:
        """Tell open ``subscriptions/listen`` streams on this replica to list tools again."""
        await self.bus.publish(ToolsListChanged())

    def _registry_changed(self, _: RegistryCache) -> None:
        # Runs on every replica: each one's registry reloads on the shared change signal.
        asyncio.get_running_loop().create_task(self.tools_changed())

    # -- handlers ---------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        call = _call_of(ctx)
        if call.surface.routed:
            return types.ListToolsResult(tools=list(ROUTED_TOOLS))
        tools = [
            mcp_tool(tool.spec)
            for tool in self._registry.tools.values()
            if call.surface.includes(tool.spec) and can_use(call.caller, tool.spec).allowed
        ]
        tools.sort(key=lambda t: t.name)
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        call = _call_of(ctx)
        token = transport_name.set("mcp")
        try:
            if call.surface.routed:
                return await self._routed.call(call, params.name, params.arguments or {})
            return await self.call(call, params.name, params.arguments or {}, protocol=True)
        finally:
            transport_name.reset(token)

    async def _call_listed(
        self, call: McpCall, tool_id: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        return await self.call(call, tool_id, arguments, protocol=False)

    async def call(
        self, call: McpCall, tool_id: str, arguments: dict[str, Any], *, protocol: bool
    ) -> types.CallToolResult:
        """One call through the invoke pipeline. A tool off this surface or not the
        caller's is an unknown tool: a protocol error (``protocol``) or a tool error."""
        tool = self._registry.get(tool_id)
        if tool is not None and not call.surface.includes(tool.spec):
            # Not on this surface: the same answer as a tool that does not exist.
            outcome_status, body = 404, failure_envelope(tool_id, {}, ToolNotFound(tool_id), 0.0)
        else:
            outcome = await self._invoke.invoke(
                tool_id,
                arguments,
                headers=call.headers,
                caller=call.caller,
                client_ip=call.client_ip,
            )
            outcome_status, body = outcome.status_code, outcome.body
        if protocol and outcome_status == 404 and body.get("reason") == "tool_not_found":
            raise MCPError(UNKNOWN_TOOL, f"Unknown tool: {tool_id}")
        return call_result(outcome_status, body)


def _per_request_era(scope: Scope) -> bool:
    """A POST the SDK serves on its own, per-request (2026-07-28) path: one whose
    ``MCP-Protocol-Version`` header names no handshake-era revision, the SDK's own test."""
    if scope["method"] != "POST":
        return False
    version = next((v for k, v in scope["headers"] if k == _VERSION_HEADER), None)
    return version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The request body (MAX_BODY_BYTES bounds it upstream), and a ``receive`` that
    hands it on again."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    return body, replaying(body, receive)


def _call_of(ctx: ServerRequestContext[Any]) -> McpCall:
    request = ctx.request
    call = request.scope.get(SCOPE_KEY) if request is not None else None
    if not isinstance(call, McpCall):  # only reachable through the gateway's endpoint
        raise MCPError(types.INTERNAL_ERROR, "No caller for this request.")
    return call
