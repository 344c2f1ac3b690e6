"""The embedder gives real, normalised MiniLM vectors in which meaning shows."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from reach_common import int8_graph
from reach_common.embeddings import DIMENSIONS, Embedder
from reach_common.settings import EmbedderSettings


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


TEXTS = [
    "How many units of this product are left in the warehouse?",
    "Calculate the area of a triangle with base 10 and height 5.",
    "SKU2024001 还有多少库存",
    "请帮我查询一下上个月的销售报表，并按地区汇总。",
    "where is my order SO20240715001",
    "Inventory is counted per SKU across warehouses; locked units are excluded. " * 30,
]


@pytest.fixture(scope="module")
def int8_embedder() -> Embedder:
    return Embedder(threads=1, int8=True)


def test_int8_products_serve_when_asked(embedder: Embedder, int8_embedder: Embedder) -> None:
    assert embedder.compute == "float32"
    assert int8_embedder.compute == "int8"
    # Not the float graph under another name: the vectors differ, if only a little.
    assert not np.array_equal(int8_embedder.embed(TEXTS[:2]), embedder.embed(TEXTS[:2]))


def test_int8_vectors_stay_within_cosine_0999_of_float(
    embedder: Embedder, int8_embedder: Embedder
) -> None:
    cosines = (int8_embedder.embed(TEXTS) * embedder.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.999, cosines
    one = np.stack([int8_embedder.embed_one(t) for t in TEXTS])
    np.testing.assert_allclose(one, int8_embedder.embed(TEXTS), atol=1e-4)


def test_int8_rewrite_keeps_the_packaged_int8_weights() -> None:
    import onnx
    from onnx import numpy_helper

    from reach_common.embeddings import _model_file

    graph = onnx.load_from_string(int8_graph.int8_matmul_graph(_model_file())).graph
    products = [n for n in graph.node if n.op_type == "MatMulNBits"]
    assert len(products) == 36  # 6 layers: q, k, v, output, FFN in and out
    # What is left in float: the attention's products of activations with activations.
    assert sum(n.op_type == "MatMul" for n in graph.node) == 12
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    packed = weights[products[0].input[1]]
    assert packed.dtype == np.uint8
    assert packed.shape[2] == int8_graph.BLOCK_SIZE


def _no_rewrite(path: Path, block_size: int = int8_graph.BLOCK_SIZE) -> bytes:
    raise ValueError("nothing to rewrite here")


def _unloadable(path: Path, block_size: int = int8_graph.BLOCK_SIZE) -> bytes:
    return b"not a graph onnxruntime can run"


@pytest.mark.parametrize(
    ("rewrite", "said"), [(_no_rewrite, "nothing to rewrite here"), (_unloadable, "int8 graph")]
)
def test_an_int8_graph_that_cannot_be_made_or_run_leaves_float(
    monkeypatch: pytest.MonkeyPatch,
    embedder: Embedder,
    caplog: pytest.LogCaptureFixture,
    rewrite: object,
    said: str,
) -> None:
    monkeypatch.setattr(int8_graph, "int8_matmul_graph", rewrite)
    fallback = Embedder(threads=1, int8=True)
    assert fallback.compute == "float32"
    assert said in caplog.text
    np.testing.assert_allclose(fallback.embed(TEXTS[:3]), embedder.embed(TEXTS[:3]), atol=1e-5)


def test_an_int8_graph_off_the_float_one_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(int8_graph, "MIN_COSINE", 1.0001)  # no two graphs are that close
    assert Embedder(threads=1, int8=True).compute == "float32"


def test_the_setting_switches_int8_over_the_service_default() -> None:
    unset = EmbedderSettings(embedder_int8=None)
    assert Embedder.configured(unset, int8_default=True).compute == "int8"
    assert Embedder.configured(unset, int8_default=False).compute == "float32"
    off, on = EmbedderSettings(embedder_int8=False), EmbedderSettings(embedder_int8=True)
    assert Embedder.configured(off, int8_default=True).compute == "float32"
    assert Embedder.configured(on, int8_default=False).compute == "int8"


def test_the_token_table_is_widened_row_by_row_to_the_same_vectors() -> None:
    """The packaged table is int8 with a scale per row: gathered as int8 and widened
    after, it gives the vectors of the graph as packaged, with no float table."""
    import onnx
    import onnxruntime as ort

    from reach_common.embeddings import _model_file

    lean = int8_graph.float_graph(_model_file())
    graph = onnx.load_from_string(lean).graph
    table = next(n for n in graph.node if n.op_type == "Gather" and "input_ids" in n.input)
    assert table.input[0].endswith("word_embeddings.weight_q")  # the int8 rows themselves
    assert not any(n.op_type == "Cast" and n.input[0] == table.input[0] for n in graph.node)
    packaged = ort.InferenceSession(str(_model_file()), providers=["CPUExecutionProvider"])
    rewritten = ort.InferenceSession(lean, providers=["CPUExecutionProvider"])
    feeds = Embedder(threads=1)._feeds(TEXTS[2])
    np.testing.assert_array_equal(
        rewritten.run(["last_hidden_state"], feeds)[0],
        packaged.run(["last_hidden_state"], feeds)[0],
    )


class _Recording:
    """A session that says which calls it served, and holds the first until told."""

    def __init__(self, session: object, name: str, served: list[str]) -> None:
        self.session, self.name, self.served = session, name, served
        self.started, self.release = threading.Event(), threading.Event()

    def run(self, *args: object) -> object:
        self.served.append(self.name)
        self.started.set()
        if len(self.served) == 1:
            assert self.release.wait(10)
        return self.session.run(*args)  # type: ignore[attr-defined]


def test_a_call_alone_takes_the_solo_threads_and_an_overlapping_one_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    embedder = Embedder(threads=1, int8=True, solo_threads=2)
    assert embedder._solo is not None
    served: list[str] = []
    solo = _Recording(embedder._solo, "solo", served)
    own = _Recording(embedder._session, "one thread", served)
    embedder._solo, embedder._session = solo, own  # type: ignore[assignment]
    first = threading.Thread(target=embedder.embed_one, args=(TEXTS[0],))
    first.start()
    assert solo.started.wait(10)
    embedder.embed_one(TEXTS[1])  # while the first is still running
    solo.release.set()
    first.join(10)
    embedder.embed_one(TEXTS[2])  # alone again
    assert served == ["solo", "one thread", "solo"]


@pytest.mark.parametrize(("cpus", "solo", "kept"), [(4, 1, False), (1, 2, False), (4, 3, True)])
def test_a_second_session_only_for_more_threads_than_a_call_has(
    monkeypatch: pytest.MonkeyPatch, cpus: int, solo: int, kept: bool
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    embedder = Embedder(threads=1, int8=True, solo_threads=solo)
    assert (embedder._solo is not None) is kept
    assert embedder.solo_threads == (min(solo, cpus) if kept else 1)
    settings = EmbedderSettings(embedder_solo_threads=solo)
    assert (Embedder.configured(settings, int8_default=True)._solo is not None) is kept
