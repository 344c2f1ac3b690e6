"""Pinned definitions: every definition a tool has had, hashed, with who changed it.

Each registry write (register, update, import, rollback, file sync, delete)
adds one ``tool_history`` row in the same transaction as the change, so the
history and the registry never disagree. A row holds the manifest exactly as
registered (it names secrets, never holds one: the manifest model has no field
that could), the registry revision, the caller who made the change, and the
untrusted-text flags its description raised.

:func:`definition_hash` is the pin: the sha256 of the canonical JSON of what a
model and the executor see of a tool (``tool_id``, ``name``, ``description``,
``aliases``, ``examples``, ``input_schema``, ``output_schema``, ``endpoint``).
Two versions with the same hash behave the same for a model; a client that
pinned a hash can tell when a definition changed under it. Policy fields
(timeouts, limits, permission) change no hash but still make a new version.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Identity, Integer, String, Text, func, select
from sqlalchemy.dialects.postgresql import ARRAY, JSON
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from gateway.db import Base

DEFINITION_FIELDS = (
    "tool_id",
    "name",
    "description",
    "aliases",
    "examples",
    "input_schema",
    "output_schema",
    "endpoint",
)


class ToolHistory(Base):
    __tablename__ = "tool_history"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    tool_id: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    revision: Mapped[int] = mapped_column(BigInteger)
    action: Mapped[str] = mapped_column(String(32))
    definition_hash: Mapped[str | None] = mapped_column(String(64))
    manifest: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # as written (0016)
    flags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default="{}")
    actor: Mapped[str | None] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(16))
    restored_from: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


def definition(manifest: dict[str, Any]) -> dict[str, Any]:
    """The part of a manifest that :func:`definition_hash` covers."""
    return {name: manifest.get(name) for name in DEFINITION_FIELDS}


def definition_hash(manifest: dict[str, Any]) -> str:
    """sha256 (hex) of the canonical JSON of the manifest's definition fields."""
    canonical = json.dumps(
        definition(manifest), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


async def record(session: AsyncSession, row: ToolHistory) -> None:
    """Add one history row (from :func:`entry`); the caller's transaction commits it with
    the change."""
    session.add(row)
    await session.flush()


def entry(
    *,
    tool_id: str,
    version: int,
    revision: int,
    action: str,
    manifest: dict[str, Any] | None,
    source: str,
    actor: str | None = None,
    flags: Sequence[str] = (),
    restored_from: int | None = None,
) -> ToolHistory:
    """One history row, not yet added: a batch adds thousands with one flush."""
    return ToolHistory(
        tool_id=tool_id,
        version=version,
        revision=revision,
        action=action,
        definition_hash=definition_hash(manifest) if manifest is not None else None,
        manifest=manifest,
        flags=list(flags),
        actor=actor[:200] if actor else None,
        source=source,
        restored_from=restored_from,
    )


async def entries(session: AsyncSession, tool_id: str, limit: int) -> Sequence[ToolHistory]:
    """The tool's history, newest first."""
    statement = (
        select(ToolHistory)
        .where(ToolHistory.tool_id == tool_id)
        .order_by(ToolHistory.id.desc())
        .limit(limit)
    )
    return (await session.scalars(statement)).all()


async def definition_at(session: AsyncSession, tool_id: str, version: int) -> ToolHistory | None:
    """The newest row that gave ``tool_id`` version ``version`` (versions restart at 1 when a
    deleted tool is registered again: the latest life wins)."""
    statement = (
        select(ToolHistory)
        .where(
            ToolHistory.tool_id == tool_id,
            ToolHistory.version == version,
            ToolHistory.manifest.is_not(None),
        )
        .order_by(ToolHistory.id.desc())
        .limit(1)
    )
    return (await session.scalars(statement)).first()
