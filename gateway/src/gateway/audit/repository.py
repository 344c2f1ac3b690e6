"""Reading the invocation audit log (the writer batches rows in ``writer.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.audit.models import Invocation


async def list_invocations(
    session: AsyncSession,
    *,
    caller: str | None,
    tool_id: str | None,
    before_id: int | None,
    limit: int,
) -> Sequence[Invocation]:
    """Newest first. ``caller=None`` means every caller's rows (operators)."""
    query = select(Invocation).order_by(Invocation.id.desc()).limit(limit)
    if caller is not None:
        query = query.where(Invocation.caller == caller)
    if tool_id is not None:
        query = query.where(Invocation.tool_id == tool_id)
    if before_id is not None:
        query = query.where(Invocation.id < before_id)
    return (await session.scalars(query)).all()
