"""Gateway: MCP virtual servers, and the transport of each audited call.

Revision ID: 0010
Revises: 0008
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "mcp_virtual_server",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("description", sa.Text, nullable=False, server_default=""),
        # A tool belongs when it is in one of the namespaces, has one of the tags or is
        # listed by id; all three empty: the whole registry.
        sa.Column("namespaces", postgresql.ARRAY(sa.Text), nullable=False, server_default="{}"),
        sa.Column("tags", postgresql.ARRAY(sa.Text), nullable=False, server_default="{}"),
        sa.Column("tool_ids", postgresql.ARRAY(sa.Text), nullable=False, server_default="{}"),
        # Routed: serves find_tools / run / call_tool over those tools instead of listing them.
        sa.Column("routed", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("top_k", sa.Integer, nullable=False, server_default="5"),
        sa.Column("version", sa.Integer, nullable=False, server_default="1"),
        sa.Column("created_by", sa.String(200)),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            nullable=False,
            server_default=sa.text("now()"),
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            nullable=False,
            server_default=sa.text("now()"),
        ),
        schema="gateway",
    )
    # How an audited call came in: http (REST) or mcp.
    op.add_column(
        "invocation",
        sa.Column("transport", sa.String(16), nullable=False, server_default="http"),
        schema="gateway",
    )


def downgrade() -> None:
    op.drop_column("invocation", "transport", schema="gateway")
    op.drop_table("mcp_virtual_server", schema="gateway")
