"""BM25 computed in Postgres equals BM25 computed by hand, before and after changes."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from reach_common.embeddings import Embedder
from retriever.app import create_app
from retriever.settings import Settings
from tests.retriever.conftest import WRITER_HEADERS, assert_index_consistent

Sql = Callable[..., list[tuple[Any, ...]]]
K1, B = 1.2, 0.75

# Words the English analyser keeps, one lexeme each; "the" and "and" are stopwords.
CORPUS = {
    "d1": "apple banana apple",
    "d2": "banana cherry and the cherry tree",
    "d3": "cherry cherry cherry grape",
    "d4": "grape melon",
}
LEXEME = {
    "apple": "appl",
    "banana": "banana",
    "cherry": "cherri",
    "tree": "tree",
    "grape": "grape",
    "melon": "melon",
}


def analysed(text: str) -> Counter[str]:
    return Counter(LEXEME[w] for w in text.split() if w in LEXEME)


def hand_bm25(corpus: dict[str, str], query: str) -> dict[str, float]:
    """Textbook BM25 (Lucene's IDF), written out independently of the SQL."""
    docs = {name: analysed(text) for name, text in corpus.items()}
    n = len(docs)
    avgdl = sum(sum(d.values()) for d in docs.values()) / n
    scores: dict[str, float] = {}
    for name, tf in docs.items():
        dl = sum(tf.values())
        score = 0.0
        for term, qtf in analysed(query).items():
            df = sum(1 for d in docs.values() if term in d)
            if tf[term] == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += qtf * idf * tf[term] * (K1 + 1) / (tf[term] + K1 * (1 - B + B * dl / avgdl))
        if score > 0:
            scores[name] = score
    return scores


@pytest.fixture
async def client(
    service_env: dict[str, Any], embedder: Embedder, make_client: Any
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(**service_env, llm_provider="offline", bm25_k1=K1, bm25_b=B)
    async with make_client(create_app(settings, embedder=embedder)) as client:
        client.headers.update(WRITER_HEADERS)
        yield client


async def bm25(client: httpx.AsyncClient, query: str) -> dict[str, float]:
    response = await client.post("/retrieve", json={"query": query, "mode": "bm25", "top_k": 10})
    assert response.status_code == 200, response.text
    hits = response.json()["chunks"]
    assert [h["scores"]["bm25"] for h in hits] == [h["score"] for h in hits]
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    return {h["source"]: h["score"] for h in hits}


def assert_scores(actual: dict[str, float], expected: dict[str, float]) -> None:
    assert set(actual) == set(expected)
    for name, score in expected.items():
        assert actual[name] == pytest.approx(score, rel=1e-9), name


@pytest.mark.parametrize(
    "query", ["cherry", "apple cherry", "cherry cherry grape", "melon tree banana"]
)
async def test_scores_match_hand_computed_bm25(
    client: httpx.AsyncClient, sql: Sql, query: str
) -> None:
    for name, text in CORPUS.items():
        assert (
            await client.post("/ingest", json={"source": name, "text": text})
        ).status_code == 201
    assert sql("SELECT lexeme, chunk_frequency FROM retriever.term ORDER BY lexeme") == [
        ("appl", 1),
        ("banana", 2),
        ("cherri", 2),
        ("grape", 2),
        ("melon", 1),
        ("tree", 1),
    ]
    assert sql("SELECT chunk_count, total_terms FROM retriever.corpus_stats") == [(4, 13)]
    assert_scores(await bm25(client, query), hand_bm25(CORPUS, query))


async def test_statistics_follow_replace_and_delete(client: httpx.AsyncClient, sql: Sql) -> None:
    corpus = dict(CORPUS)
    for name, text in corpus.items():
        await client.post("/ingest", json={"source": name, "text": text})

    corpus["d2"] = "melon melon banana"
    response = await client.post("/ingest", json={"source": "d2", "text": corpus["d2"]})
    assert response.json()["status"] == "replaced"
    assert_scores(
        await bm25(client, "cherry melon banana"), hand_bm25(corpus, "cherry melon banana")
    )
    assert sql("SELECT lexeme FROM retriever.term WHERE lexeme = 'tree'") == []  # no chunk left
    assert_index_consistent(sql)

    response = await client.delete("/sources/d3")
    assert response.status_code == 200
    del corpus["d3"]
    assert_scores(await bm25(client, "cherry melon grape"), hand_bm25(corpus, "cherry melon grape"))
    assert sql("SELECT chunk_count, total_terms FROM retriever.corpus_stats") == [(3, 8)]
    assert_index_consistent(sql)
