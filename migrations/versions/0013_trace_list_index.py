"""Telemetry: a partial index of root spans by start, for ``GET /traces`` (newest first).

Without it a page of traces walks every span of the store by start time and
throws away the non-roots (about 20 of 21 rows for an agent turn); with it the
page reads only the roots it shows. Built concurrently, so a live span store
keeps taking writes while the index is built.

Revision ID: 0013
Revises: 0001
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.get_context().autocommit_block():
        op.create_index(
            "ix_spans_root_start",
            "spans",
            [sa.text("start_time DESC"), sa.text("trace_id DESC")],
            schema="telemetry",
            postgresql_where=sa.text("parent_span_id IS NULL"),
            postgresql_concurrently=True,
            if_not_exists=True,
        )


def downgrade() -> None:
    with op.get_context().autocommit_block():
        op.drop_index(
            "ix_spans_root_start",
            table_name="spans",
            schema="telemetry",
            postgresql_concurrently=True,
            if_exists=True,
        )
