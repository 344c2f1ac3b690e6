"""What the catalogue's own words say about a request none of its tools serves.

The confidence (``ToolIndex.confidence``) is a similarity: "cancel order
SO20261130004" is as close to "where is order SO20261118002?" as a real order
lookup is, because all-MiniLM-L6-v2 weighs the shared object ("order <id>")
more than the differing verb. Two facts the manifests state outright catch some
of these near-domain requests, and are checked per query on the few candidates
the coarse stage keeps (ranking is untouched):

- **Words no tool's text has.** A request whose information is largely in
  words found in no tool's text (its ``unseen`` share, idf-weighted, values
  aside) is suspect, but how suspect depends on the tool: a search tool's
  requests carry a topic ("how to restart the payment service"), a stock
  lookup's do not. Each tool's tolerance is learned from its own examples:
  the largest unseen share among them, each measured against the catalogue
  without it (leave-one-out). Only the share above that tolerance (and
  ``UNSEEN_SLACK``) lowers the confidence. A tool with fewer than
  ``MIN_EXAMPLES`` Latin-script examples has no known tolerance and no
  penalty: a one-sentence description does not try to cover its requests'
  words (MetaTool and BFCL are scored exactly as before).
- **Words the catalogue disclaims.** A sentence on what a tool *cannot* do
  that sends the request nowhere else ("it cannot change or cancel orders",
  with no "(use other_tool)") names an action the catalogue lacks; its words
  that no tool's text has are ``disclaimed``, and a request using one loses
  ``DISCLAIMED_PENALTY`` on every tool. "Not for live data such as stock"
  sentences are left out: they name uses, often other tools' ("data" would
  then count against every request for data).

Both apply to the Latin-script part of a request (CJK confidence is already
lexical coverage, ``BM25Index.coverage``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gateway.routing.lexical import BM25Index
from gateway.routing.text import cjk_share, negative_sentences, tokenize

UNSEEN_WEIGHT = 0.5
UNSEEN_SLACK = 0.1
MIN_EXAMPLES = 3
DISCLAIMED_PENALTY = 0.35
# A negative sentence that sends the request elsewhere ("(use sales_query)", "use
# rag_ingest") disclaims nothing the catalogue lacks.
_REDIRECT = re.compile(r"\b(?:use|see|try)\s+[A-Za-z][\w.\-]*", re.IGNORECASE)
_INCAPABLE = re.compile(r"\b(?:cannot|can'?t|can\s+not)\b", re.IGNORECASE)
_LATIN_WORD = re.compile(r"^[a-z]{3,}$")
_NEGATION = frozenset({"cannot", "never", "instead", "onli", "use"})
# What is left of a contraction ("hasn't" -> "hasn"): says nothing of the request.
_FRAGMENTS = frozenset({"aren", "couldn", "didn", "doesn", "don", "hadn", "hasn", "haven"})
_FRAGMENTS |= {"isn", "shouldn", "wasn", "weren", "won", "wouldn"}


def unseen_share(
    bm25: BM25Index, terms: Iterable[str], known: Callable[[str], bool] | None = None
) -> float:
    """The idf-weighted share of ``terms`` (digits aside) the catalogue has not seen; a
    term is seen when it has postings and ``known(term)`` (if given) says so. As in
    ``BM25Index.coverage``, a query of one or two words counts as at least two unseen
    words' worth, so a single common word is not "fully explained"."""
    total = unseen = 0.0
    for term in set(terms):
        if term.isdigit() or term in _FRAGMENTS:
            continue
        seen = bm25.has(term) and (known is None or known(term))
        weight = bm25.idf(term) if seen else bm25.unseen_idf
        total += weight
        if not seen:
            unseen += weight
    return unseen / max(total, 2 * bm25.unseen_idf) if total else 0.0


def tolerance(bm25: BM25Index, position: int, manifest: Mapping[str, Any]) -> float | None:
    """The largest unseen share among the tool's own Latin-script examples, each against
    the catalogue without it; None with fewer than ``MIN_EXAMPLES`` of them."""
    own = bm25.terms(position)
    shares = []
    for example in manifest.get("examples") or []:
        text = str(example)
        if not text.strip() or cjk_share(text) >= 0.5:
            continue
        counts = Counter(tokenize(text))

        def known(term: str, counts: Counter[str] = counts) -> bool:
            # Seen without this example: another tool has it, or this one elsewhere.
            return bm25.df(term) > 1 or own[term] > counts[term]

        shares.append(unseen_share(bm25, counts, known))
    return max(shares) if len(shares) >= MIN_EXAMPLES else None


def disclaimed(bm25: BM25Index, manifests: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Latin words of redirect-free "it cannot …" sentences that no tool's text has."""
    words: set[str] = set()
    for manifest in manifests:
        for sentence in negative_sentences(str(manifest.get("description") or "")):
            if _REDIRECT.search(sentence) or not _INCAPABLE.search(sentence):
                continue
            words.update(
                t
                for t in tokenize(sentence)
                if _LATIN_WORD.match(t) and t not in _NEGATION and not bm25.has(t)
            )
    return frozenset(words)


def penalty(
    terms: list[str], unseen: float, tool_tolerance: float | None, disclaims: frozenset[str]
) -> float:
    """How much a candidate's confidence drops for the query (before the CJK share)."""
    drop = 0.0
    if tool_tolerance is not None:
        drop += UNSEEN_WEIGHT * max(0.0, unseen - tool_tolerance - UNSEEN_SLACK)
    if disclaims and not disclaims.isdisjoint(terms):
        drop += DISCLAIMED_PENALTY
    return drop
