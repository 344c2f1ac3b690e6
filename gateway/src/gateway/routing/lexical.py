"""In-memory BM25 over tool documents.

A tool catalogue is small (hundreds to a few thousand documents), so the index
is a dict of postings per term held in each gateway replica, rebuilt when the
registry revision changes. Scoring a query touches only the postings of its
terms, accumulated into one numpy array.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gateway.routing.text import tokenize

Scores = npt.NDArray[np.float32]


class BM25Index:
    def __init__(self, documents: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.size = len(documents)
        tokenized = [tokenize(doc) for doc in documents]
        lengths = np.array([len(toks) for toks in tokenized], dtype=np.float32)
        avg = float(lengths.mean()) if self.size else 1.0
        norm = k1 * (1 - b + b * lengths / max(avg, 1e-9))
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for doc, toks in enumerate(tokenized):
            for term, tf in Counter(toks).items():
                ids, weights = postings.setdefault(term, ([], []))
                ids.append(doc)
                weights.append(tf * (k1 + 1) / (tf + norm[doc]))
        self._postings: dict[str, tuple[npt.NDArray[np.int64], Scores]] = {}
        self._idf: dict[str, float] = {}
        # A term no document has is the most informative kind: it gets the idf of df = 0.
        self.unseen_idf = math.log(1 + (self.size + 0.5) / 0.5)
        for term, (ids, weights) in postings.items():
            df = len(ids)
            idf = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
            self._idf[term] = idf
            self._postings[term] = (
                np.array(ids, dtype=np.int64),
                np.array(weights, dtype=np.float32) * idf,
            )

    def score(self, query: str) -> Scores:
        """BM25 score of every document for ``query`` (0 where no term matches)."""
        scores = np.zeros(self.size, dtype=np.float32)
        for term in set(tokenize(query)):
            posting = self._postings.get(term)
            if posting is not None:
                scores[posting[0]] += posting[1]
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
        for term in set(tokenize(query)):
            if term.isdigit():
                continue
            idf = self._idf.get(term, self.unseen_idf)
            total += idf
            posting = self._postings.get(term)
            if posting is not None:
                scores[posting[0]] += idf
        # A query of a word or two of little information ("那…的呢", "你好") cannot be
        # well covered: the share is of at least two unseen words' worth.
        scores /= max(total, 2 * self.unseen_idf)
        return scores
