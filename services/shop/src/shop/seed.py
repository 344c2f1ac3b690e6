"""Demo data, written on first start.

Inventory and orders are fixed. Recent sales are placed relative to the start
time (so "the last 30 days" always has data) with fixed quantities and prices;
the July 2024 sales match the seeded orders, so that month's report is stable.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from shop import repository

# sku, name, available, locked, unit price
PRODUCTS: list[tuple[str, str, int, int, Decimal]] = [
    ("SKU2024001", "Wireless Mouse", 156, 12, Decimal("129.00")),
    ("SKU2024002", "Mechanical Keyboard", 48, 5, Decimal("459.00")),
    ("SKU2024003", "USB-C Hub", 230, 0, Decimal("199.00")),
    ("SKU2024004", "27-inch Monitor", 3, 2, Decimal("1899.00")),
    ("SKU2024005", "Laptop Stand", 0, 0, Decimal("239.00")),
    ("SKU2024006", "Noise-Cancelling Headphones", 75, 8, Decimal("1299.00")),
]
PRICES = {sku: price for sku, _, _, _, price in PRODUCTS}

# order_id, sku, quantity, status, tracking, carrier, customer, created_at (UTC)
ORDERS: list[tuple[str, str, int, str, str | None, str | None, str, datetime]] = [
    ("SO20240715001", "SKU2024001", 2, "shipped", "SF1234567890", "SF Express", "Li Na",
     datetime(2024, 7, 15, 9, 30, tzinfo=UTC)),
    ("SO20240715002", "SKU2024002", 1, "processing", None, None, "Carlos Diaz",
     datetime(2024, 7, 15, 14, 5, tzinfo=UTC)),
    ("SO20240716001", "SKU2024003", 3, "delivered", "YT9876543210", "YTO Express",
     "Amelia Brown", datetime(2024, 7, 16, 10, 12, tzinfo=UTC)),
    ("SO20240718001", "SKU2024006", 1, "cancelled", None, None, "Kenji Sato",
     datetime(2024, 7, 18, 16, 45, tzinfo=UTC)),
    ("SO20240720001", "SKU2024001", 5, "pending", None, None, "Fatima Khan",
     datetime(2024, 7, 20, 8, 0, tzinfo=UTC)),
]  # fmt: skip

# sku -> (days ago, quantity); entries older than 30 days test the window
RECENT_SALES: dict[str, list[tuple[int, int]]] = {
    "SKU2024001": [(1, 3), (2, 5), (3, 2), (5, 4), (7, 6), (9, 1), (12, 3), (16, 2),
                   (20, 5), (26, 4), (40, 7), (55, 2)],
    "SKU2024002": [(2, 1), (8, 2), (15, 1), (33, 3)],
    "SKU2024003": [(1, 4), (4, 6), (10, 2), (21, 8)],
    "SKU2024004": [(6, 1), (18, 1)],
    "SKU2024006": [(3, 2), (11, 1), (24, 3), (45, 1)],
}  # fmt: skip


def inventory_rows() -> list[dict[str, Any]]:
    return [
        {"sku": sku, "name": name, "available": available, "locked": locked}
        for sku, name, available, locked, _ in PRODUCTS
    ]


def order_rows() -> list[dict[str, Any]]:
    keys = ("order_id", "sku", "quantity", "status", "tracking", "carrier", "customer")
    return [dict(zip(keys, row[:7], strict=True), created_at=row[7]) for row in ORDERS]


def sale_rows(now: datetime) -> list[dict[str, Any]]:
    """Sales of the seeded July 2024 orders (not cancelled) and recent ones before ``now``."""
    rows = [
        {"sku": sku, "quantity": qty, "unit_price": PRICES[sku], "sold_at": created}
        for _, sku, qty, status, _, _, _, created in ORDERS
        if status != "cancelled"
    ]
    base = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    for sku, sales in RECENT_SALES.items():
        rows.extend(
            {"sku": sku, "quantity": qty, "unit_price": PRICES[sku],
             "sold_at": base - timedelta(days=days_ago)}
            for days_ago, qty in sales
        )  # fmt: skip
    return rows


async def seed_if_empty(sessionmaker: async_sessionmaker[AsyncSession]) -> bool:
    """Write the demo data unless the shop already has inventory. True if it did."""
    async with sessionmaker() as session, session.begin():
        # Processes starting together take turns; the second sees the first's rows.
        await repository.lock_for_seeding(session)
        if await repository.has_inventory(session):
            return False
        await repository.insert_seed(
            session, inventory_rows(), order_rows(), sale_rows(datetime.now(UTC))
        )
        return True
