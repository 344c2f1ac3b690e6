"""``/tools/{id}/history`` and ``/tools/{id}/rollback``: pinned definitions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from gateway.api.deps import CallerDep, RuntimeDep, SessionDep
from gateway.api.tools import IfMatch, _expected_version
from gateway.auth.service import can_use
from gateway.registry import history
from gateway.registry.errors import ToolNotFound

router = APIRouter(prefix="/tools", tags=["registry"])


class HistoryEntry(BaseModel):
    version: int
    revision: int = Field(description="The registry revision of this change.")
    action: str = Field(examples=["registered", "updated", "imported", "rolled_back", "deleted"])
    definition_hash: str | None = Field(
        description="sha256 of the definition (name, description, aliases, examples, schemas, "
        "endpoint); null for a deletion."
    )
    flags: list[str] = Field(description="Untrusted-text flags its description raised.")
    created_at: datetime
    restored_from: int | None = Field(None, description="For a rollback: the version restored.")
    actor: str | None = Field(None, description="Who made the change (registry admins only).")
    manifest: dict[str, Any] | None = Field(
        None, description="The manifest of this version (registry admins only)."
    )


class ToolHistoryRead(BaseModel):
    tool_id: str
    current_version: int | None
    current_hash: str | None
    versions: list[HistoryEntry] = Field(description="Newest first.")


class RollbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = Field(ge=1, le=2**31 - 1, description="The version whose definition to restore.")


class RolledBack(BaseModel):
    status: Literal["rolled_back"] = "rolled_back"
    tool_id: str
    version: int = Field(description="The new version (a copy of the restored one).")
    revision: int
    restored_from: int
    definition_hash: str
    flags: list[str]


@router.get("/{tool_id}/history", response_model=ToolHistoryRead)
async def tool_history(
    tool_id: Annotated[str, Path(max_length=200)],
    runtime: RuntimeDep,
    caller: CallerDep,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=500, description="Most versions listed.")] = 50,
) -> ToolHistoryRead:
    """Every definition the tool has had, newest first, each with its content hash.

    A caller who may use the tool sees versions, hashes, actions and times, enough to
    pin a definition and notice a change; registry admins also see each version's
    manifest and who made it. A tool the caller may not use is a 404.
    """
    tool = runtime.registry.get(tool_id)
    admin = runtime.auth.is_registry_admin(caller)
    if not admin and (tool is None or not can_use(caller, tool.spec).allowed):
        raise ToolNotFound(tool_id)
    rows = await history.entries(session, tool_id, limit)
    if not rows and tool is None:
        raise ToolNotFound(tool_id)
    return ToolHistoryRead(
        tool_id=tool_id,
        current_version=tool.version if tool else None,
        current_hash=history.definition_hash(tool.spec.manifest) if tool else None,
        versions=[
            HistoryEntry(
                version=row.version,
                revision=row.revision,
                action=row.action,
                definition_hash=row.definition_hash,
                flags=list(row.flags or []),
                created_at=row.created_at,
                restored_from=row.restored_from,
                actor=row.actor if admin else None,
                manifest=row.manifest if admin else None,
            )
            for row in rows
        ],
    )


@router.post(
    "/{tool_id}/rollback",
    response_model=RolledBack,
    responses={
        403: {"description": "`insufficient_permission`: a registry admin role is needed."},
        409: {"description": "`stale_revision`."},
    },
)
async def rollback_tool(
    tool_id: Annotated[str, Path(max_length=200)],
    body: RollbackRequest,
    runtime: RuntimeDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> RolledBack:
    """Restore the definition the tool had at `version`, as a new version (history is
    never rewritten). Registry admins only. The old manifest is checked again as a new
    registration would be (this gateway's mode, egress and secret rules). `If-Match`
    with the current version guards against a concurrent edit (409 `stale_revision`);
    an unknown version is a 404 `version_not_found`."""
    runtime.auth.require_registry_admin(caller)
    if runtime.registry.get(tool_id) is None:
        raise ToolNotFound(tool_id)
    change = await runtime.registry_service.rollback(
        tool_id, body.version, actor=caller.user_id, expected_version=_expected_version(if_match)
    )
    restored = runtime.registry.get(tool_id)
    assert restored is not None
    return RolledBack(
        tool_id=tool_id,
        version=change.version,
        revision=change.revision,
        restored_from=body.version,
        definition_hash=history.definition_hash(restored.spec.manifest),
        flags=list(change.flags),
    )
