"""Gateway: manifests stored as written, their keys in the author's order.

JSONB keeps an object's keys sorted by length, then bytes, so a manifest read back
listed ``to_date`` before ``from_date`` and ``end_date`` before ``start_date``. The
order of a schema's properties is the author's, and argument filling reads it: the
first date of "from 2026-03-10 to 2026-03-12" goes to the first date parameter. ``json``
stores the text as given. Nothing queries inside these columns, and manifests are
compared in Python, so nothing else changes; a manifest stored before this keeps the
order JSONB gave it until it is registered again (a manifests folder is, at start).

Revision ID: 0016
Revises: 0011
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (("tool", "manifest"), ("tool_history", "manifest"))


def upgrade() -> None:
    for table, column in _COLUMNS:
        op.execute(
            f"ALTER TABLE gateway.{table} ALTER COLUMN {column} TYPE json USING {column}::json"
        )


def downgrade() -> None:
    for table, column in _COLUMNS:
        op.execute(
            f"ALTER TABLE gateway.{table} ALTER COLUMN {column} TYPE jsonb USING {column}::jsonb"
        )
