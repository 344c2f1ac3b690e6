"""``/mcp/virtual-servers``: registry admins curate named subsets of the registry, each
served over MCP at ``/mcp/{name}``."""

from __future__ import annotations

from fastapi import APIRouter, Response

from gateway.api.deps import CallerDep, RuntimeDep
from gateway.mcp.virtual.schemas import (
    VirtualServerCreate,
    VirtualServerList,
    VirtualServerRead,
    VirtualServerWrite,
)
from gateway.mcp.virtual.service import VirtualServers
from gateway.runtime import GatewayRuntime
from reach_common.auth.caller import Caller

router = APIRouter(
    prefix="/mcp/virtual-servers",
    tags=["mcp"],
    responses={403: {"description": "`insufficient_permission`: a registry admin role is needed."}},
)


def _admin(runtime: GatewayRuntime, caller: Caller) -> VirtualServers:
    runtime.auth.require_registry_admin(caller)
    assert runtime.mcp is not None
    return runtime.mcp.virtual


@router.post(
    "",
    status_code=201,
    response_model=VirtualServerRead,
    responses={409: {"description": "`virtual_server_exists`."}},
)
async def create_virtual_server(
    body: VirtualServerCreate, runtime: RuntimeDep, caller: CallerDep
) -> VirtualServerRead:
    """Create a virtual server: tools by namespace, tag or id (any of them; none: every
    tool), listed as they are or, with `routed`, behind the meta-tools `find_tools`,
    `run` and `call_tool`. MCP clients connect to `/mcp/{name}` and see only the tools
    they may call. Needs a registry admin role; an existing name is 409."""
    return await _admin(runtime, caller).create(body, caller.user_id)


@router.get("", response_model=VirtualServerList)
async def list_virtual_servers(runtime: RuntimeDep, caller: CallerDep) -> VirtualServerList:
    """Every virtual server (registry admins)."""
    return VirtualServerList(servers=await _admin(runtime, caller).list())


@router.get("/{name}", response_model=VirtualServerRead)
async def read_virtual_server(
    name: str, runtime: RuntimeDep, caller: CallerDep
) -> VirtualServerRead:
    """One virtual server (registry admins)."""
    return await _admin(runtime, caller).get(name)


@router.put("/{name}", response_model=VirtualServerRead)
async def replace_virtual_server(
    name: str, body: VirtualServerWrite, runtime: RuntimeDep, caller: CallerDep
) -> VirtualServerRead:
    """Replace what a virtual server offers; its version goes up by one, and clients
    listening for changes are told to list tools again."""
    return await _admin(runtime, caller).replace(name, body)


@router.delete("/{name}", status_code=204)
async def delete_virtual_server(name: str, runtime: RuntimeDep, caller: CallerDep) -> Response:
    """Remove a virtual server; `/mcp/{name}` answers 404 from then on."""
    await _admin(runtime, caller).delete(name)
    return Response(status_code=204)
