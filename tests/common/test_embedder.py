"""The embedder gives real, normalised MiniLM vectors in which meaning shows."""

from __future__ import annotations

import numpy as np
import pytest

from reach_common.embeddings import DIMENSIONS, Embedder


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(threads=2)


def test_vectors_are_384_dim_and_unit_length(embedder: Embedder) -> None:
    vectors = embedder.embed(["stock level of SKU2024001", "where is my parcel", ""])
    assert vectors.shape == (3, DIMENSIONS)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_related_sentences_score_higher_than_unrelated(embedder: Embedder) -> None:
    anchor, related, unrelated = embedder.embed(
        [
            "How many units of this product are left in the warehouse?",
            "Check the current inventory level for an item.",
            "The orchestra played Beethoven's ninth symphony last night.",
        ]
    )
    assert float(anchor @ related) > float(anchor @ unrelated) + 0.2


def test_order_of_results_matches_input_despite_length_sorting(embedder: Embedder) -> None:
    texts = [
        "a much longer sentence about tracking a delivered parcel " * 5,
        "short",
        "mid size text",
    ]
    batched = embedder.embed(texts, batch_size=2)
    one_by_one = np.stack([embedder.embed_one(t) for t in texts])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-4)


def test_long_text_is_truncated_to_model_limit(embedder: Embedder) -> None:
    assert embedder.count_tokens("word " * 1000) == 256
    assert embedder.embed(["word " * 1000]).shape == (1, DIMENSIONS)


def test_empty_input_gives_empty_matrix(embedder: Embedder) -> None:
    assert embedder.embed([]).shape == (0, DIMENSIONS)
