"""Query rewriting: turn one query into what each search branch should run.

- ``none``: the query as written.
- ``expansion``: offline, pseudo-relevance feedback. The top BM25 hits of the
  query are read as if relevant: their most telling terms (RM3-style weights)
  join the BM25 query at ``EXPANSION_TERM_WEIGHT``, and their mean embedding
  moves the query vector (Rocchio, ``EXPANSION_VECTOR_WEIGHT``). With an LLM
  configured, the model writes the expansion terms instead; they join the BM25
  query at ``LLM_EXPANSION_WEIGHT`` and are embedded with the query.
- ``hyde``: the LLM writes a passage that would answer the query; the query
  vector is the mean of the query's and the passage's embeddings, and the
  passage's terms join the BM25 query at ``LLM_EXPANSION_WEIGHT``.
- ``multi_query``: the LLM rephrases the query; every phrasing is searched
  and all result lists are fused.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy.ext.asyncio import AsyncConnection

from reach_common.llm.types import LLMProvider, Message
from retriever.search import repository
from retriever.search.errors import LLMUnavailable
from retriever.search.repository import Bm25Query, ScoredChunk
from retriever.settings import Settings

EXPANSION_PROMPT = (
    "You expand search queries for a document retriever. Reply with up to {n} short "
    "keywords or phrases that documents answering the query are likely to contain: "
    "synonyms, related technical terms, spelled-out abbreviations. One per line, "
    "no numbering, nothing else."
)
HYDE_PROMPT = (
    "Write one short passage (three to five sentences) that answers the query the way a "
    "document in a technical collection would. Write only the passage. If you are unsure "
    "of the facts, still write a plausible passage: it is used for search, not shown."
)
MULTI_QUERY_PROMPT = (
    "Rewrite the search query in {n} different ways that keep its meaning but vary the "
    "wording (synonyms, a more specific and a more general form). One per line, no "
    "numbering, nothing else."
)
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


@dataclass(frozen=True)
class VectorQuery:
    """A query vector: the normalised mean of the texts' embeddings, plus a feedback pull."""

    texts: tuple[str, ...]
    feedback: npt.NDArray[np.float32] | None = None
    feedback_weight: float = 0.0


@dataclass
class QueryPlan:
    """What to run per branch. The first query of each branch is the primary one."""

    bm25: list[Bm25Query]
    vectors: list[VectorQuery]
    details: dict[str, Any] = field(default_factory=dict)


Bm25Runner = Callable[[Bm25Query, int], Awaitable[list[ScoredChunk]]]
Connector = Callable[[], AbstractAsyncContextManager[AsyncConnection]]


def lines_of(text: str, limit: int) -> list[str]:
    """An LLM's one-per-line answer as clean, distinct lines."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        cleaned = _LIST_MARKER.sub("", line).strip().strip('"').strip()
        if cleaned and cleaned.lower() not in {s.lower() for s in seen}:
            seen[cleaned] = None
    return list(seen)[:limit]


class Rewriter:
    def __init__(
        self,
        settings: Settings,
        provider: LLMProvider | None,
        connect: Connector,
    ) -> None:
        self.settings = settings
        self.provider = provider
        self.connect = connect

    async def plan(self, query: str, rewrite: str, run_bm25: Bm25Runner) -> QueryPlan:
        plain = Bm25Query(((query, 1.0),))
        if rewrite == "none":
            return QueryPlan([plain], [VectorQuery((query,))])
        if rewrite == "expansion":
            if self.provider is None:
                return await self._feedback_expansion(query, plain, run_bm25)
            return await self._llm_expansion(query)
        if self.provider is None:
            raise LLMUnavailable(rewrite)
        if rewrite == "hyde":
            return await self._hyde(query)
        return await self._multi_query(query)

    async def _ask(self, system: str, query: str) -> str:
        assert self.provider is not None
        completion = await self.provider.complete(
            [Message("user", query)],
            system=system,
            max_tokens=self.settings.rewrite_max_tokens,
        )
        return completion.text

    async def _feedback_expansion(
        self, query: str, plain: Bm25Query, run_bm25: Bm25Runner
    ) -> QueryPlan:
        settings = self.settings
        feedback = await run_bm25(plain, settings.expansion_feedback_chunks)
        async with self.connect() as conn:
            terms = await repository.feedback_terms(
                conn, feedback, exclude=plain, limit=settings.expansion_terms
            )
            centroid = await repository.mean_embedding(conn, [f.chunk_id for f in feedback])
        top = max((t.weight for t in terms), default=1.0) or 1.0
        expanded = Bm25Query(
            plain.texts,
            tuple((t.term_hash, settings.expansion_term_weight * t.weight / top) for t in terms),
        )
        return QueryPlan(
            [expanded],
            [VectorQuery((query,), centroid, settings.expansion_vector_weight)],
            {
                "method": "pseudo_relevance_feedback",
                "feedback_chunks": [f.chunk_id for f in feedback],
                "expansion_terms": [t.lexeme for t in terms],
            },
        )

    async def _llm_expansion(self, query: str) -> QueryPlan:
        prompt = EXPANSION_PROMPT.format(n=self.settings.expansion_terms)
        terms = lines_of(await self._ask(prompt, query), self.settings.expansion_terms)
        joined = "; ".join(terms)
        texts = ((query, 1.0), (joined, self.settings.llm_expansion_weight)) if terms else ()
        return QueryPlan(
            [Bm25Query(texts or ((query, 1.0),))],
            [VectorQuery((f"{query}\n{joined}" if terms else query,))],
            {"method": "llm", "expansion_terms": terms},
        )

    async def _hyde(self, query: str) -> QueryPlan:
        passage = (await self._ask(HYDE_PROMPT, query)).strip()
        if not passage:
            return QueryPlan([Bm25Query(((query, 1.0),))], [VectorQuery((query,))], {})
        return QueryPlan(
            [Bm25Query(((query, 1.0), (passage, self.settings.llm_expansion_weight)))],
            [VectorQuery((query, passage))],
            {"method": "llm", "hypothetical_passage": passage},
        )

    async def _multi_query(self, query: str) -> QueryPlan:
        count = self.settings.multi_query_count
        variants = [
            v
            for v in lines_of(await self._ask(MULTI_QUERY_PROMPT.format(n=count), query), count)
            if v.lower() != query.lower()
        ]
        queries = [query, *variants]
        return QueryPlan(
            [Bm25Query(((q, 1.0),)) for q in queries],
            [VectorQuery((q,)) for q in queries],
            {"method": "llm", "queries": queries},
        )
