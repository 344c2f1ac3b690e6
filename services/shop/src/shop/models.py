"""Tables in schema ``shop`` (created by migration 0002)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    MetaData,
    Numeric,
    String,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

SKU_LENGTH = 10  # SKU + 7 digits
ORDER_ID_LENGTH = 13  # SO + 11 digits


class Base(DeclarativeBase):
    # Every shop table lives in schema ``shop``; set once here instead of in
    # each ``__table_args__``.
    metadata = MetaData(schema="shop")


class InventoryItem(Base):
    __tablename__ = "inventory_item"

    sku: Mapped[str] = mapped_column(String(SKU_LENGTH), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    available: Mapped[int]
    locked: Mapped[int]


class SalesOrder(Base):
    __tablename__ = "sales_order"
    __table_args__ = (
        Index("ix_sales_order_sku", "sku"),
        Index("ix_sales_order_created_at", "created_at"),
    )

    order_id: Mapped[str] = mapped_column(String(ORDER_ID_LENGTH), primary_key=True)
    sku: Mapped[str] = mapped_column(String(SKU_LENGTH), ForeignKey("shop.inventory_item.sku"))
    quantity: Mapped[int]
    status: Mapped[str] = mapped_column(String(20))
    tracking: Mapped[str | None] = mapped_column(String(40))
    carrier: Mapped[str | None] = mapped_column(String(60))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    customer: Mapped[str] = mapped_column(String(200))


class Sale(Base):
    __tablename__ = "sale"
    __table_args__ = (
        Index("ix_sale_sku_sold_at", "sku", "sold_at"),
        Index("ix_sale_sold_at", "sold_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    sku: Mapped[str] = mapped_column(String(SKU_LENGTH), ForeignKey("shop.inventory_item.sku"))
    quantity: Mapped[int]
    unit_price: Mapped[Decimal] = mapped_column(Numeric(10, 2))
    sold_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class IdempotencyKey(Base):
    __tablename__ = "idempotency_key"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    response: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    status_code: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
