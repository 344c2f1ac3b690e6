"""``/mcp`` and ``/mcp/{server}``: Reach's tools over MCP (Streamable HTTP, stateless),
and ``/.well-known/oauth-protected-resource`` for MCP clients that use OAuth.

The endpoint resolves the caller once per HTTP request, from the request's
credential (strict mode: an API key or JWT only, or a 401 pointing at the
resource metadata; permissive mode: also ``X-User-Id`` / ``X-User-Roles``),
finds the surface (the whole registry, or a virtual server), and hands the
request to the MCP SDK's session manager (``gateway.mcp.server``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from gateway.api.deps import RuntimeDep
from gateway.mcp.oauth import METADATA_PATH, challenge, resource_metadata, resource_of
from gateway.mcp.surface import WHOLE_REGISTRY, McpCall
from gateway.runtime import GatewayRuntime
from reach_common.auth.errors import InvalidCredential, Unauthenticated

router = APIRouter(tags=["mcp"])


def _resource(runtime: GatewayRuntime, request: Request) -> str:
    return resource_of(runtime.settings.mcp_resource_url, str(request.base_url))


@router.get(METADATA_PATH)
async def protected_resource_metadata(request: Request, runtime: RuntimeDep) -> dict[str, Any]:
    """OAuth 2.0 protected resource metadata (RFC 9728) for MCP clients: this gateway's
    resource identifier and the authorization servers whose tokens it accepts. Send the
    token as `Authorization: Bearer <token>`; its audience must be this gateway."""
    settings = runtime.settings
    servers = settings.mcp_authorization_servers or (
        [settings.jwt_issuer] if settings.jwt_issuer else []
    )
    return resource_metadata(_resource(runtime, request), servers)


class McpEndpoint:
    """The ASGI app behind ``/mcp`` and ``/mcp/{server}``."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        runtime: GatewayRuntime = request.state.runtime
        assert runtime.mcp is not None
        headers = request.headers
        try:
            caller = await runtime.auth.resolve(
                headers, runtime.auth.authenticator.claimed(headers)
            )
        except InvalidCredential as exc:
            exc.headers["WWW-Authenticate"] = challenge(
                _resource(runtime, request), "invalid_token"
            )
            raise
        if runtime.auth.strict and not caller.authenticated:
            refused = Unauthenticated(
                "MCP needs a credential: `Authorization: Bearer <API key or JWT>` (OAuth: see "
                f"{METADATA_PATH})."
            )
            refused.headers["WWW-Authenticate"] = challenge(_resource(runtime, request))
            raise refused
        name = scope.get("path_params", {}).get("server")
        surface = WHOLE_REGISTRY if name is None else await runtime.mcp.virtual.surface(name)
        client_ip = request.client.host if request.client else None
        await runtime.mcp.handle(McpCall(caller, surface, headers, client_ip), scope, receive, send)


def mcp_routes() -> tuple[list[BaseRoute], list[BaseRoute]]:
    """The transport's routes: ``/mcp`` to put before every API router, ``/mcp/{server}``
    after them, so ``/mcp/servers`` and ``/mcp/virtual-servers`` stay the API's.

    Each request's route is found by walking the app's routes in order, twice (the router,
    then the tracing middleware naming its span): ``/mcp`` at the end of that list cost a
    call about half a millisecond. No API path is ``/mcp`` itself, so first is safe."""
    endpoint = McpEndpoint()
    methods = ["GET", "POST", "DELETE"]
    return (
        [Route("/mcp", endpoint, methods=methods, include_in_schema=False)],
        [Route("/mcp/{server}", endpoint, methods=methods, include_in_schema=False)],
    )
