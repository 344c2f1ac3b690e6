"""Agent: chat sessions and their messages in schema ``agent``.

Revision ID: 0005
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "session",
        sa.Column("id", sa.String(128), primary_key=True),
        sa.Column("user_id", sa.String(200)),
        sa.Column("title", sa.String(200), nullable=False, server_default=""),
        # Every message takes the next number under a row lock on its session,
        # so concurrent writers can never interleave or reuse a position.
        sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
        # Messages before this position are out of the model's context window;
        # ``summary`` (when a model wrote one) stands in for them.
        sa.Column("context_start_seq", sa.Integer, nullable=False, server_default="1"),
        sa.Column("summary", sa.Text),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        schema="agent",
    )
    op.create_index("ix_session_updated_at", "session", ["updated_at"], schema="agent")
    op.create_index("ix_session_user_id", "session", ["user_id"], schema="agent")

    op.create_table(
        "message",
        sa.Column("id", postgresql.UUID(as_uuid=True), primary_key=True),
        sa.Column(
            "session_id",
            sa.String(128),
            sa.ForeignKey("agent.session.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("seq", sa.Integer, nullable=False),
        # The user message that opened the turn this message belongs to.
        sa.Column("turn_id", postgresql.UUID(as_uuid=True), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False, server_default=""),
        sa.Column("tool_calls", postgresql.JSONB),
        sa.Column("tool_call_id", sa.String(128)),
        sa.Column("tool_name", sa.String(128)),
        sa.Column("is_error", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("client_message_id", sa.String(128)),
        sa.Column("stop_reason", sa.String(32)),
        sa.Column("rounds", sa.Integer),
        sa.Column("token_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("trace_id", sa.String(32)),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.CheckConstraint("role IN ('user', 'assistant', 'tool')", name="ck_message_role"),
        sa.CheckConstraint(
            "(role = 'tool') = (tool_call_id IS NOT NULL)", name="ck_message_tool_result_has_call"
        ),
        sa.UniqueConstraint("session_id", "seq", name="uq_message_session_seq"),
        schema="agent",
    )
    # A retried turn (same client message id) finds its first attempt.
    op.create_index(
        "uq_message_client_message_id",
        "message",
        ["session_id", "client_message_id"],
        unique=True,
        schema="agent",
        postgresql_where=sa.text("client_message_id IS NOT NULL"),
    )
    op.create_index("ix_message_turn_id", "message", ["turn_id"], schema="agent")


def downgrade() -> None:
    op.drop_table("message", schema="agent")  # its indexes go with it
    op.drop_table("session", schema="agent")
