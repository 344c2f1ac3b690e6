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
message are written; :meth:`MemoryService.start_recall` hands it to the thread
at once for an owner known to have memories, not once the event loop first
runs the recall (a few ms later while the turn's claim keeps the loop busy).

What recall costs the turn is kept small (docs/agent-memory.md): an owner with no
memories costs one ``EXISTS`` query and no model run; the recalled memories are
marked used by the turn's learning, in the same statement as its inserts; and a
recall waits only for learning whose facts are not known yet.

:meth:`MemoryService.learn` runs after the turn has answered, in the
background, and (given ``after``: the answer sent) only once the user has the answer,
so its embedding never competes with the answer on its way out. The offline rules of
:mod:`agent.memory.extract` pick facts from the user's message and the turn's
successful calls, and with a model configured the model is asked too (one short
call, on the user's message alone, and only when the message says something about
the user). Facts whose vectors are in the per-process cache (text to vector: facts said before) are
written at once; the others are embedded unless the owner already has them.
One statement inserts the new facts and marks the known and the recalled ones
used.

What was said in one session is there for the next: a later recall for the
same owner sees facts still being written whose vectors are known (scored in
process beside the stored ones), and waits for learning whose facts are not
known yet (a model's extraction, or facts still to be embedded).

An anonymous caller has no memory: nothing is read or written without an owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections import OrderedDict
from collections.abc import Coroutine, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
import numpy as np
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
from agent.tasks import discard
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
# Learning waits for the answer to be sent at most this long (a client gone before it
# is sent never sees the signal).
LEARN_AFTER_TIMEOUT_S = 1.0
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


VECTOR_CACHE_SIZE = 1024  # texts: about 1.5 MB of vectors
OWNER_CACHE_SIZE = 100_000


@dataclass(frozen=True)
class Recalled:
    id: uuid.UUID
    text: str
    similarity: float
    score: float


class _Lru(Generic[K, V]):
    """A bounded mapping that forgets the least recently used key first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


@dataclass(eq=False)  # compared by identity (removed from its owner's list)
class _Pending:
    """Background work for one owner: ``writing`` is what it will insert (seen by recall
    meanwhile); ``blocking`` work is waited for by recall (its facts are not known yet)."""

    task: asyncio.Task[None]
    writing: tuple[store.NewMemory, ...] = ()
    blocking: bool = True


@dataclass(frozen=True)
class _Source:
    session_id: str
    message_id: uuid.UUID

    def memory(self, fact: Fact, vector: store.Vector) -> store.NewMemory:
        return store.NewMemory(fact.text, fact.kind, vector, self.session_id, self.message_id)


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
        self._pending: dict[str, list[_Pending]] = {}
        self._vectors: _Lru[str, store.Vector] = _Lru(VECTOR_CACHE_SIZE)
        # Owners known to have memories. Only "yes" is kept: another process may teach
        # an owner something, and a stale "yes" (all deleted since) costs one search.
        self._has_memories: _Lru[str, bool] = _Lru(OWNER_CACHE_SIZE)

    def start_recall(self, owner: str | None, message: str) -> asyncio.Task[list[Recalled]]:
        """:meth:`recall` as a task. For an owner known to have memories the message's
        model run starts now, in a worker thread, rather than when the task first runs:
        a turn starting its claim keeps the event loop busy for a few ms before then."""
        embedding = None
        if owner is not None and self._has_memories.get(owner):
            embedding = self._embed_soon(message)
        return asyncio.create_task(self.recall(owner, message, embedding=embedding))

    async def recall(
        self,
        owner: str | None,
        message: str,
        *,
        embedding: asyncio.Future[store.Vector] | None = None,
    ) -> list[Recalled]:
        """The owner's memories relevant to ``message``, best first. ``embedding``: the
        message's vector, being computed already (see :meth:`start_recall`)."""
        try:
            if owner is None:
                return []
            await self._settled(owner, blocking_only=True)
            writing = [m for p in self._pending.get(owner, ()) for m in p.writing]
            if not writing and not await self._has_any(owner):
                return []
            embedding = embedding or self._embed_soon(message)
            vector = await embedding
            async with self.sessionmaker() as db:
                await _read_only(db)
                nearest = await store.nearest(db, owner, vector, CANDIDATES)
        finally:
            discard(embedding)  # unused (no memories, or the reads failed), or done
        # Facts still being written are scored here (a stored twin is the same text,
        # which rank keeps once).
        nearest += [
            (store.Near(m.id, m.text), float(np.dot(vector, m.embedding)), 0.0) for m in writing
        ]
        return rank(message, nearest, self.min_similarity, self.top_k)

    async def _has_any(self, owner: str) -> bool:
        if self._has_memories.get(owner):
            return True
        async with self.sessionmaker() as db:
            await _read_only(db)
            found = await store.has_any(db, owner)
        if found:
            self._has_memories.put(owner, True)
        return found

    def _embed_soon(self, message: str) -> asyncio.Future[store.Vector]:
        """The message's vector, computed in a worker thread from now on. Alone: embedding
        the message's facts in the same run costs less CPU in all but puts that work
        inside the turn, which measured slower (docs/agent-memory.md); :meth:`learn`
        embeds them after the answer."""
        return asyncio.get_running_loop().run_in_executor(None, self.embedder.embed_one, message)

    def learn(
        self,
        owner: str | None,
        message: str,
        calls: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        session_id: str,
        message_id: uuid.UUID,
        used: Iterable[str] = (),
        after: asyncio.Event | None = None,
    ) -> None:
        """Keep what is worth keeping from a finished turn, in the background, and mark
        the memories it ``used`` (their texts) as used. With ``after``, the work starts
        once it is set (the answer sent), or after ``LEARN_AFTER_TIMEOUT_S``; a recall of
        the owner meanwhile still sees (or waits for) what it will write."""
        if owner is None:
            return
        calls = list(calls)
        source = _Source(session_id, message_id)
        touched = [store.content_hash(text) for text in used]
        if self.provider is not None and worth_asking(message):
            work = self._learn_with_model(owner, message, calls, source, touched)
            self._background(owner, _after(after, work))
            return
        facts = facts_of_turn(message, calls)
        ready, later = self._split(facts, source)
        if facts or touched:
            work = self._save(owner, ready, later, source, touched)
            self._background(owner, _after(after, work), writing=tuple(ready), blocking=bool(later))

    async def _learn_with_model(
        self,
        owner: str,
        message: str,
        calls: list[tuple[str, Mapping[str, Any]]],
        source: _Source,
        touched: list[str],
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
        ready, later = self._split(facts_of_turn(message, calls, extra), source)
        await self._save(owner, ready, later, source, touched)

    def _split(
        self, facts: list[Fact], source: _Source
    ) -> tuple[list[store.NewMemory], list[Fact]]:
        """``facts`` whose vectors are cached (ready to write), and the rest."""
        ready: list[store.NewMemory] = []
        later: list[Fact] = []
        for fact in facts:
            vector = self._vectors.get(fact.text)
            if vector is None:
                later.append(fact)
            else:
                ready.append(source.memory(fact, vector))
        return ready, later

    def _background(
        self,
        owner: str,
        work: Coroutine[Any, Any, None],
        *,
        writing: tuple[store.NewMemory, ...] = (),
        blocking: bool = True,
    ) -> None:
        pending = _Pending(asyncio.create_task(work), writing, blocking)
        self._pending.setdefault(owner, []).append(pending)
        pending.task.add_done_callback(lambda _: self._forget(owner, pending))

    def _forget(self, owner: str, done: _Pending) -> None:
        pending = self._pending.get(owner)
        if pending is not None:
            pending.remove(done)
            if not pending:
                self._pending.pop(owner, None)

    async def settled(self, owner: str) -> None:
        """Wait for ``owner``'s learning still under way (the owner's own list)."""
        await self._settled(owner, blocking_only=False)

    async def _settled(self, owner: str, *, blocking_only: bool) -> None:
        tasks = [p.task for p in self._pending.get(owner, ()) if p.blocking or not blocking_only]
        if tasks:
            await asyncio.wait(tasks)

    async def _save(
        self,
        owner: str,
        ready: list[store.NewMemory],
        later: list[Fact],
        source: _Source,
        touched: list[str],
    ) -> None:
        """Insert ``ready`` and what of ``later`` is new (embedded first); mark the rest of
        ``later`` and ``touched`` used. One statement, unless ``later`` needs a look-up."""
        try:
            memories, touch = list(ready), list(touched)
            if later:
                async with self.sessionmaker() as db:
                    await _read_only(db)
                    known = await store.known_hashes(
                        db, owner, [store.content_hash(f.text) for f in later]
                    )
                new = [f for f in later if store.content_hash(f.text) not in known]
                touch += known
                if new:
                    vectors = await anyio.to_thread.run_sync(
                        self.embedder.embed, [f.text for f in new]
                    )
                    for fact, vector in zip(new, vectors, strict=True):
                        self._vectors.put(fact.text, vector)
                        memories.append(source.memory(fact, vector))
            async with self.sessionmaker.begin() as db:
                await store.save(db, owner, memories, touch=touch)
            if memories:
                self._has_memories.put(owner, True)
        except (SQLAlchemyError, OSError) as exc:
            # Memory is a convenience: a lost fact never fails the turn it came from.
            log.warning("memory_save_failed", error=type(exc).__name__)

    async def aclose(self) -> None:
        """Wait for learning still under way (shutdown)."""
        pending = [p.task for tasks in self._pending.values() for p in tasks]
        if pending:
            await asyncio.wait(pending, timeout=5)


async def _read_only(db: AsyncSession) -> None:
    """One read on its own needs no transaction: autocommit spares the BEGIN and the
    ROLLBACK round trips around it (three statements become one)."""
    await db.connection(execution_options={"isolation_level": "AUTOCOMMIT"})


async def _after(signal: asyncio.Event | None, work: Coroutine[Any, Any, None]) -> None:
    """``work``, once ``signal`` is set (or after ``LEARN_AFTER_TIMEOUT_S``)."""
    try:
        if signal is not None and not signal.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), LEARN_AFTER_TIMEOUT_S)
    except BaseException:
        work.close()  # never started: nothing to warn about
        raise
    await work


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
