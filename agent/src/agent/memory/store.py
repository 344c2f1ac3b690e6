"""Every query on ``agent.memory``. Each is scoped to one owner; callers commit."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent.memory.models import Memory

Vector = npt.NDArray[np.float32]


def content_hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.casefold().split()).encode()).hexdigest()


@dataclass(frozen=True)
class NewMemory:
    text: str
    kind: str
    embedding: Vector
    source_session_id: str | None
    source_message_id: uuid.UUID | None
    id: uuid.UUID = field(default_factory=uuid.uuid4)


async def has_any(db: AsyncSession, owner: str) -> bool:
    return bool(await db.scalar(select(select(Memory.id).where(Memory.owner == owner).exists())))


async def known_hashes(db: AsyncSession, owner: str, hashes: Sequence[str]) -> set[str]:
    result = await db.scalars(
        select(Memory.content_hash).where(Memory.owner == owner, Memory.content_hash.in_(hashes))
    )
    return set(result.all())


async def save(
    db: AsyncSession, owner: str, memories: Sequence[NewMemory], *, touch: Sequence[str] = ()
) -> None:
    """Insert ``memories`` (one the owner already has is only marked used again) and mark
    the memories of the ``touch`` content hashes used: one statement."""
    rows = [
        {
            "id": memory.id,
            "owner": owner,
            "text": memory.text,
            "kind": memory.kind,
            "content_hash": content_hash(memory.text),
            "embedding": memory.embedding,
            "source_session_id": memory.source_session_id,
            "source_message_id": memory.source_message_id,
        }
        for memory in memories
    ]
    # A row is changed once per statement: what is inserted (or re-marked) is not touched.
    inserted = {row["content_hash"] for row in rows}
    touch = sorted(set(touch) - inserted)
    if not rows:
        await _touch(db, owner, touch)
        return
    statement = pg_insert(Memory).values(rows)
    if touch:
        touched = (
            update(Memory)
            .where(Memory.owner == owner, Memory.content_hash.in_(touch))
            .values(last_used_at=func.now())
            .returning(Memory.id)
            .cte("touched")
        )
        statement = statement.add_cte(touched)
    await db.execute(
        statement.on_conflict_do_update(
            constraint="uq_memory_owner_hash", set_={"last_used_at": func.now()}
        )
    )


async def _touch(db: AsyncSession, owner: str, hashes: Sequence[str]) -> None:
    if hashes:
        await db.execute(
            update(Memory)
            .where(Memory.owner == owner, Memory.content_hash.in_(hashes))
            .values(last_used_at=func.now())
        )


@dataclass(frozen=True)
class Near:
    id: uuid.UUID
    text: str


async def nearest(
    db: AsyncSession, owner: str, vector: Vector, limit: int
) -> list[tuple[Near, float, float]]:
    """The owner's memories nearest ``vector``: ``(memory, cosine similarity, age in days)``.
    Only id and text come back: reading the stored vectors would cost more than the search."""
    distance = Memory.embedding.cosine_distance(vector)
    age = func.extract("epoch", func.now() - Memory.last_used_at) / 86400.0
    result = await db.execute(
        select(Memory.id, Memory.text, distance, age)
        .where(Memory.owner == owner)
        .order_by(distance)
        .limit(limit)
    )
    return [(Near(i, t), 1.0 - float(d), float(a)) for i, t, d, a in result.all()]


async def list_for(
    db: AsyncSession, owner: str, *, limit: int, offset: int
) -> tuple[Sequence[Memory], int]:
    total = await db.scalar(select(func.count()).where(Memory.owner == owner)) or 0
    result = await db.scalars(
        select(Memory)
        .where(Memory.owner == owner)
        .order_by(Memory.last_used_at.desc(), Memory.id)
        .limit(limit)
        .offset(offset)
    )
    return result.all(), int(total)


async def get(db: AsyncSession, owner: str, memory_id: uuid.UUID) -> Memory | None:
    return await db.scalar(select(Memory).where(Memory.owner == owner, Memory.id == memory_id))


async def remove(db: AsyncSession, owner: str, memory_id: uuid.UUID | None = None) -> int:
    """Delete one of the owner's memories, or (no id) all of them; how many went."""
    query = delete(Memory).where(Memory.owner == owner)
    if memory_id is not None:
        query = query.where(Memory.id == memory_id)
    result = await db.execute(query.returning(Memory.id))
    return len(result.all())
