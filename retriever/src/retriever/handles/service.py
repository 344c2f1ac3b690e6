"""Store, search and expire tool outputs kept by handle.

The gateway stores a tool output over its budget here for the caller it ran for, and
hands that caller the handle. Rendering and indexing run off the event loop's thread;
the write is one transaction. A background sweep deletes expired handles; reads never
wait for it, they skip anything past ``expires_at``.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from opentelemetry import trace
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from retriever.handles import render, repository
from retriever.handles.errors import HandleNotFound, InvalidHandleInput, TooManyHandles
from retriever.handles.repository import HandleHit, StoredHandle

log = structlog.get_logger(__name__)

HANDLE_PREFIX = "out_"
# What :meth:`HandleStore.store` hands out; anything else cannot name a stored output.
HANDLE_PATTERN = re.compile(r"out_[0-9a-f]{32}")


@dataclass(frozen=True)
class HandlePolicy:
    ttl_s: int
    max_ttl_s: int
    chunk_chars: int
    max_per_owner: int
    bm25_k1: float
    bm25_b: float


def _prepared(output: Any, chunk_chars: int) -> tuple[list[str], int]:
    encoded = json.dumps(output, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        size = len(encoded.encode())
    except UnicodeEncodeError:
        raise InvalidHandleInput("the output contains unpaired surrogate characters") from None
    return render.chunks(output, chunk_chars), size


def _check_handle(handle: str) -> None:
    """A string that is not a handle names no stored output (and may not reach SQL: a NUL
    or an unpaired surrogate cannot be sent to Postgres)."""
    if not HANDLE_PATTERN.fullmatch(handle):
        raise HandleNotFound(handle)


class HandleStore:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        policy: HandlePolicy,
        tracer: trace.Tracer | None = None,
    ) -> None:
        self._sessionmaker = sessionmaker
        self.policy = policy
        self._tracer = tracer or trace.get_tracer("retriever")

    async def store(
        self,
        owner: str,
        output: Any,
        *,
        tool_id: str | None = None,
        ttl_s: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> StoredHandle:
        """Index ``output`` as a new handle owned by ``owner``, expiring after ``ttl_s``
        (capped by HANDLE_MAX_TTL_S)."""
        ttl = min(ttl_s or self.policy.ttl_s, self.policy.max_ttl_s)
        with self._tracer.start_as_current_span("retriever.handle_store") as span:
            chunks, size = await asyncio.to_thread(_prepared, output, self.policy.chunk_chars)
            span.set_attributes({"retriever.chunks": len(chunks), "retriever.bytes": size})
            handle = HANDLE_PREFIX + secrets.token_hex(16)
            async with self._sessionmaker() as session, session.begin():
                if await repository.live_count(session, owner) >= self.policy.max_per_owner:
                    raise TooManyHandles(self.policy.max_per_owner)
                stored = await repository.insert(
                    session,
                    handle=handle,
                    owner=owner,
                    tool_id=tool_id,
                    total_bytes=size,
                    ttl_s=ttl,
                    metadata=metadata or {},
                    chunks=chunks,
                )
        log.info("handle_stored", tool_id=tool_id, chunks=len(chunks), bytes=size)
        return stored

    async def get(self, owner: str, handle: str) -> StoredHandle:
        _check_handle(handle)
        async with self._sessionmaker() as session:
            stored = await repository.find(session, handle, owner)
        if stored is None:
            raise HandleNotFound(handle)
        return stored

    async def search(
        self, owner: str, handle: str, query: str, top_k: int
    ) -> tuple[StoredHandle, Sequence[HandleHit]]:
        """The chunks of ``owner``'s ``handle`` that best match ``query`` (BM25)."""
        _check_handle(handle)
        with self._tracer.start_as_current_span("retriever.handle_search") as span:
            async with self._sessionmaker() as session:
                stored = await repository.find(session, handle, owner)
                if stored is None:
                    raise HandleNotFound(handle)
                conn = await session.connection()
                hits = await repository.search(
                    conn,
                    stored,
                    query,
                    limit=top_k,
                    k1=self.policy.bm25_k1,
                    b=self.policy.bm25_b,
                )
            span.set_attribute("retriever.hits", len(hits))
        return stored, hits

    async def delete(self, owner: str, handle: str) -> None:
        _check_handle(handle)
        async with self._sessionmaker() as session, session.begin():
            if not await repository.delete(session, handle, owner):
                raise HandleNotFound(handle)

    async def sweep(self) -> int:
        """Delete every expired handle now; how many went."""
        async with self._sessionmaker() as session, session.begin():
            deleted = await repository.delete_expired(session)
        if deleted:
            log.info("handles_expired", deleted=deleted)
        return deleted

    async def sweep_forever(self, interval_s: float) -> None:
        """The background sweep (one per retriever process; deletes are idempotent)."""
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.sweep()
            except Exception:  # a task boundary: log, keep sweeping
                log.warning("handle_sweep_failed", exc_info=True)
