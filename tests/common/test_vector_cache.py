"""The vector cache runs the model once per text, for every user of one embedder, and
stays correct when several threads share it."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from reach_common.embeddings import Embedder, VectorCache, Vectors


class CountingEmbedder(Embedder):
    """The real model, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__(threads=1)
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        self.embedded.extend(texts)
        return super().embed(texts, batch_size=batch_size)


@pytest.fixture(scope="module")
def model() -> CountingEmbedder:
    return CountingEmbedder()


TEXTS = ["stock level of SKU2024001", "where is my parcel", "monthly sales report"]


def test_a_text_is_embedded_once_for_every_cache_on_the_embedder(model: CountingEmbedder) -> None:
    model.embedded.clear()
    first = VectorCache(model).embed(TEXTS)
    again = VectorCache(model).embed([TEXTS[2], TEXTS[0], TEXTS[2]])
    assert sorted(model.embedded) == sorted(TEXTS)  # the second cache ran no model
    np.testing.assert_array_equal(again, first[[2, 0, 2]])
    np.testing.assert_allclose(first, model.embed(TEXTS), atol=1e-5)  # what the model says

    model.embedded.clear()
    VectorCache(model).embed([*TEXTS, "cancel order SO20240715001"])
    assert model.embedded == ["cancel order SO20240715001"]  # only what was never seen
    assert VectorCache(model).embed([]).shape == (0, model.dimensions)


def test_threads_sharing_a_full_cache_each_get_their_own_vectors(
    model: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is emptied when full, here at every few texts, while other threads read
    it: each caller still gets the vectors of its own texts, in its own order."""
    monkeypatch.setattr(VectorCache, "_LIMIT", 3)
    texts = [f"look up order SO2024071500{i} for customer {i}" for i in range(8)]
    expected = dict(zip(texts, model.embed(texts), strict=True))
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        cache = VectorCache(model)
        try:
            for round_ in range(6):
                mine = [texts[(offset + round_ + j) % len(texts)] for j in range(3)]
                got = cache.embed(mine)
                for text, vector in zip(mine, got, strict=True):
                    np.testing.assert_allclose(vector, expected[text], atol=1e-5)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
