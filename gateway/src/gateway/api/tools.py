"""``/tools``: register, list, read, edit and delete tools."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Path, Query, Response

from gateway.api.deps import CallerDep, ClientAddressDep, RuntimeDep
from gateway.auth.service import can_use, rate_key
from gateway.registry.errors import ToolNotFound
from gateway.registry.schemas import ToolChanged, ToolList, ToolRead, ToolSummary
from gateway.runtime import GatewayRuntime
from reach_common.auth.caller import Caller
from reach_common.errors import BadRequest, Unprocessable

router = APIRouter(prefix="/tools", tags=["registry"])

MAX_QUERY_CHARS = 2000  # a ranked listing's request, as long as a find_tools task
RANKED = 20  # tools in a ranked listing by default
MAX_RANKED = 100

Manifest = Annotated[
    dict[str, Any],
    Body(
        description="A tool manifest (see manifests/schema.json).",
        examples=[
            {
                "tool_id": "inventory_query",
                "name": "Inventory lookup",
                "description": "Current stock of ONE SKU. Not for batch queries.",
                "input_schema": {
                    "type": "object",
                    "properties": {"sku": {"type": "string", "pattern": "^SKU\\d{7}$"}},
                    "required": ["sku"],
                },
                "endpoint": {
                    "type": "http",
                    "method": "GET",
                    "url": "http://shop:9000/api/inventory/{sku}",
                    "auth": {"type": "none"},
                },
                "permission": "public",
            }
        ],
    ),
]
IfMatch = Annotated[
    str | None,
    Header(description="The version you read (from GET /tools/{id}); a stale one gets 409."),
]


def _expected_version(if_match: str | None) -> int | None:
    if if_match is None:
        return None
    text = if_match.strip().removeprefix("W/").strip('"')
    # ASCII digits only, and few enough to fit the version column ("²" is a str.isdigit()).
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise BadRequest(
            'If-Match must be the tool\'s version number, e.g. If-Match: "3".',
            reason="invalid_if_match",
        )
    return int(text)


@router.post(
    "/register",
    status_code=201,
    response_model=ToolChanged,
    response_model_exclude_none=True,
    responses={
        403: {"description": "`insufficient_permission`: a registry admin role is needed."},
        409: {"description": "`tool_exists`."},
    },
)
async def register_tool(manifest: Manifest, runtime: RuntimeDep, caller: CallerDep) -> ToolChanged:
    """Register a new tool from its manifest.

    The manifest is checked against `manifests/schema.json` (422 `invalid_manifest`
    listing every problem), its description is embedded for routing, and every
    gateway replica sees it within a second. The caller needs a registry admin
    role (`REGISTRY_ADMIN_ROLES`; in permissive mode a claimed role counts, sent as
    `X-User-Id` / `X-User-Roles`). In strict auth mode the manifest must declare
    `permission` (422 `permission_required`) and may only point at public
    addresses or `EGRESS_ALLOWLIST` (403 `egress_denied`). A secret named in
    `endpoint.auth.key` must be bound to the URL's host (403 `secret_not_bound`).
    An existing `tool_id` is a 409 `tool_exists`.
    """
    runtime.auth.require_registry_admin(caller)
    change = await runtime.registry_service.register(manifest, actor=caller.user_id)
    return ToolChanged(status="registered", **change.__dict__)


def _list_etag(revision: int, caller: Caller, namespace: str | None) -> str:
    """What a listing depends on: the registry revision, and (hashed) what decides the
    caller's view in ``can_use`` (identity, roles) and the namespace asked for."""
    view = json.dumps([caller.user_id, sorted(caller.roles), namespace])
    return f'"{revision}-{hashlib.sha256(view.encode()).hexdigest()[:16]}"'


@router.get(
    "/list",
    response_model=ToolList,
    responses={304: {"description": "`If-None-Match` named the current `ETag`: no change."}},
)
async def list_tools(
    runtime: RuntimeDep,
    caller: CallerDep,
    client_address: ClientAddressDep,
    response: Response,
    namespace: Annotated[str | None, Query(description="Only tools in this namespace.")] = None,
    if_none_match: Annotated[
        str | None, Header(description="The `ETag` of a listing you hold: 304 if unchanged.")
    ] = None,
    q: Annotated[
        str | None,
        Query(
            max_length=MAX_QUERY_CHARS,
            description=(
                "Rank by relevance to this request, best first: the router's coarse stage "
                "(dense + BM25) over the tools the caller may use. Only tools with some "
                "evidence are listed. A ranked listing has no `ETag`."
            ),
        ),
    ] = None,
    limit: Annotated[
        int | None,
        Query(ge=1, le=MAX_RANKED, description=f"With `q`: most tools listed ({RANKED})."),
    ] = None,
) -> ToolList | Response:
    """The tools the caller may use, with their argument schemas.

    Filtered by the same decision that invoking applies, so nothing listed is
    refused and nothing refused is listed. In permissive mode a GET carries the
    user context as `X-User-Id` and `X-User-Roles` (comma-separated) headers.

    The `ETag` names the registry revision and the caller's view; send it back as
    `If-None-Match` and an unchanged listing is a bodiless 304 (the caller is still
    authenticated first, so a revoked key gets its 401, never a 304).

    With `q`, the listing is a shortlist for one request: a client whose model
    cannot be sent the whole catalogue (the agent, past its tools' token share)
    offers these instead.
    """
    if q is not None:
        await runtime.run.admit(caller, client_address)  # ranking embeds q: ROUTE_RATE_LIMIT
        owner = rate_key(caller, client_address)
        return await _ranked(runtime, caller, owner, namespace, q, limit or RANKED)
    if limit is not None:
        problem = "caps a ranked listing: give the request to rank by as `q` too"
        raise Unprocessable(
            f"The request is invalid. query.limit: {problem}.",
            errors=[{"field": "query.limit", "problem": problem}],
        )
    registry = runtime.registry
    etag = _list_etag(registry.revision, caller, namespace)
    if if_none_match is not None and etag in (t.strip() for t in if_none_match.split(",")):
        return Response(status_code=304, headers={"ETag": etag})
    response.headers["ETag"] = etag
    tools = [
        ToolSummary.of(tool)
        for tool in registry.tools.values()
        if (namespace is None or tool.spec.namespace == namespace)
        and can_use(caller, tool.spec).allowed
    ]
    tools.sort(key=lambda t: (t.namespace, t.tool_id))
    return ToolList(revision=registry.revision, tools=tools)


async def _ranked(
    runtime: GatewayRuntime,
    caller: Caller,
    owner: str,
    namespace: str | None,
    q: str,
    limit: int,
) -> ToolList:
    """The caller's tools ranked for ``q``: permission is decided before ranking, so
    nothing the caller may not use is ever ranked."""
    registry = runtime.registry
    allowed = runtime.router.visible(caller, [namespace] if namespace is not None else None)
    ranked = allowed and q.strip()
    candidates = await runtime.router.rank(q, allowed, limit, owner=owner) if ranked else []
    tools = [ToolSummary.of(tool) for c in candidates if (tool := registry.get(c.tool_id))]
    return ToolList(revision=registry.revision, tools=tools)


@router.get("/{tool_id}", response_model=ToolRead)
async def read_tool(
    tool_id: Annotated[str, Path(max_length=200)],
    runtime: RuntimeDep,
    caller: CallerDep,
    response: Response,
) -> ToolRead:
    """One tool: what a caller needs to use it, its version (also the `ETag`) and where
    it came from. Registry admins also get `manifest`, exactly as registered (endpoint
    URLs and secret names are an operator's business, not a caller's). A tool the
    caller may not use is a 404, as if it did not exist."""
    tool = runtime.registry.get(tool_id)
    admin = runtime.auth.is_registry_admin(caller)
    if tool is None or not (admin or can_use(caller, tool.spec).allowed):
        raise ToolNotFound(tool_id)
    response.headers["ETag"] = f'"{tool.version}"'
    return ToolRead.of(tool, with_manifest=admin)


@router.put(
    "/{tool_id}",
    response_model=ToolChanged,
    response_model_exclude_none=True,
    responses={
        403: {"description": "`insufficient_permission`: a registry admin role is needed."},
        409: {"description": "`stale_revision`: `If-Match` names an older revision."},
    },
)
async def update_tool(
    tool_id: Annotated[str, Path(max_length=200)],
    manifest: Manifest,
    runtime: RuntimeDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> ToolChanged:
    """Replace a tool's manifest; its version goes up by one.

    Send `If-Match: "<version>"` with the version you read: if someone changed the
    tool since, the answer is 409 `stale_revision` and nothing is written.
    """
    runtime.auth.require_registry_admin(caller)
    change = await runtime.registry_service.update(
        tool_id, manifest, _expected_version(if_match), actor=caller.user_id
    )
    return ToolChanged(status="updated", **change.__dict__)


@router.delete(
    "/{tool_id}",
    response_model=ToolChanged,
    response_model_exclude_none=True,
    responses={
        403: {"description": "`insufficient_permission`: a registry admin role is needed."},
        409: {"description": "`stale_revision`: `If-Match` names an older revision."},
    },
)
async def delete_tool(
    tool_id: Annotated[str, Path(max_length=200)],
    runtime: RuntimeDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> ToolChanged:
    """Remove a tool from every replica. `If-Match` guards against deleting a newer edit."""
    runtime.auth.require_registry_admin(caller)
    change = await runtime.registry_service.delete(
        tool_id, _expected_version(if_match), actor=caller.user_id
    )
    return ToolChanged(status="deleted", **change.__dict__)
