"""Gateway: tool registry, API keys and the invocation audit log in schema ``gateway``.

Revision ID: 0004
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


class _Vector384(sa.types.UserDefinedType[list[float]]):
    """pgvector's ``vector(384)``: the tool's embedding, searchable by similarity in SQL."""

    cache_ok = True

    def get_col_spec(self, **_: object) -> str:
        return "vector(384)"


def upgrade() -> None:
    op.create_table(
        "tool",
        sa.Column("tool_id", sa.String(64), primary_key=True),
        sa.Column("namespace", sa.String(64), nullable=False),
        sa.Column("manifest", postgresql.JSONB, nullable=False),
        # Per-tool optimistic-concurrency counter: PUT with a stale If-Match gets 409.
        sa.Column("version", sa.Integer, nullable=False),
        # The registry-wide revision at this tool's last change.
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("source_path", sa.Text),
        sa.Column("embedding", _Vector384()),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        schema="gateway",
    )
    op.create_index("ix_tool_namespace", "tool", ["namespace"], schema="gateway")

    # One row (id = 1) holding the registry-wide revision; every change bumps it.
    op.create_table(
        "registry_state",
        sa.Column("id", sa.SmallInteger, primary_key=True),
        sa.Column("revision", sa.BigInteger, nullable=False),
        sa.CheckConstraint("id = 1", name="ck_registry_state_single_row"),
        schema="gateway",
    )

    op.create_table(
        "api_key",
        sa.Column("key_id", sa.String(32), primary_key=True),
        # sha256 of the whole key; the key itself is shown once, at creation.
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("user_id", sa.String(200), nullable=False),
        sa.Column("roles", postgresql.ARRAY(sa.Text), nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        schema="gateway",
    )

    op.create_table(
        "invocation",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("trace_id", sa.String(32)),
        sa.Column("tool_id", sa.String(200), nullable=False),
        sa.Column("caller", sa.String(200)),
        sa.Column("auth_via", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(64)),
        sa.Column("http_status", sa.Integer, nullable=False),
        sa.Column("latency_ms", sa.Float, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("task_id", sa.String(64)),
        sa.Column("arguments", postgresql.JSONB, nullable=False, server_default="{}"),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        schema="gateway",
    )
    op.create_index("ix_invocation_trace_id", "invocation", ["trace_id"], schema="gateway")
    op.create_index(
        "ix_invocation_tool_id_created_at",
        "invocation",
        ["tool_id", "created_at"],
        schema="gateway",
    )
    op.create_index("ix_invocation_created_at", "invocation", ["created_at"], schema="gateway")


def downgrade() -> None:
    op.drop_table("invocation", schema="gateway")
    op.drop_table("api_key", schema="gateway")
    op.drop_table("registry_state", schema="gateway")
    op.drop_table("tool", schema="gateway")
