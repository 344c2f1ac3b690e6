"""The route cache: a query seen before (or one that means the same) skips ranking.

Keys are scoped by ``scope = hash(registry revision, the tools this caller may
use)``. The tool set already reflects the caller's roles and namespaces, so a
route cached for an admin can never be served to a caller with fewer rights,
and any registry change moves every caller to a fresh scope: old entries are
never read again and expire.

- Exact hit: the normalised query text → the cached route, one Redis GET and
  no embedding at all.
- Semantic hit: the query's embedding has cosine ≥ ``threshold`` with a cached
  query's. Cached vectors are appended to a Redis list per scope; each replica
  mirrors it in memory and, per lookup, fetches only the entries appended since
  (one LLEN, plus an LRANGE when something is new).

Only the tool choice is cached: arguments are always re-extracted from the new
query and re-validated, never replayed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from redis.asyncio import Redis

Vector = npt.NDArray[np.float32]
_SPACE = re.compile(r"\s+")


def normalise(query: str) -> str:
    return _SPACE.sub(" ", query.strip().lower()).strip(" .?!。？！")


def scope_of(revision: int, visible_tools: Collection[str]) -> str:
    digest = hashlib.sha256(f"{revision}|{'|'.join(sorted(visible_tools))}".encode())
    return digest.hexdigest()[:24]


@dataclass(frozen=True)
class CachedRoute:
    tool_id: str
    confidence: float
    match: str  # "exact" or "semantic"
    similarity: float = 1.0


@dataclass
class _Mirror:
    tool_ids: list[str]
    confidences: list[float]
    vectors: list[Vector]
    matrix: Vector | None = None

    def extend(self, raw_entries: list[bytes | str]) -> None:
        for raw in raw_entries:
            entry = json.loads(raw)
            self.tool_ids.append(entry["tool_id"])
            self.confidences.append(float(entry["confidence"]))
            packed = base64.b64decode(entry["vector"])
            self.vectors.append(np.frombuffer(packed, dtype=np.float16).astype(np.float32))
        if raw_entries:
            self.matrix = None

    def stacked(self) -> Vector:
        if self.matrix is None:
            self.matrix = np.stack(self.vectors)
        return self.matrix


class RouteCache:
    def __init__(
        self, redis: Redis, *, threshold: float = 0.92, ttl_s: int = 3600, max_entries: int = 2000
    ) -> None:
        self.redis = redis
        self.threshold = threshold
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._mirrors: dict[str, _Mirror] = {}

    @staticmethod
    def _keys(scope: str) -> tuple[str, str]:
        base = f"gateway:route:{scope}"
        return f"{base}:exact", f"{base}:vectors"

    async def get_exact(self, scope: str, query: str) -> CachedRoute | None:
        exact, _ = self._keys(scope)
        raw = await self.redis.hget(exact, normalise(query))
        if raw is None:
            return None
        data = json.loads(raw)
        return CachedRoute(data["tool_id"], data["confidence"], "exact")

    async def probe(self, scope: str, query: str) -> tuple[CachedRoute | None, int]:
        """The exact-text hit, if any, and how many vectors the scope holds: one round trip."""
        exact, vectors = self._keys(scope)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(exact, normalise(query))
            pipe.llen(vectors)
            raw, length = await pipe.execute()
        if raw is None:
            return None, int(length)
        data = json.loads(raw)
        return CachedRoute(data["tool_id"], data["confidence"], "exact"), int(length)

    async def get_similar(
        self, scope: str, vector: Vector, length: int | None = None
    ) -> CachedRoute | None:
        """``length``: the scope's vector count if already known (from ``probe``)."""
        mirror = await self._mirror(scope, length)
        if mirror is None or not mirror.tool_ids:
            return None
        similarities = mirror.stacked() @ vector
        best = int(np.argmax(similarities))
        similarity = float(similarities[best])
        if similarity < self.threshold:
            return None
        return CachedRoute(mirror.tool_ids[best], mirror.confidences[best], "semantic", similarity)

    async def put(
        self, scope: str, query: str, vector: Vector | None, tool_id: str, confidence: float
    ) -> None:
        exact, vectors = self._keys(scope)
        route = {"tool_id": tool_id, "confidence": confidence}
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(exact, normalise(query), json.dumps(route))
            if vector is not None:
                packed = base64.b64encode(vector.astype(np.float16).tobytes()).decode()
                pipe.rpush(vectors, json.dumps({**route, "vector": packed}))
            pipe.expire(exact, self.ttl_s)
            pipe.expire(vectors, self.ttl_s)
            pipe.llen(vectors)
            results = await pipe.execute()
        if results[-1] > self.max_entries:  # bounded: the scope starts afresh
            await self.redis.delete(exact, vectors)

    async def _mirror(self, scope: str, length: int | None) -> _Mirror | None:
        _, vectors = self._keys(scope)
        if length is None:
            length = int(await self.redis.llen(vectors))
        if length == 0:
            self._mirrors.pop(scope, None)
            return None
        mirror = self._mirrors.get(scope)
        if mirror is None or len(mirror.tool_ids) > length:  # new, or trimmed elsewhere
            if len(self._mirrors) > 256:  # scopes retire with registry revisions
                self._mirrors.clear()
            mirror = self._mirrors[scope] = _Mirror([], [], [])
        known = len(mirror.tool_ids)
        if known < length:
            mirror.extend(await self.redis.lrange(vectors, known, length - 1))
        return mirror
