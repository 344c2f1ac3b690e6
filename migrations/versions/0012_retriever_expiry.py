"""Retriever: tool outputs stored by handle, owned by one caller, with an expiry.

The gateway stores a tool output that is over its budget here and hands the caller a
``handle``; ``POST /retrieve`` with that handle searches just that output, for its
owner only. These documents live apart from the shared knowledge base (``source`` and
``chunk``): they must never show up in, or shift the BM25 statistics of, everyone's
searches, and a megabyte-sized output is indexed for keywords only (``terms``, a
``tsvector`` with a GIN index) because embedding thousands of chunks would take minutes.
``expires_at`` is checked on every read; a periodic sweep deletes what has expired.

Revision ID: 0012
Revises: 0003
Create Date: 2026-12-10
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0012"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "handle",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("tool_id", sa.String(200)),
        sa.Column("total_bytes", sa.BigInteger, nullable=False),
        sa.Column("chunk_count", sa.Integer, nullable=False),
        sa.Column("total_terms", sa.BigInteger, nullable=False),
        sa.Column("metadata", postgresql.JSONB, nullable=False, server_default="{}"),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        schema="retriever",
    )
    op.create_index("ix_handle_expires_at", "handle", ["expires_at"], schema="retriever")
    op.create_index("ix_handle_owner", "handle", ["owner", "expires_at"], schema="retriever")
    op.create_table(
        "handle_chunk",
        sa.Column(
            "handle_id",
            sa.String(64),
            sa.ForeignKey("retriever.handle.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("ordinal", sa.Integer, primary_key=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("terms", postgresql.TSVECTOR, nullable=False),
        sa.Column("term_count", sa.Integer, nullable=False),
        schema="retriever",
    )
    op.execute("CREATE INDEX ix_handle_chunk_terms ON retriever.handle_chunk USING gin (terms)")


def downgrade() -> None:
    op.drop_table("handle_chunk", schema="retriever")
    op.drop_table("handle", schema="retriever")
