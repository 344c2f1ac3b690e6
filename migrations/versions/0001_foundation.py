"""Foundation: one schema per service, pgvector, and the span store.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMAS = ("gateway", "agent", "retriever", "telemetry", "shop")


def upgrade() -> None:
    for schema in SCHEMAS:
        op.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")

    op.create_table(
        "spans",
        sa.Column("trace_id", sa.String(32), primary_key=True),
        sa.Column("span_id", sa.String(16), primary_key=True),
        sa.Column("parent_span_id", sa.String(16)),
        sa.Column("service", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("start_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("end_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_ms", sa.Float, nullable=False),
        sa.Column("status_code", sa.Text, nullable=False),
        sa.Column("status_message", sa.Text),
        sa.Column("attributes", postgresql.JSONB, nullable=False, server_default="{}"),
        sa.Column("events", postgresql.JSONB, nullable=False, server_default="[]"),
        schema="telemetry",
    )
    # Retention jobs delete by age; the primary key already serves lookups by trace.
    op.create_index("ix_spans_start_time", "spans", ["start_time"], schema="telemetry")


def downgrade() -> None:
    op.drop_table("spans", schema="telemetry")
    # The extension outlives the schemas only if something else uses it.
    op.execute("DROP EXTENSION IF EXISTS vector")
    for schema in reversed(SCHEMAS):
        op.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
