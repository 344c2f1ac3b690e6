"""The routing index follows registry changes in place: after any sequence of adds,
edits and removals it ranks exactly as an index built afresh from the final tools."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gateway.routing.index import Glossed, ToolIndex
from gateway.routing.lexical import BM25Index
from reach_common.embeddings import Embedder, VectorCache
from tests.gateway.conftest import shipped

REPO = Path(__file__).resolve().parents[3]
SHIPPED = ["inventory_query", "order_query", "sales_query", "order_create", "rag_retrieve"]
QUERIES = [
    "SKU2024001 还有多少库存",
    "where is my parcel SO20240715001",
    "how did this SKU sell last month",
    "search the knowledge base for the refund policy",
    "place an order for two mice",
]


def ranking(index: ToolIndex, embedder: Embedder, query: str) -> list[tuple[str, float]]:
    vector = embedder.embed_one(query)
    return [(c.tool_id, round(c.score, 4)) for c in index.search(query, vector, k=5)]


def test_an_index_updated_in_place_ranks_as_one_built_afresh(embedder: Embedder) -> None:
    vectors = VectorCache(embedder)
    manifests = {tool_id: shipped(tool_id) for tool_id in SHIPPED}
    index = ToolIndex(list(manifests.values()), vectors, revision=1)

    edited = {**manifests["sales_query"], "description": "Sales of one SKU over N days."}
    index.apply(index.prepare([edited]), ["inventory_query"], revision=2)
    index.apply(index.prepare([shipped("inventory_query")]), ["order_query"], revision=3)
    index.apply(index.prepare([]), ["rag_retrieve"], revision=4)
    index.apply(index.prepare([shipped("order_query")]), [], revision=5)

    final = [
        edited,
        shipped("order_create"),
        shipped("inventory_query"),
        shipped("order_query"),
    ]
    fresh = ToolIndex(final, vectors, revision=5)
    assert index.revision == 5
    assert sorted(index.tool_ids) == sorted(fresh.tool_ids)
    assert index.manifests["sales_query"] == edited
    for query in QUERIES:
        got = dict(ranking(index, embedder, query))
        want = dict(ranking(fresh, embedder, query))
        assert got.keys() == want.keys()
        for tool_id, score in want.items():
            assert got[tool_id] == pytest.approx(score, abs=1e-3), (query, tool_id)
    allowed = {"order_query", "sales_query"}
    vector = embedder.embed_one(QUERIES[1])
    only = index.search(QUERIES[1], vector, allowed=allowed, k=5)
    assert {c.tool_id for c in only} == allowed


def test_bm25_after_adds_and_removals_scores_as_built_afresh() -> None:
    documents = ["apple banana", "apple apple cherry", "banana", "cherry date", "elder"]
    index = BM25Index(documents[:3])
    index.add(documents[3])
    index.remove(0)  # "cherry date" (the last) takes position 0
    index.add(documents[4])
    fresh = BM25Index(["cherry date", "apple apple cherry", "banana", "elder"])
    assert index.size == fresh.size == 4
    for query in ("apple", "cherry", "banana date", "elder fig"):
        assert np.allclose(index.score(query), fresh.score(query), atol=1e-6)
        assert np.allclose(index.coverage(query), fresh.coverage(query), atol=1e-6)


def test_english_readings_follow_the_tools_in_place(embedder: Embedder) -> None:
    """A tool described in Chinese has an English reading (a vector and BM25 words) that
    moves with it when other tools come and go."""
    vectors = VectorCache(embedder)
    original = json.loads((REPO / "manifests/examples/original_inventory_query.json").read_text())
    chinese = {**original, "tool_id": "stock_cn"}
    english = {
        "tool_id": "weather",
        "description": "Current weather and tomorrow's forecast for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    index = ToolIndex([chinese, shipped("sales_query"), english], vectors)
    index.apply(index.prepare([]), ["stock_cn"], revision=2)  # the last row moves into its hole
    index.apply(index.prepare([shipped("rag_retrieve"), chinese]), [], revision=3)
    fresh = ToolIndex([shipped("sales_query"), english, shipped("rag_retrieve"), chinese], vectors)
    assert not index.english_only("stock_cn")
    assert index.english_only("weather")
    query = "how many units of SKU2024001 are left in the warehouse"
    reading = Glossed("weather tomorrow", embedder.embed_one("weather tomorrow"))
    for text, gloss in ((query, None), ("SKU2024001 明天天气", reading)):
        vector = embedder.embed_one(text)
        got = {c.tool_id: c for c in index.search(text, vector, k=5, english=gloss)}
        want = {c.tool_id: c for c in fresh.search(text, vector, k=5, english=gloss)}
        assert got.keys() == want.keys()
        for tool_id, candidate in want.items():
            assert got[tool_id].score == pytest.approx(candidate.score, abs=1e-3)
            assert got[tool_id].confidence == pytest.approx(candidate.confidence, abs=1e-3)
