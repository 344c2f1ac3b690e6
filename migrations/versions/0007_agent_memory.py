"""Agent memory: running summaries of folded history, and what users asked to be remembered.

``agent.summary`` keeps every summary written for a session with the range of
messages it covers (the raw messages stay in ``agent.message``); the session's
``summary`` / ``context_start_seq`` still point at the current one.
``agent.memory`` holds facts per user, with an embedding for recall.

Revision ID: 0007
Revises: 0005
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "summary",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column(
            "session_id",
            sa.String(128),
            sa.ForeignKey("agent.session.id", ondelete="CASCADE"),
            nullable=False,
        ),
        # Messages from_seq..to_seq (inclusive) are what this summary stands in for.
        sa.Column("from_seq", sa.Integer, nullable=False),
        sa.Column("to_seq", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.CheckConstraint("from_seq <= to_seq", name="ck_summary_range"),
        sa.CheckConstraint("method IN ('model', 'extractive')", name="ck_summary_method"),
        schema="agent",
    )
    op.create_index("ix_summary_session", "summary", ["session_id", "to_seq"], schema="agent")

    op.create_table(
        "memory",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),  # explicit | preference | identifier
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("embedding", Vector(384), nullable=False),
        sa.Column("source_session_id", sa.String(128)),
        sa.Column("source_message_id", postgresql.UUID(as_uuid=True)),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column(
            "last_used_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.UniqueConstraint("owner", "content_hash", name="uq_memory_owner_hash"),
        schema="agent",
    )
    op.create_index("ix_memory_owner_used", "memory", ["owner", "last_used_at"], schema="agent")


def downgrade() -> None:
    op.drop_table("memory", schema="agent")
    op.drop_table("summary", schema="agent")
