"""Bounded BM25 candidates: at most ``bm25_term_postings`` postings per query term, exact scores.

A term's postings are read best first (highest term frequency, then shortest chunk);
the candidates found that way are then scored over every query term, so a hit's
score is its full BM25 score even where a truncated term list did not hold it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from reach_common.embeddings import Embedder
from retriever.app import create_app
from retriever.settings import Settings
from tests.retriever.conftest import WRITER_HEADERS
from tests.retriever.test_bm25 import K1, B, hand_bm25

# "cherry" is in every document, most often in d1; "melon" only in d2.
CORPUS = {
    "d1": "cherry cherry cherry grape",
    "d2": "cherry melon",
    "d3": "cherry tree",
    "d4": "cherry banana apple",
}


def app_client(
    service_env: dict[str, Any], embedder: Embedder, make_client: Any, term_postings: int
) -> Any:
    settings = Settings(
        **service_env,
        llm_provider="offline",
        bm25_k1=K1,
        bm25_b=B,
        bm25_term_postings=term_postings,
    )
    return make_client(create_app(settings, embedder=embedder))


@pytest.fixture
async def bounded(
    service_env: dict[str, Any], embedder: Embedder, make_client: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """A corpus searched with one posting per term."""
    async with app_client(service_env, embedder, make_client, 1) as client:
        client.headers.update(WRITER_HEADERS)
        for name, text in CORPUS.items():
            response = await client.post("/ingest", json={"source": name, "text": text})
            assert response.status_code == 201
        yield client


async def bm25(client: httpx.AsyncClient, query: str, **body: Any) -> dict[str, float]:
    response = await client.post(
        "/retrieve", json={"query": query, "mode": "bm25", "top_k": 10, **body}
    )
    assert response.status_code == 200, response.text
    return {h["source"]: h["score"] for h in response.json()["chunks"]}


def assert_exact(actual: dict[str, float], names: set[str], query: str) -> None:
    expected = hand_bm25(CORPUS, query)
    assert set(actual) == names
    for name in names:
        assert actual[name] == pytest.approx(expected[name], rel=1e-9), name


async def test_a_common_term_contributes_its_best_postings_only(
    bounded: httpx.AsyncClient,
) -> None:
    assert_exact(await bm25(bounded, "cherry"), {"d1"}, "cherry")


async def test_candidates_are_scored_over_every_query_term(bounded: httpx.AsyncClient) -> None:
    # d2 comes from "melon"'s list, not from "cherry"'s (one posting: d1's), yet its
    # score holds its "cherry" share too.
    assert_exact(await bm25(bounded, "cherry melon"), {"d1", "d2"}, "cherry melon")


async def test_a_source_filter_reads_every_posting(bounded: httpx.AsyncClient) -> None:
    # d3 is not in "cherry"'s first posting, but it is the only source searched.
    assert_exact(await bm25(bounded, "cherry", sources=["d3"]), {"d3"}, "cherry")


async def test_zero_reads_every_posting(
    service_env: dict[str, Any], embedder: Embedder, make_client: Any
) -> None:
    async with app_client(service_env, embedder, make_client, 0) as client:
        client.headers.update(WRITER_HEADERS)
        for name, text in CORPUS.items():
            await client.post("/ingest", json={"source": name, "text": text})
        assert_exact(await bm25(client, "cherry"), set(CORPUS), "cherry")
