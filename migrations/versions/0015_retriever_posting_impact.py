"""Retriever: postings in impact order per term, so a BM25 search reads a bounded prefix.

``ix_posting_impact`` orders each term's postings by term frequency (highest
first), then chunk length (shortest first): the order of a posting's BM25
contribution for that term, up to the length normalisation. A search reads at
most ``bm25_term_postings`` postings per query term from it, as an index-only
scan, instead of every posting of a common term, and then scores its best
candidates exactly through the primary key.

Revision ID: 0015
Revises: 0012
Create Date: 2026-11-30
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_posting_impact ON retriever.posting"
        " (term_hash, term_frequency DESC, chunk_length) INCLUDE (chunk_id)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX retriever.ix_posting_impact")
