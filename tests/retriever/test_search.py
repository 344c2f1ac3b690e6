"""POST /retrieve: the three modes, the source filter, branch scores, rewriting offline, errors."""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest

from reach_common.embeddings import Embedder
from retriever.search.service import OFF_LOOP_CHARS
from tests.conftest import assert_error
from tests.security.loop_probe import record_threads

DOCS = {
    "pets/cats.md": "# Cats\n\nCats purr when content and sleep most of the day. "
    "A kitten needs milk and warmth.",
    "pets/dogs.md": "# Dogs\n\nDogs bark at strangers and love long walks. A puppy needs training.",
    "cooking/bread.md": "# Bread\n\nKnead the dough, let it rise for an hour, then bake "
    "the loaf at 220 degrees.",
    "cooking/soup.md": "# Soup\n\nSimmer onions and carrots in stock; season the soup with "
    "salt and pepper.",
    "space/mars.md": "# Mars\n\nMars is the fourth planet; its red colour comes from iron "
    "oxide dust on the surface.",
}


@pytest.fixture
async def corpus(client: httpx.AsyncClient) -> httpx.AsyncClient:
    for source, text in DOCS.items():
        response = await client.post("/ingest", json={"source": source, "text": text})
        assert response.status_code == 201
    return client


async def retrieve(client: httpx.AsyncClient, **body: Any) -> httpx.Response:
    return await client.post("/retrieve", json=body)


@pytest.mark.parametrize("mode", ["hybrid", "vector", "bm25"])
async def test_each_mode_finds_the_obvious_document(corpus: httpx.AsyncClient, mode: str) -> None:
    response = await retrieve(corpus, query="how long should bread dough rise", mode=mode)
    assert response.status_code == 200
    body = response.json()
    assert body["mode"] == mode
    assert body["rewrite"] == "none"
    top = body["chunks"][0]
    assert top["source"] == "cooking/bread.md"
    assert top["heading"] == "Bread"
    assert top["text"].startswith("Knead the dough")
    scores = [c["score"] for c in body["chunks"]]
    assert scores == sorted(scores, reverse=True)


async def test_hybrid_hits_carry_both_branch_scores_and_ranks(corpus: httpx.AsyncClient) -> None:
    body = (await retrieve(corpus, query="red planet iron dust", top_k=3)).json()
    assert len(body["chunks"]) == 3
    top = body["chunks"][0]
    assert top["source"] == "space/mars.md"
    assert top["ranks"] == {"bm25": 1, "vector": 1}
    assert top["scores"]["bm25"] > 0
    assert 0 < top["scores"]["vector"] <= 1
    # RRF with k=20: two first places.
    assert top["score"] == pytest.approx(2 / 21)
    assert top["scores"]["fused"] == top["score"]
    for hit in body["chunks"]:
        assert hit["scores"]["bm25"] is not None
        assert hit["scores"]["vector"] is not None


async def test_single_mode_reports_only_its_branch(corpus: httpx.AsyncClient) -> None:
    [hit] = (await retrieve(corpus, query="puppy training", mode="vector", top_k=1)).json()[
        "chunks"
    ]
    assert hit["source"] == "pets/dogs.md"
    assert hit["scores"]["bm25"] is None
    assert hit["scores"]["fused"] is None
    assert hit["score"] == hit["scores"]["vector"]
    assert hit["ranks"] == {"bm25": None, "vector": 1}


async def test_bm25_mode_returns_only_matching_chunks(corpus: httpx.AsyncClient) -> None:
    body = (await retrieve(corpus, query="kitten", mode="bm25")).json()
    assert [c["source"] for c in body["chunks"]] == ["pets/cats.md"]
    body = (await retrieve(corpus, query="zeppelin", mode="bm25")).json()
    assert body["chunks"] == []


async def test_source_filter_limits_every_mode(corpus: httpx.AsyncClient) -> None:
    for mode in ("hybrid", "vector", "bm25"):
        body = (
            await retrieve(
                corpus,
                query="animals that need care",
                mode=mode,
                sources=["pets/cats.md", "cooking/soup.md"],
            )
        ).json()
        assert {c["source"] for c in body["chunks"]} <= {"pets/cats.md", "cooking/soup.md"}
        assert body["chunks"], mode


async def test_offline_expansion_uses_feedback_from_bm25_hits(corpus: httpx.AsyncClient) -> None:
    await corpus.post(
        "/ingest",
        json={"source": "cooking/rye.md", "text": "Rye loaf: knead the dough well and bake it."},
    )
    body = (await retrieve(corpus, query="bread", rewrite="expansion", mode="bm25")).json()
    assert body["rewrite"] == "expansion"
    rewritten = body["rewritten"]
    assert rewritten["method"] == "pseudo_relevance_feedback"
    assert {"dough", "knead", "loaf"} & set(rewritten["expansion_terms"])
    # The expanded query also finds the rye loaf, which never says "bread".
    assert {"cooking/bread.md", "cooking/rye.md"} <= {c["source"] for c in body["chunks"]}


@pytest.mark.parametrize("rewrite", ["hyde", "multi_query"])
async def test_llm_rewrites_without_an_llm_are_400(corpus: httpx.AsyncClient, rewrite: str) -> None:
    body = assert_error(
        await retrieve(corpus, query="bread", rewrite=rewrite), 400, "llm_unavailable"
    )
    assert body["rewrite"] == rewrite
    assert "ANTHROPIC_API_KEY" in body["message"]
    assert "LLM_BASE_URL" in body["message"]


@pytest.mark.parametrize("query", ["", "   "])
async def test_empty_query_is_422(corpus: httpx.AsyncClient, query: str) -> None:
    assert_error(await retrieve(corpus, query=query), 422, "empty_query")


@pytest.mark.parametrize("mode", ["fuzzy", "", "HYBRID"])
async def test_unknown_mode_is_422(corpus: httpx.AsyncClient, mode: str) -> None:
    body = assert_error(await retrieve(corpus, query="bread", mode=mode), 422, "unknown_mode")
    assert body["allowed"] == ["hybrid", "vector", "bm25"]


async def test_null_mode_and_rewrite_mean_the_defaults(corpus: httpx.AsyncClient) -> None:
    await corpus.post("/ingest", json={"source": "sixth.md", "text": "A sixth document."})
    body = (await retrieve(corpus, query="bread", mode=None, rewrite=None)).json()
    assert (body["mode"], body["rewrite"]) == ("hybrid", "none")
    assert len(body["chunks"]) == 5  # TOP_K_DEFAULT


async def test_unknown_rewrite_is_422(corpus: httpx.AsyncClient) -> None:
    assert_error(await retrieve(corpus, query="bread", rewrite="magic"), 422, "unknown_rewrite")


@pytest.mark.parametrize("top_k", [0, -3, 101])
async def test_top_k_out_of_range_is_422(corpus: httpx.AsyncClient, top_k: int) -> None:
    body = assert_error(
        await retrieve(corpus, query="bread", top_k=top_k), 422, "top_k_out_of_range"
    )
    assert (body["top_k"], body["minimum"], body["maximum"]) == (top_k, 1, 100)


async def test_unknown_source_is_404(corpus: httpx.AsyncClient) -> None:
    response = await retrieve(corpus, query="bread", sources=["cooking/bread.md", "nope.md"])
    body = assert_error(response, 404, "source_not_found")
    assert body["sources"] == ["nope.md"]


async def test_empty_source_list_is_422(corpus: httpx.AsyncClient) -> None:
    assert_error(await retrieve(corpus, query="bread", sources=[]), 422, "invalid_sources")


async def test_overlong_query_is_413(corpus: httpx.AsyncClient) -> None:
    body = assert_error(await retrieve(corpus, query="bread " * 1000), 413, "query_too_long")
    assert body["limit"] == 4000


async def test_search_on_an_empty_index_finds_nothing(client: httpx.AsyncClient) -> None:
    for mode in ("hybrid", "vector", "bm25"):
        response = await retrieve(client, query="anything", mode=mode)
        assert response.status_code == 200
        assert response.json()["chunks"] == []


async def test_a_long_query_is_embedded_off_the_event_loop(
    corpus: httpx.AsyncClient, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short query's model run stays on the loop (cheaper than a thread hop); a long
    one (~0.2 s at the model's 256 tokens) runs in a worker thread, so it never holds
    the loop (tests/security/test_19_long_requests_are_read_off_the_event_loop.py)."""
    threads: list[str] = []
    record_threads(monkeypatch, threads, embedder, "embed")
    loop_thread = threading.current_thread().name
    short = "why do cats purr"
    long = short + "? I would like to know, as the family cat has started to do it often." * 40
    assert len(short) <= OFF_LOOP_CHARS < len(long) <= 4_000
    for query, on_loop in ((short, True), (long, False)):
        threads.clear()
        response = await retrieve(corpus, query=query, mode="vector")
        assert response.status_code == 200, response.text
        assert response.json()["chunks"][0]["source"] == "pets/cats.md"
        assert threads, "the query was not embedded"
        assert (set(threads) == {loop_thread}) is on_loop, threads
