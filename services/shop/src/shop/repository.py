"""Every query the shop runs. Functions flush at most; the request session commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from shop.errors import IdempotencyKeyPending
from shop.models import IdempotencyKey, InventoryItem, Sale, SalesOrder

# Keys for pg_advisory_xact_lock: fixed numbers private to the shop.
SEED_LOCK = 7_240_001
ORDER_ID_LOCK = 7_240_002


# --- inventory -----------------------------------------------------------------


async def get_item(session: AsyncSession, sku: str) -> InventoryItem | None:
    return await session.get(InventoryItem, sku)


async def take_stock(session: AsyncSession, sku: str, quantity: int) -> bool:
    """Subtract ``quantity`` from ``available`` if that much is there, atomically."""
    result = await session.execute(
        update(InventoryItem)
        .where(InventoryItem.sku == sku, InventoryItem.available >= quantity)
        .values(available=InventoryItem.available - quantity)
        .returning(InventoryItem.sku)
        .execution_options(synchronize_session=False)
    )
    return result.first() is not None


# --- orders --------------------------------------------------------------------


async def get_order(session: AsyncSession, order_id: str) -> SalesOrder | None:
    return await session.get(SalesOrder, order_id)


async def next_order_id(session: AsyncSession, day: datetime) -> str | None:
    """``SO`` + ``YYYYMMDD`` + a 3-digit sequence; None once the day's 999 are taken.

    Holds a transaction-scoped lock, so concurrent orders get distinct ids.
    """
    await session.execute(select(func.pg_advisory_xact_lock(ORDER_ID_LOCK)))
    prefix = f"SO{day:%Y%m%d}"
    last = await session.scalar(
        select(func.max(SalesOrder.order_id)).where(SalesOrder.order_id.startswith(prefix))
    )
    sequence = int(last[len(prefix) :]) + 1 if last else 1
    return f"{prefix}{sequence:03d}" if sequence <= 999 else None


async def add_order(session: AsyncSession, order: SalesOrder) -> SalesOrder:
    session.add(order)
    await session.flush()
    return order


# --- sales and reports ------------------------------------------------------------


async def recent_sales(session: AsyncSession, sku: str, since: datetime) -> Sequence[Sale]:
    result = await session.scalars(
        select(Sale)
        .where(Sale.sku == sku, Sale.sold_at >= since)
        .order_by(Sale.sold_at.desc(), Sale.id.desc())
    )
    return result.all()


async def count_orders(session: AsyncSession, start: datetime, end: datetime) -> int:
    count = await session.scalar(
        select(func.count())
        .select_from(SalesOrder)
        .where(SalesOrder.created_at >= start, SalesOrder.created_at < end)
    )
    return int(count or 0)


async def sales_by_sku(
    session: AsyncSession, start: datetime, end: datetime
) -> list[tuple[str, str, int, Decimal]]:
    """``(sku, name, units, revenue)`` for sales in ``[start, end)``, highest revenue first."""
    revenue = func.sum(Sale.quantity * Sale.unit_price)
    result = await session.execute(
        select(Sale.sku, InventoryItem.name, func.sum(Sale.quantity), revenue)
        .join(InventoryItem, InventoryItem.sku == Sale.sku)
        .where(Sale.sold_at >= start, Sale.sold_at < end)
        .group_by(Sale.sku, InventoryItem.name)
        .order_by(revenue.desc(), Sale.sku)
    )
    return [(sku, name, int(units), Decimal(rev)) for sku, name, units, rev in result.all()]


# --- idempotency -----------------------------------------------------------------


async def claim_idempotency_key(
    session: AsyncSession, key: str, request_hash: str
) -> IdempotencyKey | None:
    """Claim ``key`` for this transaction, or return the record of whoever holds it.

    Postgres makes a second claimant wait until the first transaction ends: if it
    committed, the second gets its record (and its stored response); if it rolled
    back, the second claims the key itself.
    """
    claimed = await session.execute(
        pg_insert(IdempotencyKey)
        .values(key=key, request_hash=request_hash)
        .on_conflict_do_nothing(index_elements=[IdempotencyKey.key])
        .returning(IdempotencyKey.key)
    )
    if claimed.first() is not None:
        return None
    existing = await session.scalar(select(IdempotencyKey).where(IdempotencyKey.key == key))
    if existing is None:  # the holder's row vanished between the two statements
        raise IdempotencyKeyPending()
    return existing


async def store_idempotent_response(
    session: AsyncSession, key: str, status_code: int, response: dict[str, Any]
) -> None:
    await session.execute(
        update(IdempotencyKey)
        .where(IdempotencyKey.key == key)
        .values(status_code=status_code, response=response)
        .execution_options(synchronize_session=False)
    )


# --- seeding -------------------------------------------------------------------


async def lock_for_seeding(session: AsyncSession) -> None:
    await session.execute(select(func.pg_advisory_xact_lock(SEED_LOCK)))


async def has_inventory(session: AsyncSession) -> bool:
    return await session.scalar(select(select(InventoryItem.sku).exists())) is True


async def insert_seed(
    session: AsyncSession,
    inventory: list[dict[str, Any]],
    orders: list[dict[str, Any]],
    sales: list[dict[str, Any]],
) -> None:
    await session.execute(pg_insert(InventoryItem).values(inventory).on_conflict_do_nothing())
    await session.execute(pg_insert(SalesOrder).values(orders).on_conflict_do_nothing())
    await session.execute(insert(Sale).values(sales))
