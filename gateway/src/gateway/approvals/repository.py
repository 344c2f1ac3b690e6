"""Every approval query. Each transition is one conditional UPDATE (``WHERE state = …``)
plus its event row, in the caller's transaction: of any number of replicas or clicks
trying the same transition, exactly one gets the row back."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.approvals.models import APPROVED, PENDING, RUNNING, Approval, ApprovalEvent


async def add(session: AsyncSession, approval: Approval, *, actor: str | None) -> Approval:
    session.add(approval)
    session.add(
        ApprovalEvent(
            approval_id=approval.approval_id,
            from_state=None,
            to_state=approval.state,
            actor=actor,
            at=approval.created_at,
        )
    )
    await session.flush()
    return approval


async def get(session: AsyncSession, approval_id: str) -> Approval | None:
    return await session.get(Approval, approval_id, populate_existing=True)


async def transition(
    session: AsyncSession,
    approval_id: str,
    *,
    from_state: str,
    to_state: str,
    actor: str | None,
    at: datetime,
    note: str | None = None,
    where: Sequence[ColumnElement[bool]] = (),
    **values: Any,
) -> Approval | None:
    """Move one request from ``from_state`` to ``to_state`` if it is still there (and
    ``where`` holds); the updated row, or None when another transition won. ``note`` goes
    on the event row; ``values`` are the row's new column values."""
    statement = (
        update(Approval)
        .where(Approval.approval_id == approval_id, Approval.state == from_state, *where)
        .values(state=to_state, **values)
        .returning(Approval)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    row = (await session.scalars(statement)).one_or_none()
    if row is not None:
        session.add(
            ApprovalEvent(
                approval_id=approval_id,
                from_state=from_state,
                to_state=to_state,
                actor=actor,
                comment=note,
                at=at,
            )
        )
        await session.flush()
    return row


async def events(session: AsyncSession, approval_id: str) -> Sequence[ApprovalEvent]:
    query = (
        select(ApprovalEvent)
        .where(ApprovalEvent.approval_id == approval_id)
        .order_by(ApprovalEvent.id)
    )
    return (await session.scalars(query)).all()


async def list_approvals(
    session: AsyncSession,
    *,
    me: str | None,
    approvable_tools: Collection[str] | None,
    state: str | None,
    tool_id: str | None,
    caller: str | None,
    limit: int,
) -> Sequence[Approval]:
    """Newest first. ``approvable_tools=None``: every tool (operators); else the caller's own
    requests plus those for the tools listed."""
    query = select(Approval).order_by(Approval.created_at.desc()).limit(limit)
    if approvable_tools is not None:
        mine = Approval.caller == me if me is not None else Approval.caller.is_(None)
        query = query.where(or_(mine, Approval.tool_id.in_(list(approvable_tools))))
    if state is not None:
        query = query.where(Approval.state == state)
    if tool_id is not None:
        query = query.where(Approval.tool_id == tool_id)
    if caller is not None:
        query = query.where(Approval.caller == caller)
    return (await session.scalars(query)).all()


async def overdue(session: AsyncSession, now: datetime, limit: int = 100) -> Sequence[str]:
    """Pending requests past their expiry."""
    query = (
        select(Approval.approval_id)
        .where(Approval.state == PENDING, Approval.expires_at <= now)
        .limit(limit)
    )
    return (await session.scalars(query)).all()


async def orphaned(
    session: AsyncSession, *, approved_before: datetime, now: datetime, limit: int = 100
) -> Sequence[Approval]:
    """Approved calls nobody started, and running calls whose lease ran out."""
    query = (
        select(Approval)
        .where(
            or_(
                and_(Approval.state == APPROVED, Approval.decided_at <= approved_before),
                and_(Approval.state == RUNNING, Approval.lease_expires_at <= now),
            )
        )
        .limit(limit)
    )
    return (await session.scalars(query)).all()
