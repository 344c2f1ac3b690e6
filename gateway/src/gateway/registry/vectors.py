"""Tool texts' vectors kept in Postgres, so a gateway that starts embeds only texts no
gateway has embedded before (the routing index's texts, and each tool's own vector).

Every start builds the index from every tool's texts (``index_texts``): about 200 texts
and 8 s of CPU for the ten shipped tools, minutes at 10,000 tools, and all of it
repeated on each replica and each restart. A vector is a pure function of the text and
the model, so it is kept in ``gateway.text_vector`` under the model's identity
(``Embedder.identity``: the model, int8 or float products, the truncation) and the
text's SHA-256; only the vector is kept, never the text. Vectors are stored as raw
little-endian float32 (1,536 bytes), which reads back without parsing: they are never
searched in SQL.

What :meth:`StoredVectors.fill` does for a set of texts: the texts the process already
holds (``VectorCache``) cost nothing; the others are read here in one query per 5,000;
the model runs only for those still missing, and their vectors are written here for the
next start (a row two replicas both write is the same vector; a damaged one is replaced).
At a start (``start=True``) the rows read are marked used (at most once a day) and rows
unused for ``RETENTION_DAYS`` are deleted, so edited and deleted tools' texts do not pile
up. The store is an optimisation: if Postgres fails here the model runs and the index is
built all the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from datetime import datetime

import numpy as np
import structlog
from sqlalchemy import DateTime, LargeBinary, Text, delete, func, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from gateway.db import Base
from gateway.registry.repository import in_chunks
from reach_common.embeddings import VectorCache, Vectors

log = structlog.get_logger(__name__)

RETENTION_DAYS = 30
WRITE_CHUNK = 1000  # rows per INSERT (three bind parameters each)
_FLOAT32 = np.dtype("<f4")


class TextVector(Base):
    __tablename__ = "text_vector"

    model: Mapped[str] = mapped_column(Text, primary_key=True)
    digest: Mapped[bytes] = mapped_column(LargeBinary, primary_key=True)  # SHA-256 of the text
    embedding: Mapped[bytes] = mapped_column(LargeBinary)  # float32, little-endian
    used_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class StoredVectors:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], cache: VectorCache) -> None:
        self._sessionmaker = sessionmaker
        self._cache = cache
        self._model = cache.embedder.identity
        self._width = cache.embedder.dimensions * _FLOAT32.itemsize

    async def fill(self, texts: Sequence[str], *, start: bool = False) -> dict[bytes, Vectors]:
        """Make every one of ``texts`` held by the cache: read from the store, else
        embedded (off the loop) and stored; returns the vectors of those the cache did not
        hold. ``start``: this is a full build, so mark what was read as used and delete
        what has gone unused."""
        missing = self._cache.missing(texts)
        if not missing:
            return {}
        found: dict[bytes, Vectors] = {}
        try:
            found = await self._read(list(missing))
        except (SQLAlchemyError, OSError) as exc:
            log.warning("text_vectors_unreadable", error=type(exc).__name__)
            start = False
        left = {key: t for key, t in missing.items() if key not in found}
        fresh: dict[bytes, Vectors] = {}
        if left:
            vectors = await asyncio.to_thread(self._cache.embedder.embed, list(left.values()))
            fresh = dict(zip(left, vectors, strict=True))
        # One addition: a cache that fills up empties itself first, and must not drop
        # what was read before the model ran (the caller is about to look it all up).
        known = {**found, **fresh}
        self._cache.add(known)
        if fresh:
            try:
                await self._write(fresh.items())
            except (SQLAlchemyError, OSError) as exc:
                log.warning("text_vectors_unwritten", error=type(exc).__name__)
        if start:
            try:
                await self._tidy(list(found))
            except (SQLAlchemyError, OSError) as exc:
                log.warning("text_vectors_untidied", error=type(exc).__name__)
            log.info("text_vectors_read", texts=len(missing), stored=len(found), embedded=len(left))
        return known

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Like :meth:`VectorCache.embed` (an ``(n, 384)`` array in input order), the
        model running only for texts neither held nor stored."""
        known = await self.fill(texts)
        keys = [VectorCache.key(t) for t in texts]
        held = {k: t for k, t in zip(keys, texts, strict=True) if k not in known}
        if held:  # look-ups, off the loop all the same: the cache may have emptied since
            vectors = await asyncio.to_thread(self._cache.embed, list(held.values()))
            known.update(zip(held, vectors, strict=True))
        return np.stack([known[k] for k in keys])

    async def _read(self, keys: list[bytes]) -> dict[bytes, Vectors]:
        found: dict[bytes, Vectors] = {}
        async with self._sessionmaker() as db:
            for chunk in in_chunks(keys):
                rows = await db.execute(
                    select(TextVector.digest, TextVector.embedding).where(
                        TextVector.model == self._model, TextVector.digest.in_(chunk)
                    )
                )
                for digest, raw in rows:
                    if len(raw) == self._width:  # anything else was not written by us
                        found[digest] = np.frombuffer(raw, dtype=_FLOAT32).astype(np.float32)
        return found

    async def _write(self, vectors: Iterable[tuple[bytes, Vectors]]) -> None:
        rows = [
            {"model": self._model, "digest": key, "embedding": v.astype(_FLOAT32).tobytes()}
            for key, v in vectors
        ]
        async with self._sessionmaker.begin() as db:
            for chunk in in_chunks(rows, WRITE_CHUNK):
                statement = insert(TextVector).values(chunk)
                # A row another replica wrote meanwhile is the same vector; a damaged
                # one (not ``_width`` bytes, skipped by ``_read``) is written again.
                await db.execute(
                    statement.on_conflict_do_update(
                        index_elements=[TextVector.model, TextVector.digest],
                        set_={"embedding": statement.excluded.embedding},
                        where=func.length(TextVector.embedding) != self._width,
                    )
                )

    async def _tidy(self, read: list[bytes]) -> None:
        day_ago = func.now() - text("interval '1 day'")
        async with self._sessionmaker.begin() as db:
            for chunk in in_chunks(read):
                await db.execute(
                    update(TextVector)
                    .where(
                        TextVector.model == self._model,
                        TextVector.digest.in_(chunk),
                        TextVector.used_at < day_ago,
                    )
                    .values(used_at=func.now())
                )
            await db.execute(
                delete(TextVector).where(
                    TextVector.used_at < func.now() - text(f"interval '{RETENTION_DAYS} days'")
                )
            )
