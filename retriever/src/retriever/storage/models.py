"""Tables in schema ``retriever`` (created by migration 0003).

``source`` and ``chunk`` hold the documents; ``posting``, ``term`` and
``corpus_stats`` are the BM25 index, kept in step with ``chunk`` by
:mod:`retriever.storage.repository` inside the same transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import BigInteger, DateTime, ForeignKey, Identity, MetaData, SmallInteger, func
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from reach_common.embeddings import DIMENSIONS

# The BM25 analyser: Postgres' English configuration (Snowball stemmer, English
# stopwords) without whole-compound tokens; defined by migration 0003.
TEXT_SEARCH_CONFIG = "retriever.english_bm25"


class Base(DeclarativeBase):
    metadata = MetaData(schema="retriever")


class Source(Base):
    __tablename__ = "source"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    name: Mapped[str] = mapped_column(unique=True)
    content_hash: Mapped[str]
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSONB)
    chunk_count: Mapped[int]
    token_count: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Chunk(Base):
    __tablename__ = "chunk"

    id: Mapped[int] = mapped_column(BigInteger, Identity(), primary_key=True)
    source_id: Mapped[int] = mapped_column(ForeignKey("retriever.source.id", ondelete="CASCADE"))
    ordinal: Mapped[int]
    heading: Mapped[str]
    text: Mapped[str]
    token_count: Mapped[int]
    term_count: Mapped[int]
    term_hashes: Mapped[list[int]] = mapped_column(ARRAY(BigInteger))
    term_frequencies: Mapped[list[int]] = mapped_column(ARRAY(SmallInteger))
    embedding: Mapped[Any] = mapped_column(Vector(DIMENSIONS))


class Term(Base):
    __tablename__ = "term"

    term_hash: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    lexeme: Mapped[str]
    chunk_frequency: Mapped[int]


class CorpusStats(Base):
    __tablename__ = "corpus_stats"

    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    chunk_count: Mapped[int] = mapped_column(BigInteger)
    total_terms: Mapped[int] = mapped_column(BigInteger)
    last_ingest_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
