"""Fixtures for the retriever: one embedder for the session, an app client per test.

Ingest and delete need a writer role in every auth mode; the test apps run in permissive
mode, so their clients claim one with ``WRITER_HEADERS``. The auth rules themselves are
tested in ``tests/security/test_07_retriever_needs_a_caller.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import psycopg
import pytest

from reach_common.db import libpq_url
from reach_common.embeddings import Embedder
from retriever.app import create_app
from retriever.settings import Settings

# A claimed identity (permissive mode) allowed to ingest and delete.
WRITER_HEADERS = {"X-User-Id": "retriever-tests", "X-User-Roles": "retriever_writer"}


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """Loading the model takes a second; every app in the session shares this one."""
    return Embedder()


@pytest.fixture
def retriever_settings(service_env: dict[str, Any]) -> Settings:
    return Settings(**service_env, llm_provider="offline")


@pytest.fixture
async def client(
    retriever_settings: Settings, embedder: Embedder, make_client: Any
) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(create_app(retriever_settings, embedder=embedder)) as client:
        client.headers.update(WRITER_HEADERS)
        yield client


@pytest.fixture
def sql(service_env: dict[str, Any]) -> Callable[..., list[tuple[Any, ...]]]:
    """``sql("SELECT ...", params)``: rows from the test database, outside the app."""

    def run(query: str, params: Any = None) -> list[tuple[Any, ...]]:
        with psycopg.connect(libpq_url(service_env["database_url"])) as conn:
            return conn.execute(query, params).fetchall()

    return run


def assert_index_consistent(sql: Callable[..., list[tuple[Any, ...]]]) -> None:
    """The BM25 tables agree with the chunks: counts, lengths and per-term chunk counts."""
    [(stats_chunks, stats_terms)] = sql(
        "SELECT coalesce(max(chunk_count), 0), coalesce(max(total_terms), 0)"
        " FROM retriever.corpus_stats"
    )
    [(chunks, terms, postings)] = sql(
        "SELECT count(*), coalesce(sum(term_count), 0),"
        " coalesce(sum(cardinality(term_hashes)), 0) FROM retriever.chunk"
    )
    assert (stats_chunks, stats_terms) == (chunks, terms)
    assert sql("SELECT count(*) FROM retriever.posting") == [(postings,)]
    mismatched = sql(
        "SELECT coalesce(t.term_hash, p.term_hash), t.chunk_frequency, p.n FROM retriever.term t"
        " FULL JOIN (SELECT term_hash, count(*) AS n FROM retriever.posting GROUP BY 1) p"
        " ON p.term_hash = t.term_hash"
        " WHERE t.chunk_frequency IS DISTINCT FROM p.n"
    )
    assert mismatched == []
    stale = sql(
        "SELECT count(*) FROM retriever.posting p"
        " LEFT JOIN retriever.chunk c ON c.id = p.chunk_id"
        " WHERE c.id IS NULL OR p.chunk_length <> c.term_count"
    )
    assert stale == [(0,)]
