"""Auth: API keys move to schema ``auth``, read by every service's auth kit.

Revision ID: 0006
Revises: 0004
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE SCHEMA IF NOT EXISTS auth")
    op.execute("ALTER TABLE gateway.api_key SET SCHEMA auth")


def downgrade() -> None:
    op.execute("ALTER TABLE auth.api_key SET SCHEMA gateway")
    op.execute("DROP SCHEMA IF EXISTS auth")
