"""Retriever: sources, chunks with pgvector embeddings, and a BM25 index in schema ``retriever``.

BM25 lives in plain tables, updated in the same transaction as the chunks:
``posting`` (one row per term per chunk, with the chunk's length so scoring
needs no join), ``term`` (how many chunks hold each term) and ``corpus_stats``
(one row, written by the first ingest: chunk count and total length, for
IDF and the average length).
``retriever.english_bm25`` is the analyser: Postgres' English configuration
(Snowball stemmer, English stopwords) without the whole-compound tokens, so
"well-known" is indexed as "well" and "known" only, as Lucene does.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = ("retriever",)
depends_on: str | Sequence[str] | None = None

DIMENSIONS = 384


def upgrade() -> None:
    op.execute(
        "CREATE TEXT SEARCH CONFIGURATION retriever.english_bm25 (COPY = pg_catalog.english)"
    )
    op.execute(
        "ALTER TEXT SEARCH CONFIGURATION retriever.english_bm25 "
        "DROP MAPPING FOR asciihword, hword, numhword"
    )

    op.create_table(
        "source",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("metadata", postgresql.JSONB, nullable=False, server_default="{}"),
        sa.Column("chunk_count", sa.Integer, nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False),
        sa.Column(
            "created_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), nullable=False, server_default=sa.func.now()
        ),
        schema="retriever",
    )
    op.create_table(
        "chunk",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column(
            "source_id",
            sa.BigInteger,
            sa.ForeignKey("retriever.source.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("heading", sa.Text, nullable=False, server_default=""),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("token_count", sa.Integer, nullable=False),
        sa.Column("term_count", sa.Integer, nullable=False),
        sa.Column("term_hashes", postgresql.ARRAY(sa.BigInteger), nullable=False),
        sa.Column("term_frequencies", postgresql.ARRAY(sa.SmallInteger), nullable=False),
        sa.Column("embedding", Vector(DIMENSIONS), nullable=False),
        sa.UniqueConstraint("source_id", "ordinal", name="uq_chunk_source_ordinal"),
        schema="retriever",
    )
    op.execute(
        "CREATE INDEX ix_chunk_embedding_hnsw ON retriever.chunk "
        "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
    )
    # No foreign key to chunk: the repository deletes a chunk's postings from
    # its term_hashes in the same transaction, and a key would cost an index
    # on chunk_id plus a check per posting row.
    op.execute(
        "CREATE TABLE retriever.posting ("
        " term_hash bigint NOT NULL,"
        " chunk_id bigint NOT NULL,"
        " term_frequency smallint NOT NULL,"
        " chunk_length smallint NOT NULL,"
        " CONSTRAINT pk_posting PRIMARY KEY (term_hash, chunk_id)"
        " INCLUDE (term_frequency, chunk_length))"
    )
    op.create_table(
        "term",
        sa.Column("term_hash", sa.BigInteger, primary_key=True),
        sa.Column("lexeme", sa.Text, nullable=False),
        sa.Column("chunk_frequency", sa.Integer, nullable=False),
        schema="retriever",
    )
    op.create_table(
        "corpus_stats",
        sa.Column("id", sa.SmallInteger, primary_key=True),
        sa.Column("chunk_count", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("total_terms", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("last_ingest_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("id = 1", name="ck_corpus_stats_single_row"),
        schema="retriever",
    )


def downgrade() -> None:
    op.drop_table("corpus_stats", schema="retriever")
    op.drop_table("term", schema="retriever")
    op.execute("DROP TABLE retriever.posting")
    op.drop_table("chunk", schema="retriever")  # its HNSW index goes with it
    op.drop_table("source", schema="retriever")
    op.execute("DROP TEXT SEARCH CONFIGURATION retriever.english_bm25")
