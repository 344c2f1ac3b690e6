"""The coarse routing stage: dense and lexical matching over the tool catalogue, fused.

Each tool is seen several ways:

- ``describe`` vector: the embedding of the description (less its sentences on
  what the tool is *not* for), aliases, examples, and parameter names and
  descriptions;
- ``bare`` vector: the description alone; long parameter descriptions dilute
  the ``describe`` vector (BFCL R@1 0.785 -> 0.796 with the better of the two);
- one vector per alias and per example request, values abstracted
  (``SKU2024001`` -> ``<id:sku>``), compared with the query's shape: a close
  paraphrase of one example is not averaged away among the others;
- ``name`` vector: the embedding of the tool's id and name alone, added with a
  small weight (short ids such as "weather forecast" are strong evidence). Kept
  apart from the description, it helps more than as a prefix of it (MetaTool
  Recall@1 0.587 against 0.569);
- BM25 over the same words (``lexical.BM25Index``).

The dense score is the mean of the ``describe`` cosine and the best cosine over
all of a tool's vectors, plus the name bonus; a tool without aliases or
examples is scored exactly as before they existed. The fused score is a convex
combination of the min-max-normalised dense and lexical scores (``alpha`` on
the dense side). all-MiniLM-L6-v2 was trained on English: its vectors of
Chinese or Japanese text say little, so the more of a query is CJK, the more
the weight moves to the lexical side (``cjk_alpha``), where CJK bigrams match
the tool's aliases and examples. Measured on MetaTool and BFCL (``make
bench-routing``), this beats reciprocal-rank fusion here, as Bruch et al.
(TOIS 2023) found in general; fusions that adapt to the signals' margins, and
saturated instead of min-max BM25, measured worse on both. Candidates are
filtered to the tools the caller may use *before* scores are normalised and
ranked.

The index lives in memory in each gateway replica and is rebuilt when the
registry revision changes; tool vectors are cached by text (and shared by
every index on the same embedder), so a rebuild only embeds what changed.
"""

from __future__ import annotations

import hashlib
import math
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from gateway.routing.cache import abstract
from gateway.routing.lexical import BM25Index
from gateway.routing.text import (
    cjk_share,
    positive_description,
    split_identifier,
    tool_document,
)
from reach_common.embeddings import Embedder

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Candidate:
    """One tool the coarse stage kept, with the evidence for it."""

    tool_id: str
    score: float  # fused, in [0, 1] within this query's candidate set
    dense: float  # cosine similarity of the describe view (plus name bonus)
    lexical: float  # raw BM25
    confidence: float  # what offline thresholds compare: see ToolIndex.confidence

    def as_dict(self) -> dict[str, float | str]:
        return {
            "tool_id": self.tool_id,
            "score": round(self.score, 4),
            "dense": round(self.dense, 4),
            "lexical": round(self.lexical, 4),
            "confidence": round(self.confidence, 4),
        }


def describe_text(manifest: dict[str, Any]) -> str:
    return tool_document({**manifest, "tool_id": "", "name": ""}).strip()


def example_texts(manifest: dict[str, Any]) -> list[str]:
    """The tool's aliases and example requests, each a vector of its own, values
    abstracted (``SKU2024001`` → ``<id:sku>``) as the query's are for the match."""
    texts = [str(t) for t in (manifest.get("aliases") or []) + (manifest.get("examples") or [])]
    return list(dict.fromkeys(abstract(t) for t in texts if t.strip()))


def bare_text(manifest: dict[str, Any]) -> str:
    """What the description says the tool is for, without aliases, examples or parameters:
    long parameter descriptions otherwise dilute the document's vector (BFCL R@1 +1.1)."""
    return positive_description(str(manifest.get("description") or "")).strip()


def name_text(manifest: dict[str, Any]) -> str:
    """The display name when there is one (ids are often mangled: ``productsearch``)."""
    return split_identifier(str(manifest.get("name") or manifest["tool_id"]))


class VectorCache:
    """Tool-text → vector, so rebuilding the index only embeds what changed.

    Vectors are kept per embedder (weakly: they go with it) and shared by every cache
    on the same embedder: a second router in the process (tests, benchmarks) embeds
    nothing the first one already did.
    """

    _by_embedder: ClassVar[weakref.WeakKeyDictionary[Embedder, dict[str, Matrix]]] = (
        weakref.WeakKeyDictionary()
    )
    _LIMIT: ClassVar[int] = 50_000  # vectors per embedder (about 75 MB at 384 dimensions)

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        try:
            self._vectors = self._by_embedder.setdefault(embedder, {})
        except TypeError:  # an embedder that cannot be weakly referenced keeps its own
            self._vectors = {}

    def embed(self, texts: Sequence[str]) -> Matrix:
        keys = [hashlib.sha1(t.encode(), usedforsecurity=False).hexdigest() for t in texts]
        # Shortest first: a batch is padded to its longest text.
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}.items(),
            key=lambda item: (len(item[1]), item[0]),
        )
        if missing:
            if len(self._vectors) + len(missing) > self._LIMIT:
                self._vectors.clear()
            vectors = self.embedder.embed([t for _, t in missing])
            for (key, _), vector in zip(missing, vectors, strict=True):
                self._vectors[key] = vector
        if not texts:
            return np.zeros((0, self.embedder.dimensions), dtype=np.float32)
        return np.stack([self._vectors[k] for k in keys])


@dataclass(frozen=True)
class _View:
    rows: npt.NDArray[np.int64]
    describe: Matrix
    bare: Matrix
    names: Matrix
    examples: Matrix  # the allowed tools' example vectors
    owner: npt.NDArray[np.int64]  # each example's tool, as a position in ``rows``


# CJK coverage is scaled so that a fifth of the query's information found in the tool's
# text (p10 of the right tools on our request set, above p90 of the off-topic ones,
# scripts/bench_shipped.py) counts as the default threshold 0.3.
_COVERAGE_SCALE = 1.4


def _minmax(scores: Matrix) -> Matrix:
    lo, hi = float(scores.min()), float(scores.max())
    if hi - lo < 1e-9:
        return np.zeros_like(scores)
    normalised: Matrix = (scores - lo) / (hi - lo)
    return normalised


class ToolIndex:
    """Dense + BM25 index over one revision of the registry."""

    def __init__(
        self,
        manifests: Sequence[dict[str, Any]],
        vectors: VectorCache,
        *,
        revision: int = 0,
        alpha: float = 0.8,
        cjk_alpha: float = 0.3,
        name_weight: float = 0.3,
        example_weight: float = 1.0,
        example_discount: float = 0.15,
    ) -> None:
        self.revision = revision
        self.alpha = alpha
        self.cjk_alpha = cjk_alpha
        self.name_weight = name_weight
        self.example_weight = example_weight
        self.example_discount = example_discount
        self.tool_ids = [str(m["tool_id"]) for m in manifests]
        self.manifests = {str(m["tool_id"]): m for m in manifests}
        self._position = {tool_id: i for i, tool_id in enumerate(self.tool_ids)}
        self._views: dict[frozenset[str] | None, _View] = {}
        describe = [describe_text(m) for m in manifests]
        names = [name_text(m) for m in manifests]
        self._describe = vectors.embed(describe)
        self._bare = vectors.embed(
            [bare_text(m) or d for m, d in zip(manifests, describe, strict=True)]
        )
        self._names = vectors.embed(names)
        examples = [example_texts(m) for m in manifests]
        self._examples = vectors.embed([t for texts in examples for t in texts])
        self._example_owner = np.array(
            [i for i, texts in enumerate(examples) for _ in texts], dtype=np.int64
        )
        self._bm25 = BM25Index(
            [
                f"{split_identifier(str(m['tool_id']))}\n{n}\n{d}"
                for m, n, d in zip(manifests, names, describe, strict=True)
            ]
        )

    def __len__(self) -> int:
        return len(self.tool_ids)

    def _view(self, allowed: Collection[str] | None) -> _View:
        """The allowed tools' rows and their vectors; memoised per permission set, so a
        query copies no matrices (callers share a handful of permission sets)."""
        key = None if allowed is None else frozenset(allowed)
        view = self._views.get(key)
        if view is None:
            if key is None:
                rows = np.arange(len(self.tool_ids))
            else:
                rows = np.array(
                    sorted(self._position[t] for t in key if t in self._position), dtype=np.int64
                )
            local = np.full(len(self.tool_ids), -1, dtype=np.int64)
            local[rows] = np.arange(rows.size)
            owner = local[self._example_owner]
            kept = owner >= 0
            view = _View(
                rows,
                self._describe[rows],
                self._bare[rows],
                self._names[rows],
                self._examples[kept],
                owner[kept],
            )
            if len(self._views) > 256:
                self._views.clear()
            self._views[key] = view
        return view

    def search(
        self,
        query: str,
        query_vector: Matrix,
        *,
        allowed: Collection[str] | None = None,
        k: int = 10,
        alpha: float | None = None,
        shape_vector: Matrix | None = None,
    ) -> list[Candidate]:
        """Top ``k`` tools for ``query`` among ``allowed`` (all when ``None``), best first.

        ``shape_vector`` embeds the query with its values abstracted (``cache.abstract``),
        compared with the tools' example vectors; the query's own vector when absent.
        ``alpha`` overrides the dense weight (1.0: dense only, 0.0: lexical only).
        """
        cjk = cjk_share(query)
        if alpha is None:
            alpha = self.alpha * (1 - cjk) + self.cjk_alpha * cjk
        view = self._view(allowed)
        rows = view.rows
        if rows.size == 0:
            return []
        cosine = view.describe @ query_vector
        example = self._example_match(view, query_vector if shape_vector is None else shape_vector)
        best = np.maximum(np.maximum(cosine, view.bare @ query_vector), example)
        dense = (cosine + self.example_weight * best) / (1 + self.example_weight)
        dense = dense + self.name_weight * (view.names @ query_vector)
        lexical = self._bm25.score(query)[rows]
        coverage = self._bm25.coverage(query)[rows] if cjk else np.zeros_like(lexical)
        evidence = np.maximum(cosine, example - self.example_discount)
        fused = alpha * _minmax(dense) + (1 - alpha) * _minmax(lexical)
        if rows.size == 1:  # nothing to normalise against: let evidence speak
            fused = np.array(
                [self.confidence(float(evidence[0]), float(lexical[0]), cjk, float(coverage[0]))]
            )
        top = np.argsort(-fused, kind="stable")[:k]
        return [
            Candidate(
                tool_id=self.tool_ids[int(rows[i])],
                score=float(fused[i]),
                dense=float(dense[i]),
                lexical=float(lexical[i]),
                confidence=self.confidence(
                    float(evidence[i]), float(lexical[i]), cjk, float(coverage[i])
                ),
            )
            for i in top
        ]

    @staticmethod
    def _example_match(view: _View, shape_vector: Matrix) -> Matrix:
        """Per tool, the best cosine over its example vectors (-1 with none). One vector
        per example keeps a close paraphrase of one request from being averaged away in
        a document of all of them; the ranking takes the best of these, the whole
        document's and the bare description's."""
        best: Matrix = np.full(view.rows.size, -1.0, dtype=np.float32)
        if view.owner.size:
            np.maximum.at(best, view.owner, view.examples @ shape_vector)
        return best

    @staticmethod
    def confidence(cosine: float, bm25: float, cjk: float = 0.0, coverage: float = 0.0) -> float:
        """An absolute match score in [0, 1] for thresholds, comparable across queries.

        Min-max fused scores are relative (the best candidate always gets 1),
        so they cannot say "nothing fits". The raw cosine can (of the description,
        or of the closest example less ``example_discount``: a short paraphrase
        scores higher than a description does); a lexical hit adds a little,
        saturating. For CJK text the cosine means little, so lexical evidence
        takes its place in proportion: the geometric mean of the saturated BM25
        (how much matches) and of the share of the query's words the tool's text
        contains (``BM25Index.coverage``: how much of the query is explained). On
        our request set, either alone rejected more of the right tools or accepted
        more off-topic requests, with rich and with sparse Chinese examples alike.
        """
        saturated = bm25 / (bm25 + 5.0) if bm25 > 0 else 0.0
        latin = cosine + 0.1 * saturated
        # Both must hold for CJK: enough matching words, and most of the query explained.
        cjk_evidence = min(1.0, math.sqrt(0.7 * saturated * _COVERAGE_SCALE * coverage))
        blended = (1 - cjk) * latin + cjk * cjk_evidence
        return float(min(1.0, max(0.0, blended)))
