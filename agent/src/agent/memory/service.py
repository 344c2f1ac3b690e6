"""Recall before a turn, learn after it.

:meth:`MemoryService.recall` embeds the new message and reads the owner's
nearest memories (pgvector cosine distance), keeps those at least
``MEMORY_MIN_SIMILARITY`` relevant, weights them by recency (a memory last
used 30 days ago counts 15 % less than one used today) and returns the best
``MEMORY_TOP_K``, each text once. Relevance is the cosine similarity plus a
small bonus for the memory's words that the message repeats: MiniLM puts
"how is my usual product selling?" only 0.19 from "My usual SKU is
SKU2024003" (and 0.10 from an unrelated "I want answers in German"), and the
shared "usual" is what a person would go by too. The embedding runs in a
worker thread, so a turn starts recalling while its session lock and user
message are written; marking the recalled memories used happens afterwards.

:meth:`MemoryService.learn` runs after the turn has answered, in the
background: the offline rules of :mod:`agent.memory.extract` pick facts from
the user's message and the turn's successful calls, and with a model
configured the model is asked too (one short call, on the user's message
alone, and only when the message says something about the user); only facts
the owner does not already have are embedded and inserted (known ones are
marked used).
A later recall for the same owner first waits for that owner's pending
learning, so what was said in one session is there for the next.

An anonymous caller has no memory: nothing is read or written without an owner.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import structlog
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agent.memory import store
from agent.memory.extract import (
    EXTRACTION_SYSTEM,
    Fact,
    facts_of_turn,
    from_model_answer,
    worth_asking,
)
from reach_common.embeddings import Embedder
from reach_common.llm.errors import LLMError
from reach_common.llm.types import LLMProvider, Message

log = structlog.get_logger(__name__)

_WORD = re.compile(r"[^\W\d_][\w'-]*|[\u3400-\u9fff]{2}", re.UNICODE)
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "with",
        "you",
        "your",
    ]
)
LEXICAL_BONUS = 0.2
RECENCY_HALF_LIFE_DAYS = 30.0
RECENCY_WEIGHT = 0.3
CANDIDATES = 20


@dataclass(frozen=True)
class Recalled:
    id: uuid.UUID
    text: str
    similarity: float
    score: float


class MemoryService:
    def __init__(
        self,
        embedder: Embedder,
        sessionmaker: async_sessionmaker[AsyncSession],
        *,
        top_k: int,
        min_similarity: float,
        provider: LLMProvider | None = None,
    ) -> None:
        self.embedder = embedder
        self.provider = provider
        self.sessionmaker = sessionmaker
        self.top_k = top_k
        self.min_similarity = min_similarity
        self._learning: dict[str, set[asyncio.Task[None]]] = {}

    async def recall(self, owner: str | None, message: str) -> list[Recalled]:
        if owner is None:
            return []
        await self.settled(owner)
        vector = await anyio.to_thread.run_sync(self.embedder.embed_one, message)
        async with self.sessionmaker() as db:
            nearest = await store.nearest(db, owner, vector, CANDIDATES)
        chosen = rank(message, nearest, self.min_similarity, self.top_k)
        if chosen:  # "last used" moves off the turn's path
            hashes = [store.content_hash(m.text) for m in chosen]
            self._background(owner, self._touch(owner, hashes))
        return chosen

    def learn(
        self,
        owner: str | None,
        message: str,
        calls: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        session_id: str,
        message_id: uuid.UUID,
    ) -> None:
        """Keep what is worth keeping from a finished turn, in the background."""
        if owner is None:
            return
        calls = list(calls)
        if self.provider is not None and worth_asking(message):
            work = self._learn_with_model(owner, message, calls, session_id, message_id)
            self._background(owner, work)
            return
        facts = facts_of_turn(message, calls)
        if facts:
            self._background(owner, self._save(owner, facts, session_id, message_id))

    async def _learn_with_model(
        self,
        owner: str,
        message: str,
        calls: list[tuple[str, Mapping[str, Any]]],
        session_id: str,
        message_id: uuid.UUID,
    ) -> None:
        assert self.provider is not None
        extra: list[Fact] = []
        try:
            answer = await self.provider.complete(
                [Message(role="user", content=message)], system=EXTRACTION_SYSTEM, max_tokens=200
            )
            extra = from_model_answer(answer.text)
        except LLMError as exc:  # the rules still apply
            log.warning("memory_extraction_failed", reason=exc.reason)
        facts = facts_of_turn(message, calls, extra)
        if facts:
            await self._save(owner, facts, session_id, message_id)

    def _background(self, owner: str, work: Coroutine[Any, Any, None]) -> None:
        pending = self._learning.setdefault(owner, set())
        task = asyncio.create_task(work)
        pending.add(task)
        task.add_done_callback(lambda done: self._forget(owner, done))

    async def _touch(self, owner: str, hashes: list[str]) -> None:
        try:
            async with self.sessionmaker.begin() as db:
                await store.touch(db, owner, hashes)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("memory_touch_failed", error=type(exc).__name__)

    def _forget(self, owner: str, task: asyncio.Task[None]) -> None:
        pending = self._learning.get(owner)
        if pending is not None:
            pending.discard(task)
            if not pending:
                self._learning.pop(owner, None)

    async def settled(self, owner: str) -> None:
        """Wait for ``owner``'s learning still under way (a recall, or the owner's own list)."""
        pending = list(self._learning.get(owner, ()))
        if pending:
            await asyncio.wait(pending)

    async def _save(
        self, owner: str, facts: list[Fact], session_id: str, message_id: uuid.UUID
    ) -> None:
        try:
            async with self.sessionmaker() as db:
                known = await store.known_hashes(
                    db, owner, [store.content_hash(f.text) for f in facts]
                )
            new = [f for f in facts if store.content_hash(f.text) not in known]
            vectors: list[store.Vector] = (
                list(await anyio.to_thread.run_sync(self.embedder.embed, [f.text for f in new]))
                if new
                else []
            )
            async with self.sessionmaker.begin() as db:
                await store.touch(db, owner, list(known))
                await store.save(
                    db,
                    owner,
                    [
                        store.NewMemory(f.text, f.kind, vector, session_id, message_id)
                        for f, vector in zip(new, vectors, strict=True)
                    ],
                )
        except (SQLAlchemyError, OSError) as exc:
            # Memory is a convenience: a lost fact never fails the turn it came from.
            log.warning("memory_save_failed", error=type(exc).__name__)

    async def aclose(self) -> None:
        """Wait for learning still under way (shutdown)."""
        pending = [task for tasks in self._learning.values() for task in tasks]
        if pending:
            await asyncio.wait(pending, timeout=5)


def words(text: str) -> set[str]:
    """Content words (and CJK character pairs) of ``text``, lower-cased."""
    found = {w.casefold() for w in _WORD.findall(text)}
    return found - _STOPWORDS


def relevance(message_words: set[str], text: str, similarity: float) -> float:
    mine = words(text)
    shared = len(mine & message_words) / len(mine) if mine else 0.0
    return similarity + LEXICAL_BONUS * shared


def rank(
    message: str,
    nearest: Iterable[tuple[Any, float, float]],
    min_relevance: float,
    top_k: int,
) -> list[Recalled]:
    """The best ``top_k`` of ``(memory, similarity, age_days)``: relevant enough to
    ``message``, recency-weighted, each text once."""
    asked = words(message)
    scored: list[Recalled] = []
    for memory, cosine, age_days in nearest:
        similarity = relevance(asked, memory.text, cosine)
        if similarity < min_relevance:
            continue
        recency = 0.5 ** (max(age_days, 0.0) / RECENCY_HALF_LIFE_DAYS)
        score = similarity * (1.0 - RECENCY_WEIGHT + RECENCY_WEIGHT * recency)
        scored.append(Recalled(memory.id, memory.text, similarity, score))
    scored.sort(key=lambda r: r.score, reverse=True)
    chosen: list[Recalled] = []
    for candidate in scored:
        key = candidate.text.casefold()
        if any(key in c.text.casefold() or c.text.casefold() in key for c in chosen):
            continue
        chosen.append(candidate)
        if len(chosen) == top_k:
            break
    return chosen
