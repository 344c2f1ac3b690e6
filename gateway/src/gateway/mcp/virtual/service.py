"""Virtual servers: stored in Postgres, read on each request to ``/mcp/{name}`` (one
primary-key lookup), so every replica serves a change at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.mcp.surface import Surface
from gateway.mcp.virtual.errors import VirtualServerExists, VirtualServerNotFound
from gateway.mcp.virtual.models import VirtualServer
from gateway.mcp.virtual.schemas import VirtualServerCreate, VirtualServerRead, VirtualServerWrite


def surface_of(row: VirtualServer) -> Surface:
    return Surface(
        name=row.name,
        namespaces=frozenset(row.namespaces),
        tags=frozenset(row.tags),
        tool_ids=frozenset(row.tool_ids),
        routed=row.routed,
        top_k=row.top_k,
    )


def read_of(row: VirtualServer) -> VirtualServerRead:
    return VirtualServerRead.model_validate(
        {**{c: getattr(row, c) for c in _COLUMNS}, "endpoint": f"/mcp/{row.name}"}
    )


_COLUMNS = (
    "name", "description", "namespaces", "tags", "tool_ids", "routed", "top_k", "version",
    "created_by", "created_at", "updated_at",
)  # fmt: skip


class VirtualServers:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        changed: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._changed = changed

    async def surface(self, name: str) -> Surface:
        async with self._sessionmaker() as session:
            row = await session.get(VirtualServer, name)
        if row is None:
            raise VirtualServerNotFound(name)
        return surface_of(row)

    async def list(self) -> list[VirtualServerRead]:
        async with self._sessionmaker() as session:
            rows = (await session.scalars(select(VirtualServer).order_by(VirtualServer.name))).all()
        return [read_of(row) for row in rows]

    async def get(self, name: str) -> VirtualServerRead:
        async with self._sessionmaker() as session:
            row = await session.get(VirtualServer, name)
        if row is None:
            raise VirtualServerNotFound(name)
        return read_of(row)

    async def create(self, body: VirtualServerCreate, created_by: str | None) -> VirtualServerRead:
        row = VirtualServer(**body.model_dump(), created_by=created_by)
        try:
            async with self._sessionmaker() as session, session.begin():
                session.add(row)
                await session.flush()
                await session.refresh(row)
        except IntegrityError as exc:
            raise VirtualServerExists(body.name) from exc
        await self._notify()
        return read_of(row)

    async def replace(self, name: str, body: VirtualServerWrite) -> VirtualServerRead:
        values: dict[str, Any] = body.model_dump()
        async with self._sessionmaker() as session, session.begin():
            row = await session.scalar(
                update(VirtualServer)
                .where(VirtualServer.name == name)
                .values(**values, version=VirtualServer.version + 1, updated_at=func.now())
                .returning(VirtualServer)
            )
            if row is None:
                raise VirtualServerNotFound(name)
            result = read_of(row)
        await self._notify()
        return result

    async def delete(self, name: str) -> None:
        async with self._sessionmaker() as session, session.begin():
            deleted = await session.scalar(
                delete(VirtualServer)
                .where(VirtualServer.name == name)
                .returning(VirtualServer.name)
            )
        if deleted is None:
            raise VirtualServerNotFound(name)
        await self._notify()

    async def _notify(self) -> None:
        if self._changed is not None:
            await self._changed()
