"""In-memory BM25 over tool documents, updated one document at a time.

The index is a dict of postings per term held in each gateway replica. A
registry change adds, replaces or removes just the documents of the tools it
touched (``add``, ``remove``: the last document moves into a removed one's slot,
so positions stay dense); corpus statistics (document count, average length,
document frequencies) are applied when a query is scored, so no stored weight
goes stale. Scoring a query touches only the postings of its terms, each kept
as numpy arrays built on first use after its term changed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from gateway.routing.text import tokenize, without_day_words

Scores = npt.NDArray[np.float32]
_Posting = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]  # documents, term frequencies


class BM25Index:
    def __init__(self, documents: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._terms: list[Counter[str]] = []
        self._lengths = np.zeros(max(16, len(documents)), dtype=np.float32)
        self._total_length = 0.0
        self._postings: dict[str, dict[int, int]] = {}
        self._arrays: dict[str, _Posting] = {}
        for document in documents:
            self.add(document)

    @property
    def size(self) -> int:
        return len(self._terms)

    @property
    def unseen_idf(self) -> float:
        """A term no document has is the most informative kind: the idf of df = 0."""
        return math.log(1 + (self.size + 0.5) / 0.5)

    def idf(self, term: str) -> float:
        df = len(self._postings.get(term, ()))
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def df(self, term: str) -> int:
        """How many documents contain ``term``."""
        return len(self._postings.get(term, ()))

    def has(self, term: str) -> bool:
        return term in self._postings

    def terms(self, position: int) -> Counter[str]:
        """The term counts of the document at ``position``."""
        return self._terms[position]

    def add(self, document: str) -> int:
        """Index ``document`` at the next position; returns it."""
        return self.add_terms(Counter(tokenize(document)))

    def add_terms(self, terms: Counter[str]) -> int:
        """``add`` for a document already tokenized (``Counter(tokenize(document))``)."""
        position = self.size
        self._terms.append(terms)
        if position == self._lengths.size:
            self._lengths = np.concatenate([self._lengths, np.zeros_like(self._lengths)])
        length = sum(terms.values())
        self._lengths[position] = length
        self._total_length += length
        for term, tf in terms.items():
            self._postings.setdefault(term, {})[position] = tf
        self._dirty(terms)
        return position

    def remove(self, position: int) -> None:
        """Drop the document at ``position``; the last document takes its position."""
        last = self.size - 1
        terms = self._terms[position]
        self._total_length -= float(self._lengths[position])
        for term in terms:
            posting = self._postings[term]
            del posting[position]
            if not posting:
                del self._postings[term]
        self._dirty(terms)
        if position != last:
            moved = self._terms[last]
            for term in moved:
                self._postings[term][position] = self._postings[term].pop(last)
            self._dirty(moved)
            self._terms[position] = moved
            self._lengths[position] = self._lengths[last]
        self._terms.pop()
        self._lengths[last] = 0.0

    def _dirty(self, terms: Iterable[str]) -> None:
        for term in terms:
            self._arrays.pop(term, None)

    def _posting(self, term: str) -> _Posting | None:
        posting = self._arrays.get(term)
        if posting is None:
            documents = self._postings.get(term)
            if not documents:
                return None
            posting = (
                np.fromiter(documents.keys(), dtype=np.int64, count=len(documents)),
                np.fromiter(documents.values(), dtype=np.float32, count=len(documents)),
            )
            self._arrays[term] = posting
        return posting

    def score(self, query: str) -> Scores:
        """BM25 score of every document for ``query`` (0 where no term matches)."""
        scores = np.zeros(self.size, dtype=np.float32)
        if not self.size:
            return scores
        average = max(self._total_length / self.size, 1e-9)
        for term in set(tokenize(query)):
            posting = self._posting(term)
            if posting is None:
                continue
            documents, tf = posting
            norm = self.k1 * (1 - self.b + self.b * self._lengths[documents] / average)
            scores[documents] += self.idf(term) * tf * (self.k1 + 1) / (tf + norm)
        return scores

    def coverage(self, query: str) -> Scores:
        """The share of the query's information each document contains: the idf-weighted
        fraction of the query's terms (digits aside: values, not words) found in it.

        BM25 grows with every matching term and says nothing of what the document does
        *not* explain; coverage does. For text the embedder cannot read (Chinese for an
        English model) it is the confidence: "取消订单" shares 订单 with an order tool
        but its 取消 (cancel) is nowhere in it.
        """
        scores = np.zeros(self.size, dtype=np.float32)
        total = 0.0
        for term in set(tokenize(without_day_words(query))):
            if term.isdigit():
                continue
            posting = self._posting(term)
            idf = self.idf(term) if posting is not None else self.unseen_idf
            total += idf
            if posting is not None:
                scores[posting[0]] += idf
        # A query of a word or two of little information ("那…的呢", "你好") cannot be
        # well covered: the share is of at least two unseen words' worth.
        scores /= max(total, 2 * self.unseen_idf)
        return scores
