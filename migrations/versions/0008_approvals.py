"""Gateway: approval requests, their transitions, and the callback delivery log.

Revision ID: 0008
Revises: 0006
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _now() -> sa.TextClause:
    return sa.text("now()")


def upgrade() -> None:
    op.create_table(
        "approval",
        sa.Column("approval_id", sa.String(32), primary_key=True),
        sa.Column("tool_id", sa.String(64), nullable=False),
        # Kept intact for the execution; arguments_shown is the redacted copy people see.
        sa.Column("arguments", postgresql.JSONB, nullable=False),
        sa.Column("arguments_shown", postgresql.JSONB, nullable=False),
        sa.Column("arguments_hash", sa.String(64), nullable=False),
        sa.Column("manifest_revision", sa.BigInteger, nullable=False),
        sa.Column("idempotent", sa.Boolean, nullable=False),
        sa.Column("caller", sa.String(200), nullable=False),
        sa.Column("caller_roles", postgresql.ARRAY(sa.Text), nullable=False),
        sa.Column("caller_via", sa.String(16), nullable=False),
        sa.Column("trace_id", sa.String(32)),
        sa.Column("traceparent", sa.String(64)),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("callback_url", sa.Text),
        sa.Column("replaces", sa.String(32)),
        # pending → approved → running → succeeded | failed; pending → denied | expired
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(200)),
        sa.Column("decided_at", sa.DateTime(timezone=True)),
        sa.Column("comment", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        # A running call past this instant was orphaned by a replica that died.
        sa.Column("lease_expires_at", sa.DateTime(timezone=True)),
        sa.Column("result", postgresql.JSONB),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=_now()),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        schema="gateway",
    )
    op.create_index(
        "ix_approval_state_expires_at", "approval", ["state", "expires_at"], schema="gateway"
    )
    op.create_index(
        "ix_approval_caller_created_at", "approval", ["caller", "created_at"], schema="gateway"
    )
    op.create_index(
        "ix_approval_tool_id_created_at", "approval", ["tool_id", "created_at"], schema="gateway"
    )

    op.create_table(
        "approval_event",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column(
            "approval_id",
            sa.String(32),
            sa.ForeignKey("gateway.approval.approval_id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("from_state", sa.String(16)),
        sa.Column("to_state", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(200)),
        sa.Column("comment", sa.Text),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False, server_default=_now()),
        schema="gateway",
    )
    op.create_index(
        "ix_approval_event_approval_id", "approval_event", ["approval_id", "id"], schema="gateway"
    )

    op.create_table(
        "callback_delivery",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("delivery_id", sa.String(32), nullable=False),
        sa.Column("task_id", sa.String(64)),
        sa.Column("approval_id", sa.String(32)),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("status_code", sa.Integer),
        sa.Column("error", sa.Text),
        sa.Column("delivered", sa.Boolean, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False, server_default=_now()),
        schema="gateway",
    )
    op.create_index(
        "ix_callback_delivery_task_id", "callback_delivery", ["task_id"], schema="gateway"
    )
    op.create_index(
        "ix_callback_delivery_approval_id", "callback_delivery", ["approval_id"], schema="gateway"
    )

    op.add_column("invocation", sa.Column("approval_id", sa.String(32)), schema="gateway")
    # Who made an approval transition (the caller column stays the one who asked).
    op.add_column("invocation", sa.Column("actor", sa.String(200)), schema="gateway")


def downgrade() -> None:
    op.drop_column("invocation", "actor", schema="gateway")
    op.drop_column("invocation", "approval_id", schema="gateway")
    op.drop_table("callback_delivery", schema="gateway")
    op.drop_table("approval_event", schema="gateway")
    op.drop_table("approval", schema="gateway")
