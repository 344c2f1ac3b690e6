"""``GET /memories``, ``GET /memories/{id}``, ``DELETE /memories/{id}``, ``DELETE /memories``.

A caller sees and removes only what is remembered about *them*: another user's
memory reads exactly like a missing one (404 ``memory_not_found``), and no role
widens that (memories are personal; admins clear a user's by deleting their
sessions' data in the database, not through the API). A caller without a user
id has no memories: 401 ``unauthenticated``. A deleted memory is never recalled
again. Reading and deleting first wait for the owner's learning still under way in
this process (:meth:`MemoryService.settled`): every turn answered before the request
has registered its learning by then, so nothing it learns is missed by a list or
written back after a delete. The endpoints work with ``MEMORY_ENABLED=false`` too, so what was kept
before can still be read and removed.
"""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Query

from agent.deps import AgentCallerDep, MemoryDep, SettingsDep
from agent.memory import store
from agent.memory.schemas import MemoriesDeleted, MemoryList, MemoryRead
from agent.sessions.errors import MemoryNotFound
from reach_common.auth.caller import Caller
from reach_common.auth.errors import Unauthenticated
from reach_common.db import SessionDep

router = APIRouter(prefix="/memories", tags=["memories"])

MemoryId = Annotated[uuid.UUID, Path(description="The memory's id.")]
_ERRORS: dict[int | str, dict[str, str]] = {
    401: {"description": "`unauthenticated`: no credential (strict) or no user id."},
}


def _owner(caller: Caller) -> str:
    if caller.user_id is None:
        raise Unauthenticated(
            "Memories belong to a user: send a credential (or, in permissive mode, "
            "X-User-Id) to see yours."
        )
    return caller.user_id


@router.get("", response_model=MemoryList, responses=_ERRORS)
async def list_memories(
    db: SessionDep,
    caller: AgentCallerDep,
    settings: SettingsDep,
    memory: MemoryDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> MemoryList:
    """What the agent remembers about the caller, most recently used first (including
    what their last turn taught it: learning still under way is waited for)."""
    owner = _owner(caller)
    if memory is not None:
        await memory.settled(owner)
    memories, total = await store.list_for(db, owner, limit=limit, offset=offset)
    return MemoryList(
        memories=[MemoryRead.model_validate(m) for m in memories],
        total=total,
        limit=limit,
        offset=offset,
        enabled=settings.memory_enabled,
    )


@router.get(
    "/{memory_id}",
    response_model=MemoryRead,
    responses={**_ERRORS, 404: {"description": "`memory_not_found`."}},
)
async def get_memory(memory_id: MemoryId, db: SessionDep, caller: AgentCallerDep) -> MemoryRead:
    """One of the caller's memories."""
    memory = await store.get(db, _owner(caller), memory_id)
    if memory is None:
        raise MemoryNotFound(str(memory_id))
    return MemoryRead.model_validate(memory)


@router.delete(
    "/{memory_id}",
    response_model=MemoriesDeleted,
    responses={**_ERRORS, 404: {"description": "`memory_not_found`."}},
)
async def delete_memory(
    memory_id: MemoryId, db: SessionDep, caller: AgentCallerDep, memory: MemoryDep
) -> MemoriesDeleted:
    """Forget one of the caller's memories; it is never recalled again (learning still
    under way is waited for first, so a turn answered before cannot write it back)."""
    owner = _owner(caller)
    if memory is not None:
        await memory.settled(owner)
    if not await store.remove(db, owner, memory_id):
        raise MemoryNotFound(str(memory_id))
    return MemoriesDeleted(deleted=1)


@router.delete("", response_model=MemoriesDeleted, responses=_ERRORS)
async def delete_memories(
    db: SessionDep, caller: AgentCallerDep, memory: MemoryDep
) -> MemoriesDeleted:
    """Forget everything remembered about the caller, including what their turns answered
    so far are still learning (waited for first, then deleted with the rest)."""
    owner = _owner(caller)
    if memory is not None:
        await memory.settled(owner)
    deleted = await store.remove(db, owner)
    return MemoriesDeleted(deleted=deleted)
