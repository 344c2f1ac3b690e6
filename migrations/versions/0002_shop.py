"""Shop: inventory, orders, sales and idempotency keys in schema ``shop``.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inventory_item",
        sa.Column("sku", sa.String(10), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("available", sa.Integer, nullable=False),
        sa.Column("locked", sa.Integer, nullable=False),
        schema="shop",
    )
    op.create_table(
        "sales_order",
        sa.Column("order_id", sa.String(13), primary_key=True),
        sa.Column("sku", sa.String(10), sa.ForeignKey("shop.inventory_item.sku"), nullable=False),
        sa.Column("quantity", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("tracking", sa.String(40)),
        sa.Column("carrier", sa.String(60)),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column("customer", sa.String(200), nullable=False),
        schema="shop",
    )
    op.create_index("ix_sales_order_sku", "sales_order", ["sku"], schema="shop")
    op.create_index("ix_sales_order_created_at", "sales_order", ["created_at"], schema="shop")
    op.create_table(
        "sale",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("sku", sa.String(10), sa.ForeignKey("shop.inventory_item.sku"), nullable=False),
        sa.Column("quantity", sa.Integer, nullable=False),
        sa.Column("unit_price", sa.Numeric(10, 2), nullable=False),
        sa.Column("sold_at", sa.DateTime(timezone=True), nullable=False),
        schema="shop",
    )
    op.create_index("ix_sale_sku_sold_at", "sale", ["sku", "sold_at"], schema="shop")
    op.create_index("ix_sale_sold_at", "sale", ["sold_at"], schema="shop")
    op.create_table(
        "idempotency_key",
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("response", postgresql.JSONB),
        sa.Column("status_code", sa.Integer),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        schema="shop",
    )


def downgrade() -> None:
    op.drop_table("idempotency_key", schema="shop")
    op.drop_table("sale", schema="shop")  # its indexes go with it
    op.drop_table("sales_order", schema="shop")
    op.drop_table("inventory_item", schema="shop")
