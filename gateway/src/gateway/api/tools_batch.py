"""``POST /tools:batch``: register many tools in one transaction and one revision."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.api.deps import CallerDep, RuntimeDep
from gateway.registry.schemas import ToolBatch, ToolChanged, ToolsRegistered

router = APIRouter(tags=["registry"])


@router.post(
    "/tools:batch",
    status_code=201,
    response_model=ToolsRegistered,
    response_model_exclude_none=True,
    responses={
        403: {"description": "`insufficient_permission`: a registry admin role is needed."},
        409: {"description": "`batch_refused`: only `tool_exists` problems."},
    },
)
async def register_tools(
    body: ToolBatch, runtime: RuntimeDep, caller: CallerDep
) -> ToolsRegistered:
    """Register new tools from a list of manifests: all of them, or none.

    One transaction and one registry revision for the whole batch (up to
    `REGISTRY_BATCH_MAX` manifests; more is a 422 `batch_too_large`), which every
    gateway replica sees within a second. Each manifest is checked as by
    `POST /tools/register`. If any cannot be registered, nothing is, and the answer
    lists every problem under `errors`, each with the manifest's `index` in the
    list, its `tool_id`, `reason` and `message`: a 422 `batch_refused` (an invalid
    manifest, or a `tool_id` the batch repeats), or a 409 `batch_refused` when the
    only problem is that some tools are registered already (`tool_exists`).
    Registry admins only.
    """
    runtime.auth.require_registry_admin(caller)
    changes = await runtime.registry_service.register_many(
        body.tools, actor=caller.user_id, action="registered"
    )
    return ToolsRegistered(
        revision=changes[0].revision,
        tools=[ToolChanged(status="registered", **change.__dict__) for change in changes],
    )
