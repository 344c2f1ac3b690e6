"""Gateway: federated MCP servers and the definitions of their tools.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _now() -> sa.TextClause:
    return sa.text("now()")


def upgrade() -> None:
    op.create_table(
        "mcp_server",
        sa.Column("server_id", sa.String(20), primary_key=True),
        sa.Column("namespace", sa.String(64), nullable=False),
        sa.Column("transport", sa.String(8), nullable=False),  # http | stdio
        sa.Column("url", sa.Text),
        sa.Column("command", sa.String(64)),  # a MCP_STDIO_COMMANDS entry's name
        # The outbound credential by reference (secret names, never values).
        sa.Column("auth", postgresql.JSONB, nullable=False),
        sa.Column("permission", sa.String(8), nullable=False),
        sa.Column("scope", postgresql.ARRAY(sa.Text), nullable=False),
        sa.Column("timeout_ms", sa.Integer),
        sa.Column("max_retries", sa.Integer, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, server_default=_now()),
        sa.Column("synced_at", sa.DateTime(timezone=True)),
        sa.Column("sync_error", sa.Text),
        schema="gateway",
    )
    op.create_table(
        "mcp_server_tool",
        sa.Column(
            "server_id",
            sa.String(20),
            sa.ForeignKey("gateway.mcp_server.server_id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("name", sa.String(128), primary_key=True),  # the tool's name upstream
        sa.Column("tool_id", sa.String(64), nullable=False, unique=True),
        # What an admin accepted (the first sync accepts): description and input schema.
        sa.Column("accepted_hash", sa.String(71), nullable=False),
        sa.Column("definition", postgresql.JSONB, nullable=False),
        # A changed definition waits here until an admin accepts it.
        sa.Column("pending_hash", sa.String(71)),
        sa.Column("pending_definition", postgresql.JSONB),
        sa.Column("changed_at", sa.DateTime(timezone=True)),
        schema="gateway",
    )


def downgrade() -> None:
    op.drop_table("mcp_server_tool", schema="gateway")
    op.drop_table("mcp_server", schema="gateway")
