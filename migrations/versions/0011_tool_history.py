"""Gateway: every definition a tool has had, with its content hash (pinned definitions).

Revision ID: 0011
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tool_history",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        # No foreign key: the history outlives a deleted tool.
        sa.Column("tool_id", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("revision", sa.BigInteger, nullable=False),
        # registered | updated | deleted | imported | rolled_back | file_created | ...
        sa.Column("action", sa.String(32), nullable=False),
        # sha256 of the definition (see gateway.registry.history); null for a deletion.
        sa.Column("definition_hash", sa.String(64)),
        # The manifest as registered: it names secrets, never holds them.
        sa.Column("manifest", postgresql.JSONB),
        sa.Column("flags", postgresql.ARRAY(sa.Text), nullable=False, server_default="{}"),
        sa.Column("actor", sa.String(200)),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("restored_from", sa.Integer),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            nullable=False,
            server_default=sa.text("now()"),
        ),
        schema="gateway",
    )
    op.create_index(
        "ix_tool_history_tool_id_id", "tool_history", ["tool_id", "id"], schema="gateway"
    )


def downgrade() -> None:
    op.drop_index("ix_tool_history_tool_id_id", table_name="tool_history", schema="gateway")
    op.drop_table("tool_history", schema="gateway")
