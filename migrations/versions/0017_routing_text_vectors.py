"""Gateway: the routing index's vectors, kept by text, so a restart embeds nothing new.

A gateway builds its routing index from every tool's texts (description, aliases,
examples, names, an English reading): with the ten shipped tools that is about 200
texts and 8 s of CPU at every start, and at 10,000 tools minutes. The vectors are a
pure function of the text and the model, so they are kept here under the model's
identity and the text's SHA-256, and a starting gateway reads them instead of running
the model (``gateway.registry.vectors``). Stored as raw float32 bytes, not pgvector's
type: they are read back whole and never searched in SQL. ``used_at`` is moved by a start that reads a
row (at most daily); rows no start has read for 30 days are deleted.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "text_vector",
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("digest", sa.LargeBinary(), nullable=False),
        sa.Column("embedding", sa.LargeBinary(), nullable=False),  # float32, little-endian
        sa.Column(
            "used_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("model", "digest"),
        schema="gateway",
    )


def downgrade() -> None:
    op.drop_table("text_vector", schema="gateway")
