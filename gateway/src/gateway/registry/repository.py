"""Every registry query. Functions flush at most; callers own the transaction."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TypeVar

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.registry.models import RegistryState, Tool

# Key for pg_advisory_xact_lock: one registry writer at a time across replicas, so
# revisions are gap-free and concurrent discovery on two replicas cannot race.
REGISTRY_LOCK = 7_240_401
_IN_CHUNK = 5_000
T = TypeVar("T")


async def lock_registry(session: AsyncSession) -> None:
    await session.execute(select(func.pg_advisory_xact_lock(REGISTRY_LOCK)))


async def bump_revision(session: AsyncSession) -> int:
    """Increment the registry-wide revision and return the new value."""
    statement = (
        pg_insert(RegistryState)
        .values(id=1, revision=1)
        .on_conflict_do_update(
            index_elements=[RegistryState.id], set_={"revision": RegistryState.revision + 1}
        )
        .returning(RegistryState.revision)
    )
    revision = await session.scalar(statement)
    assert revision is not None
    return int(revision)


async def current_revision(session: AsyncSession) -> int:
    revision = await session.scalar(select(RegistryState.revision).where(RegistryState.id == 1))
    return int(revision or 0)


async def get_tool(session: AsyncSession, tool_id: str) -> Tool | None:
    return await session.get(Tool, tool_id)


async def all_tools(session: AsyncSession) -> Sequence[Tool]:
    return (await session.scalars(select(Tool).order_by(Tool.tool_id))).all()


async def tools_from_file(session: AsyncSession, source_path: str) -> Sequence[Tool]:
    statement = select(Tool).where(Tool.source == "file", Tool.source_path == source_path)
    return (await session.scalars(statement)).all()


async def file_tools(session: AsyncSession) -> Sequence[Tool]:
    return (await session.scalars(select(Tool).where(Tool.source == "file"))).all()


async def add_tool(session: AsyncSession, tool: Tool) -> Tool:
    session.add(tool)
    await session.flush()
    return tool


async def delete_tool(session: AsyncSession, tool_id: str) -> None:
    await session.execute(delete(Tool).where(Tool.tool_id == tool_id))


async def tool_versions(session: AsyncSession) -> Sequence[tuple[str, int, int]]:
    """``(tool_id, version, revision)`` of every tool: what a replica compares to catch up."""
    statement = select(Tool.tool_id, Tool.version, Tool.revision)
    return [(str(t), int(v), int(r)) for t, v, r in (await session.execute(statement)).all()]


def in_chunks(items: Collection[T], size: int = _IN_CHUNK) -> list[list[T]]:
    """``items`` in lists of at most ``size``: an IN list (or a row of an INSERT) is one
    bind parameter per value, and Postgres takes at most 32,767 per statement."""
    values = list(items)
    return [values[i : i + size] for i in range(0, len(values), size)]


async def tools_by_id(session: AsyncSession, tool_ids: Collection[str]) -> list[Tool]:
    rows: list[Tool] = []
    for chunk in in_chunks(tool_ids):
        rows.extend((await session.scalars(select(Tool).where(Tool.tool_id.in_(chunk)))).all())
    return rows


async def existing_versions(session: AsyncSession, tool_ids: Collection[str]) -> dict[str, int]:
    """tool_id → version of those of ``tool_ids`` that are registered."""
    found: dict[str, int] = {}
    for chunk in in_chunks(tool_ids):
        statement = select(Tool.tool_id, Tool.version).where(Tool.tool_id.in_(chunk))
        found.update({str(t): int(v) for t, v in (await session.execute(statement)).all()})
    return found


async def add_tools(session: AsyncSession, tools: Sequence[Tool]) -> None:
    """Insert many tools with one flush (a batch of thousands in one round of statements)."""
    session.add_all(tools)
    await session.flush()
