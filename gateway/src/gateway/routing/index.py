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
- BM25 over the same words (``lexical.BM25Index``);
- for a tool described mostly in Chinese, a ``glossed`` vector: its description read in
  English words (``gloss``), which an English request is compared with (less
  ``gloss_discount``, the price of a word-by-word reading); its BM25 document gains
  the same words. A Chinese request is searched twice: as written, and as its English
  gloss with the rules of an English one; a tool with no Chinese of its own keeps the
  better of the two, and a tool described in Chinese the better score of the two for
  ordering only (its confidence is the request's as written).

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

The index lives in memory in each gateway replica and follows the registry
change by change (``ToolIndex.apply``): a change embeds and indexes only the
tools it touched; vectors are appended or replaced, never the matrix rebuilt.
Tool vectors are also cached by text (``reach_common.embeddings.VectorCache``, shared
by every index and the registry on the same embedder), so a text seen before is not
embedded again, and kept in Postgres (``gateway.registry.vectors``), so a replica that
starts reads them (``index_texts``) instead of embedding the catalogue again.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.routing import vocabulary
from gateway.routing.cache import abstract
from gateway.routing.extract import index_enums
from gateway.routing.gloss import gloss, has_han
from gateway.routing.lexical import BM25Index
from gateway.routing.text import (
    cjk_share,
    positive_description,
    split_identifier,
    tokenize,
    tool_document,
)
from reach_common.embeddings import VectorCache

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


@dataclass(frozen=True)
class Glossed:
    """A mostly Chinese query read in English (``gloss``) and its vector; and, when it
    differs, the reading that takes each word in the sense the English-only tools' words
    share (``gloss_toward``), with its vector: ``leaning`` orders those tools only, and
    the plain reading alone gives their confidence."""

    text: str
    vector: Matrix
    leaning: tuple[str, Matrix] | None = None


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
    """The display name when there is one (ids are often mangled: ``productsearch``); a
    name in Chinese with an English id is read by its id (``background_check_order`` for
    发起背景调查: the model reads English)."""
    name = str(manifest.get("name") or "")
    if not name or (has_han(name) and not has_han(str(manifest["tool_id"]))):
        name = str(manifest["tool_id"])
    return split_identifier(name)


def _id_words(manifest: dict[str, Any]) -> str:
    """An English id's words, to lead a Chinese description's reading: the one English
    label such a tool has."""
    tool_id = str(manifest.get("tool_id") or "")
    return "" if has_han(tool_id) else split_identifier(tool_id.rsplit(".", 1)[-1])


@dataclass(frozen=True)
class _View:
    rows: npt.NDArray[np.int64]
    describe: Matrix
    bare: Matrix
    names: Matrix
    examples: Matrix  # the allowed tools' example vectors
    owner: npt.NDArray[np.int64]  # each example's tool, as a position in ``rows``
    glossed: Matrix  # the English reading's vector, else the description's
    latin: npt.NDArray[np.bool_]  # tools with no Chinese in their text
    glossing: bool  # whether any of the tools has an English reading


@dataclass(frozen=True)
class _Texts:
    """The texts :meth:`ToolIndex.prepare` embeds for some tools."""

    describe: list[str]
    bare: list[str]
    names: list[str]
    examples: list[list[str]]
    # Read in English when the description itself is in Chinese (not a tool with a few
    # Chinese aliases): the whole text for its vector, the Chinese words for BM25.
    glossed: list[str | None]

    @classmethod
    def of(cls, manifests: Sequence[dict[str, Any]]) -> _Texts:
        describe = [describe_text(m) for m in manifests]
        bare = [bare_text(m) or d for m, d in zip(manifests, describe, strict=True)]
        glossed = [
            f"{_id_words(m)}: {gloss(d)}".lstrip(": ") if cjk_share(b) >= GLOSS_SHARE else None
            for m, d, b in zip(manifests, describe, bare, strict=True)
        ]
        names = [name_text(m) for m in manifests]
        return cls(describe, bare, names, [example_texts(m) for m in manifests], glossed)

    def embedded(self) -> list[str]:
        """All of them, in the order of the matrix ``prepare`` slices."""
        flat = [t for texts in self.examples for t in texts]
        english = [g for g in self.glossed if g]
        return [*self.describe, *self.bare, *self.names, *flat, *english]


# The letters a parameter's pattern starts every value with: "TK" of ``^TK-\d{4}-\d{6}$``.
_PATTERN_PREFIX = re.compile(r"\^?([A-Za-z]{2,8})(?=[-_]|\\d|\[0-9\]|\[\\d)")


def pattern_prefixes(manifest: dict[str, Any]) -> str:
    """The letters the tool's parameter patterns start their values with, as words: a
    request naming ``TK-2026-246610`` shares "tk" with a tool whose ``order_id`` is
    ``^TK-\\d{4}-\\d{6}$`` as it does with one whose description shows "e.g. TK-2026-004512"
    (for the lexical stage only: the vectors are unchanged)."""
    schema = manifest.get("input_schema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    words = []
    for spec in (properties or {}).values() if isinstance(properties, dict) else ():
        pattern = spec.get("pattern") if isinstance(spec, dict) else None
        if isinstance(pattern, str) and pattern.startswith("^"):
            match = _PATTERN_PREFIX.match(pattern, 1)
            if match is not None:
                words.append(match.group(1))
    return " ".join(dict.fromkeys(words))


def index_texts(manifests: Sequence[dict[str, Any]]) -> list[str]:
    """Every text an index of ``manifests`` embeds (to fetch or store their vectors first)."""
    return _Texts.of(manifests).embedded()


@dataclass(frozen=True)
class Prepared:
    """What indexing some tools needs, computed off the event loop (``ToolIndex.prepare``):
    their vectors and their BM25 terms."""

    manifests: list[dict[str, Any]]
    describe: Matrix
    bare: Matrix
    names: Matrix
    examples: list[Matrix]  # per tool, one row per alias or example
    terms: list[Counter[str]]
    glossed: Matrix
    latin: npt.NDArray[np.bool_]


class _Rows:
    """Rows of a matrix that grows by doubling, and loses a row by moving its last row into
    the hole: appending and removing cost the rows touched, never a copy of the whole."""

    def __init__(self, tail: tuple[int, ...], dtype: type[np.generic] = np.float32) -> None:
        self._data: npt.NDArray[Any] = np.zeros((16, *tail), dtype=dtype)
        self.size = 0

    @property
    def data(self) -> npt.NDArray[Any]:
        return self._data[: self.size]

    def extend(self, rows: npt.NDArray[Any]) -> None:
        needed = self.size + len(rows)
        if needed > len(self._data):
            shape = (max(needed, 2 * len(self._data)), *self._data.shape[1:])
            grown = np.zeros(shape, dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : needed] = rows
        self.size = needed

    def remove(self, row: int) -> None:
        last = self.size - 1
        if row != last:
            self._data[row] = self._data[last]
        self.size = last


# CJK coverage is scaled so that a fifth of the query's information found in the tool's
# text (p10 of the right tools on our request set, above p90 of the off-topic ones,
# scripts/bench_shipped.py) counts as the default threshold 0.3.
_COVERAGE_SCALE = 1.4


# A tool described, or a request written, at least this much in Chinese is also read in
# English words (``gloss``).
GLOSS_SHARE = 0.3


def _minmax(scores: Matrix) -> Matrix:
    lo, hi = float(scores.min()), float(scores.max())
    if hi - lo < 1e-9:
        return np.zeros_like(scores)
    normalised: Matrix = (scores - lo) / (hi - lo)
    return normalised


def _better(
    first: Callable[[int], float], second: Callable[[int], float], where: npt.NDArray[np.bool_]
) -> Callable[[int], float]:
    return lambda i: max(first(i), second(i)) if where[i] else first(i)


def _top(scores: Matrix, k: int) -> npt.NDArray[np.intp]:
    """Positions of the ``k`` best scores, best first (ties in position order). A large
    catalogue partitions first: sorting 10,000 scores to keep 5 costs more than a query's
    other steps together."""
    if scores.size <= 2048 or not 0 < k < scores.size:
        return np.argsort(-scores, kind="stable")[:k]
    kth = np.partition(-scores, k - 1)[k - 1]
    kept = np.flatnonzero(-scores <= kth)  # the k best, and any tied with the k-th
    return kept[np.argsort(-scores[kept], kind="stable")][:k]


class ToolIndex:
    """Dense + BM25 index over the registry, kept at one revision.

    Built once from every tool, then kept current by :meth:`apply`: the vectors of added
    or changed tools are appended (a changed tool's old rows removed), a removed tool's
    rows give way to the last ones; the BM25 index is updated per document. Only the
    tools a change touches are embedded and tokenized (:meth:`prepare`, off the loop).
    """

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
        gloss_discount: float = 0.05,
    ) -> None:
        self.revision = revision
        self.gloss_discount = gloss_discount
        self.alpha = alpha
        self.cjk_alpha = cjk_alpha
        self.name_weight = name_weight
        self.example_weight = example_weight
        self.example_discount = example_discount
        self.vectors = vectors
        self.tool_ids: list[str] = []
        self.manifests: dict[str, dict[str, Any]] = {}
        self._position: dict[str, int] = {}
        self._views: dict[frozenset[str] | None, _View] = {}
        dimensions = (vectors.embedder.dimensions,)
        self._describe, self._bare = _Rows(dimensions), _Rows(dimensions)
        self._names = _Rows(dimensions)
        self._glossed = _Rows(dimensions)
        self._latin = _Rows((), np.bool_)
        self._examples = _Rows(dimensions)
        self._example_owner = _Rows((), np.int64)
        self._example_rows: dict[str, list[int]] = {}
        self._bm25 = BM25Index([])
        # Learned from the catalogue's own words (``vocabulary``): per revision, on first use.
        self._tolerance: dict[str, float | None] = {}
        self._disclaimed: frozenset[str] | None = None
        self.apply(self.prepare(manifests), (), revision)

    def prepare(self, manifests: Sequence[dict[str, Any]]) -> Prepared:
        """Vectors (one embedding pass for every text) and BM25 terms of ``manifests``,
        and their long enums indexed (``extract.index_enums``)."""
        for manifest in manifests:
            index_enums(manifest.get("input_schema"))
        texts = _Texts.of(manifests)
        describe, glossed = texts.describe, texts.glossed
        english = [g for g in glossed if g]
        matrix = self.vectors.embed(texts.embedded())
        n = len(manifests)
        bounds = np.cumsum([3 * n, *(len(e) for e in texts.examples)])
        # A tool with no gloss keeps its description's vector there: the better of the two
        # is then the description's.
        glossed_rows = matrix[:n].copy()
        which = [i for i, g in enumerate(glossed) if g]
        glossed_rows[which] = matrix[len(matrix) - len(english) :]
        documents = [  # (the name as written: a Chinese name's characters match too)
            f"{split_identifier(str(m['tool_id']))}\n{split_identifier(str(m.get('name') or ''))}"
            f"\n{d}\n{pattern_prefixes(m)}\n" + (gloss(d, latin=False) if g else "")
            for m, d, g in zip(manifests, describe, glossed, strict=True)
        ]
        return Prepared(
            manifests=list(manifests),
            describe=matrix[:n],
            bare=matrix[n : 2 * n],
            names=matrix[2 * n : 3 * n],
            examples=[matrix[a:b] for a, b in itertools.pairwise(bounds)],
            terms=[Counter(tokenize(doc)) for doc in documents],
            glossed=glossed_rows,
            latin=np.array([not has_han(d) for d in describe], dtype=np.bool_),
        )

    def apply(self, prepared: Prepared, removed: Iterable[str], revision: int) -> None:
        """Remove ``removed``, add or replace the tools ``prepared`` holds, and move to
        ``revision``; costs the tools touched (run it where searches run: not thread-safe)."""
        replaced = [str(m["tool_id"]) for m in prepared.manifests]
        for tool_id in (*removed, *replaced):
            if tool_id in self._position:
                self._remove(tool_id)
        start = len(self.tool_ids)
        self._describe.extend(prepared.describe)
        self._bare.extend(prepared.bare)
        self._names.extend(prepared.names)
        self._glossed.extend(prepared.glossed)
        self._latin.extend(prepared.latin)
        pairs = zip(replaced, prepared.manifests, strict=True)
        for offset, (tool_id, manifest) in enumerate(pairs):
            position = start + offset
            self.tool_ids.append(tool_id)
            self.manifests[tool_id] = manifest
            self._position[tool_id] = position
            examples = prepared.examples[offset]
            first = self._examples.size
            self._examples.extend(examples)
            self._example_owner.extend(np.full(len(examples), position, dtype=np.int64))
            self._example_rows[tool_id] = list(range(first, first + len(examples)))
            self._bm25.add_terms(prepared.terms[offset])
        self.revision = revision
        self._views.clear()
        self._tolerance.clear()
        self._disclaimed = None

    def _remove(self, tool_id: str) -> None:
        position = self._position.pop(tool_id)
        # Highest first: a row moved into a hole is then never one of this tool's own.
        for row in sorted(self._example_rows.pop(tool_id), reverse=True):
            last = self._examples.size - 1
            if row != last:
                moved = self._example_rows[self.tool_ids[int(self._example_owner.data[last])]]
                moved[moved.index(last)] = row
            self._examples.remove(row)
            self._example_owner.remove(row)
        last = len(self.tool_ids) - 1
        if position != last:
            moved_id = self.tool_ids[last]
            self.tool_ids[position] = moved_id
            self._position[moved_id] = position
            self._example_owner.data[self._example_rows[moved_id]] = position
        for rows in (self._describe, self._bare, self._names, self._glossed, self._latin):
            rows.remove(position)
        self.tool_ids.pop()
        self._bm25.remove(position)
        del self.manifests[tool_id]

    def reads_english_only(self, allowed: Collection[str] | None) -> bool:
        """Whether any of ``allowed`` has no Chinese in its text (only such a tool is
        searched by a Chinese request's English reading)."""
        return bool(self._view(allowed).latin.any())

    def english_only(self, tool_id: str) -> bool:
        """Whether the tool's text has no Chinese (a Chinese request reaches it only in its
        English reading)."""
        position = self._position.get(tool_id)
        return position is not None and bool(self._latin.data[position])

    def __len__(self) -> int:
        return len(self.tool_ids)

    def _view(self, allowed: Collection[str] | None) -> _View:
        """The allowed tools' rows and their vectors; memoised per permission set until the
        next change, so a query copies no matrices (callers share a handful of permission
        sets). Every tool: the stores themselves, no copy at all."""
        key = None if allowed is None else frozenset(allowed)
        view = self._views.get(key)
        if view is None:
            describe, bare, names = self._describe.data, self._bare.data, self._names.data
            examples, owner = self._examples.data, self._example_owner.data
            glossed, latin = self._glossed.data, self._latin.data
            if key is None:
                rows = np.arange(len(self.tool_ids))
                glossing = bool((glossed != describe).any())
                view = _View(rows, describe, bare, names, examples, owner, glossed, latin, glossing)
            else:
                rows = np.array(
                    sorted(self._position[t] for t in key if t in self._position), dtype=np.int64
                )
                local = np.full(len(self.tool_ids), -1, dtype=np.int64)
                local[rows] = np.arange(rows.size)
                owned = local[owner]
                kept = owned >= 0
                view = _View(
                    rows,
                    describe[rows],
                    bare[rows],
                    names[rows],
                    examples[kept],
                    owned[kept],
                    glossed[rows],
                    latin[rows],
                    bool((glossed[rows] != describe[rows]).any()),
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
        include: Collection[str] = (),
        english: Glossed | None = None,
    ) -> list[Candidate]:
        """Top ``k`` tools for ``query`` among ``allowed`` (all when ``None``), best first,
        and after them those of ``include`` (if allowed) that did not make the top ``k``.

        ``shape_vector`` embeds the query with its values abstracted (``cache.abstract``),
        compared with the tools' example vectors; the query's own vector when absent.
        ``alpha`` overrides the dense weight (1.0: dense only, 0.0: lexical only).
        ``english``: a Chinese query's gloss and its vector, searched as an English query
        would be; each tool with no Chinese of its own keeps the better score and confidence
        of the two readings (and the better score of its leaning reading, which gives no
        confidence), and each tool described in Chinese the better score alone.
        """
        view = self._view(allowed)
        rows = view.rows
        if rows.size == 0:
            return []
        fused, dense, lexical, confidence = self._scores(
            view, query, query_vector, alpha, shape_vector
        )
        if english is not None:
            # A tool with no Chinese of its own takes the better of the two readings, score
            # and confidence. A tool described in Chinese the request reaches as written; its
            # English reading compared with the request's (``glossed``, both word by word)
            # only orders it, as the leaning reading does: two glosses agreeing lift
            # off-topic requests over the threshold too (session 77: top-1 +47 of 9,219,
            # off-topic rejected -97 of 3,548, with its confidence counted).
            also = self._scores(view, english.text, english.vector, alpha, None, penalise=False)
            latin = view.latin
            fused = np.maximum(fused, also[0])
            if english.leaning is not None:  # (a reading drawn to the catalogue's words
                # would lift any request over the threshold: it orders, and no more)
                lean = self._scores(view, *english.leaning, alpha, None, penalise=False)
                fused = np.where(latin, np.maximum(fused, lean[0]), fused)
            dense = np.where(latin, np.maximum(dense, also[1]), dense)
            lexical = np.where(latin, np.maximum(lexical, also[2]), lexical)
            confidence = _better(confidence, also[3], latin)
        top = list(_top(fused, k))
        if include:
            kept = {self.tool_ids[int(rows[i])] for i in top}
            extra = {self._position[t] for t in include if t not in kept and t in self._position}
            top += [int(i) for i in np.flatnonzero(np.isin(rows, list(extra)))]
        return [
            Candidate(
                tool_id=self.tool_ids[int(rows[i])],
                score=float(fused[i]),
                dense=float(dense[i]),
                lexical=float(lexical[i]),
                confidence=confidence(int(i)),
            )
            for i in top
        ]

    def _scores(
        self,
        view: _View,
        query: str,
        query_vector: Matrix,
        alpha: float | None,
        shape_vector: Matrix | None,
        *,
        penalise: bool = True,
    ) -> tuple[Matrix, Matrix, Matrix, Callable[[int], float]]:
        """Per allowed tool: the fused score, the dense and lexical scores, and the
        confidence (computed for the few tools that need one). Without ``penalise`` the
        catalogue's vocabulary (``_unsupported``) is not held against the query: a gloss's
        dictionary words are not the user's."""
        rows = view.rows
        cjk = cjk_share(query)
        if alpha is None:
            alpha = self.alpha * (1 - cjk) + self.cjk_alpha * cjk
        cosine = view.describe @ query_vector
        if view.glossing:  # a tool described in Chinese is also compared in its English reading
            cosine = np.maximum(cosine, view.glossed @ query_vector - self.gloss_discount)
        example = self._example_match(view, query_vector if shape_vector is None else shape_vector)
        best = np.maximum(np.maximum(cosine, view.bare @ query_vector), example)
        dense = (cosine + self.example_weight * best) / (1 + self.example_weight)
        dense = dense + self.name_weight * (view.names @ query_vector)
        lexical = self._bm25.score(query)[rows]
        coverage = self._bm25.coverage(query)[rows] if cjk else np.zeros_like(lexical)
        evidence = np.maximum(cosine, example - self.example_discount)
        drop = self._unsupported(query, cjk) if penalise else lambda _: 0.0

        def confidence(i: int) -> float:
            tool_id = self.tool_ids[int(rows[i])]
            found = self.confidence(float(evidence[i]), float(lexical[i]), cjk, float(coverage[i]))
            return max(0.0, found - drop(tool_id))

        fused = alpha * _minmax(dense) + (1 - alpha) * _minmax(lexical)
        if rows.size == 1:  # nothing to normalise against: let evidence speak
            fused = np.array([confidence(0)])
        return fused, dense, lexical, confidence

    def _unsupported(self, query: str, cjk: float) -> Callable[[str], float]:
        """Per tool, how much the confidence drops for what the catalogue's own words say
        about ``query`` (``vocabulary``): words beyond the tool's learned tolerance, or
        words the catalogue disclaims; scaled by the query's Latin-script share."""
        if cjk >= 1.0:
            return lambda _: 0.0
        terms = tokenize(query)
        unseen = vocabulary.unseen_share(self._bm25, terms)
        if self._disclaimed is None:
            self._disclaimed = vocabulary.disclaimed(self._bm25, self.manifests.values())
        disclaims = self._disclaimed

        def drop(tool_id: str) -> float:
            if tool_id not in self._tolerance:
                self._tolerance[tool_id] = vocabulary.tolerance(
                    self._bm25, self._position[tool_id], self.manifests[tool_id]
                )
            tolerance = self._tolerance[tool_id]
            return (1 - cjk) * vocabulary.penalty(terms, unseen, tolerance, disclaims)

        return drop

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
