"""Gateway: the untrusted-text flags a tool's output raised, on its audit row.

Revision ID: 0014
Revises: 0010
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0014"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "invocation",
        sa.Column("flags", postgresql.ARRAY(sa.Text), nullable=False, server_default="{}"),
        schema="gateway",
    )


def downgrade() -> None:
    op.drop_column("invocation", "flags", schema="gateway")
