"""Request and response bodies of the shop API."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

SKU_PATTERN = r"^SKU\d{7}$"
ORDER_ID_PATTERN = r"^SO\d{11}$"
MONTH_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])$"

Money = Decimal  # serialised as a string such as "129.00", so no cent is lost


class InventoryRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    sku: str = Field(examples=["SKU2024001"])
    name: str
    available: int = Field(description="Units that can be ordered now.")
    locked: int = Field(description="Units held for orders not yet shipped.")
    total: int = Field(description="available + locked.")


class OrderRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    order_id: str = Field(examples=["SO20240715001"])
    sku: str
    quantity: int
    status: str = Field(description="pending, processing, shipped, delivered or cancelled.")
    tracking: str | None = Field(description="Carrier tracking number once shipped.")
    carrier: str | None
    customer: str
    created_at: datetime


class OrderCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sku: str = Field(pattern=SKU_PATTERN, examples=["SKU2024001"])
    quantity: int = Field(ge=1, le=1000, description="Units to order, 1 to 1000.")
    customer: str = Field(min_length=1, max_length=200, description="Who the order is for.")


class SaleRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    quantity: int
    unit_price: Money
    sold_at: datetime


class SalesRead(BaseModel):
    sku: str
    days: int = Field(description="The window: sales in the last `days` days.")
    total_quantity: int
    total_revenue: Money
    sales: list[SaleRead] = Field(description="Newest first.")


class TopSku(BaseModel):
    sku: str
    name: str
    units: int
    revenue: Money


class MonthlyReport(BaseModel):
    month: str = Field(examples=["2024-07"])
    orders: int = Field(description="Orders placed in the month, whatever their status.")
    units_sold: int
    revenue: Money
    top_skus: list[TopSku] = Field(description="Up to five SKUs, by revenue.")
