"""``/mcp/servers``: the MCP servers whose tools the gateway federates (registry admins)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body
from pydantic import BaseModel

from gateway.api.deps import CallerDep, RuntimeDep
from gateway.mcp.federation.schemas import (
    McpServerAccept,
    McpServerCreate,
    McpServerList,
    McpServerRead,
    SyncRead,
)
from gateway.mcp.federation.service import FederationService
from gateway.runtime import GatewayRuntime
from reach_common.auth.caller import Caller
from reach_common.errors import ServiceUnavailable

router = APIRouter(
    prefix="/mcp/servers",
    tags=["mcp"],
    responses={
        403: {"description": "`insufficient_permission`: a registry admin role is needed."},
        503: {"description": "`unavailable`: MCP federation is not running here."},
    },
)


class McpServerDeleted(BaseModel):
    status: str
    server_id: str
    removed: list[str]


def _federation(runtime: GatewayRuntime, caller: Caller) -> FederationService:
    runtime.auth.require_registry_admin(caller)
    if runtime.federation is None:
        raise ServiceUnavailable("MCP federation is not running in this gateway.")
    return runtime.federation


@router.post("", status_code=201, response_model=McpServerRead)
async def register_mcp_server(
    body: McpServerCreate, runtime: RuntimeDep, caller: CallerDep
) -> McpServerRead:
    """Federate an MCP server: list its tools now and register each as a Reach tool.

    Tool ids follow the prefix policy `<server_id>__<tool name>` (lower case, other
    characters as `_`; a hash suffix when that is too long or taken); the tool's own
    name stays in the manifest. `readOnlyHint` tools are idempotent and may be
    retried; no other tool is. `transport: http` takes a Streamable HTTP `url`, which
    obeys the egress rules of every tool (403 `egress_denied` in strict mode);
    `transport: stdio` names an entry of `MCP_STDIO_COMMANDS` (403
    `mcp_command_not_allowed` otherwise). `auth` names secrets, never values (403
    `secret_not_bound`). A server that cannot be reached or listed is not registered
    (502 `mcp_upstream_error`, saying why). Registry admins only.
    """
    federation = _federation(runtime, caller)
    return await federation.register(body, caller.user_id or "anonymous")


@router.get("", response_model=McpServerList)
async def list_mcp_servers(runtime: RuntimeDep, caller: CallerDep) -> McpServerList:
    """Every federated server with its tools and their state (`active` or `held_back`)."""
    return await _federation(runtime, caller).list_servers()


@router.get("/{server_id}", response_model=McpServerRead)
async def read_mcp_server(server_id: str, runtime: RuntimeDep, caller: CallerDep) -> McpServerRead:
    """One federated server; a held-back tool shows the changed definition to review."""
    return await _federation(runtime, caller).read(server_id)


@router.delete("/{server_id}", response_model=McpServerDeleted)
async def delete_mcp_server(
    server_id: str, runtime: RuntimeDep, caller: CallerDep
) -> McpServerDeleted:
    """Stop federating the server; its tools leave every replica's registry."""
    removed = await _federation(runtime, caller).delete(server_id)
    return McpServerDeleted(status="deleted", server_id=server_id, removed=removed)


@router.post(
    "/{server_id}/sync",
    response_model=SyncRead,
    responses={502: {"description": "`mcp_upstream_error`: the server did not answer well."}},
)
async def sync_mcp_server(server_id: str, runtime: RuntimeDep, caller: CallerDep) -> SyncRead:
    """List the server's tools now (the gateway also does every `MCP_SYNC_INTERVAL_S` and
    when the server says its list changed): new tools are added, vanished ones removed,
    and a tool whose description or input schema changed is held back."""
    report = await _federation(runtime, caller).sync(server_id)
    return SyncRead.model_validate(report, from_attributes=True)


@router.post(
    "/{server_id}/accept",
    response_model=SyncRead,
    responses={409: {"description": "`nothing_to_accept` or `tool_exists`."}},
)
async def accept_mcp_definitions(
    server_id: str,
    runtime: RuntimeDep,
    caller: CallerDep,
    body: Annotated[McpServerAccept | None, Body()] = None,
) -> SyncRead:
    """Accept the changed definitions of held-back tools (`tools`: upstream names; all when
    left out), after reviewing them in `GET /mcp/servers/{server_id}`. They become callable
    again with the new definition. 409 `nothing_to_accept` when none is held back."""
    names = body.tools if body is not None else None
    report = await _federation(runtime, caller).accept(server_id, names)
    return SyncRead.model_validate(report, from_attributes=True)
