"""The route cache: a query shaped like one routed before skips the fine stage.

What is cached is a *route shape*, never a call: the query with its values
abstracted (``abstract``: identifiers, numbers, dates and months, quoted
strings, file names become typed placeholders), mapped to the tool chosen for
it. "SKU2024001 还有多少库存" and "SKU2024003 还有多少库存" share the key
``<id:sku> 还有多少库存``; the arguments are always filled again from the
current query and re-validated, never replayed (none are stored).

Keys are scoped by ``scope = hash(registry revision, the tools this caller may
use)``. The tool set already reflects the caller's roles and namespaces, so a
route cached for an admin can never be served to a caller with fewer rights,
and any registry change moves every caller to a fresh scope: old entries are
never read again and expire.

- Exact hit: the abstracted, normalised query → the cached route, one Redis GET.
- Semantic hit: the abstracted query's embedding has cosine ≥ ``threshold``
  with a cached one's. Cached vectors are appended to a Redis list per scope;
  each replica mirrors it in memory and fetches only the entries appended since,
  in the same round trip as the exact lookup (``probe``).

The cache only proposes: the router serves a hit only when the cached tool is
still among the coarse stage's top candidates for the current query, and
``drop``s it otherwise. What gets cached at all (a confident route) is the
router's call.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from reach_common.outages import redis_optional

Vector = npt.NDArray[np.float32]
_SPACE = re.compile(r"\s+")

# Values a query carries, most specific first; each becomes a typed placeholder.
# Boundaries are ASCII alphanumerics, not \b: CJK characters count as \w, and
# "SKU2024001还有多少" must still yield the identifier.
_EDGE_L, _EDGE_R = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"
_MONTHS = (
    r"january|february|march|april|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
)
_VALUES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\"[^\"]*\"|'[^']*'|“[^”]*”|‘[^’]*’|「[^」]*」|『[^』]*』"), "<str>"),
    (
        re.compile(
            r"(?<![\w.-])[\w.-]*\w\.(?:csv|tsv|json|jsonl|xlsx?|docx?|pdf|txt|md|html?"
            r"|xml|ya?ml|zip|png|jpe?g|pptx?)" + _EDGE_R
        ),
        "<file>",
    ),
    (
        re.compile(
            _EDGE_L + r"(?:\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?"  # 2024-07-15, 2024/07
            r"|\d{4}\s*年\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?"  # 2024年7月(15日)
            r"|\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?"  # 7月(15号)
            r"|(?:" + _MONTHS + r")\.?(?:\s+\d{1,2}(?:st|nd|rd|th)?)?(?:,?\s+\d{4})?"
            r"|may\s+\d{1,4})" + _EDGE_R  # "may" alone is a verb
        ),
        "<date>",
    ),
    (
        re.compile(
            # from the start of a run of its characters only: a long run is read once
            r"(?<![A-Za-z0-9_-])(?=[a-z0-9_-]*[a-z])(?=[a-z0-9_-]*\d)([a-z]+)?[a-z0-9_-]+" + _EDGE_R
        ),
        "",
    ),
    (re.compile(_EDGE_L + r"\d+(?:[.,]\d+)*" + _EDGE_R), "<num>"),
]
_ID = 3  # the identifier pattern's index: its placeholder keeps the letter prefix
_PLACEHOLDER = re.compile(r"(?<!\s)\s*(<[a-z:]+>)\s*")  # a run of spaces entered once


def normalise(query: str) -> str:
    return _SPACE.sub(" ", query.strip().lower()).strip(" .?!。？！")


def _identifier(match: re.Match[str]) -> str:
    """``sku2024001`` → ``<id:sku>``; a bare code (``20240715a``) → ``<id>``. The
    prefix stays so an order number and a SKU do not share a route shape."""
    prefix = (match.group(1) or "").strip("_-")
    return f"<id:{prefix}>" if prefix else "<id>"


def abstract(query: str) -> str:
    """The normalised query with its values replaced by typed placeholders: the key and
    the text embedded for the cache, so routes generalise over values and nothing
    value-specific (arguments) can be replayed."""
    text = normalise(query)
    for position, (pattern, placeholder) in enumerate(_VALUES):
        text = pattern.sub(_identifier if position == _ID else placeholder, text)
    return _SPACE.sub(" ", _PLACEHOLDER.sub(r" \1 ", text)).strip()


def scope_of(revision: int, visible_tools: Collection[str]) -> str:
    digest = hashlib.sha256(f"{revision}|{'|'.join(sorted(visible_tools))}".encode())
    return digest.hexdigest()[:24]


@dataclass(frozen=True)
class CachedRoute:
    tool_id: str
    confidence: float  # the route's confidence when it was cached
    match: str  # "exact" or "semantic"
    similarity: float = 1.0
    via: str = ""  # how the route was decided then: semantic_match, llm_rerank, context
    key: str = ""  # the abstracted query it was cached under
    position: int | None = None  # a semantic hit's entry in the scope's vector list


_DROPPED = ""  # a dropped vector entry's tool id: never matches


@dataclass
class _Mirror:
    tool_ids: list[str]
    confidences: list[float]
    vias: list[str]
    keys: list[str]
    vectors: list[Vector]
    matrix: Vector | None = None

    def extend(self, raw_entries: list[bytes | str]) -> None:
        for raw in raw_entries:
            entry = json.loads(raw)
            self.tool_ids.append(entry["tool_id"])
            self.confidences.append(float(entry["confidence"]))
            self.vias.append(entry.get("via", ""))
            self.keys.append(entry.get("key", ""))
            packed = base64.b64decode(entry["vector"])
            self.vectors.append(np.frombuffer(packed, dtype=np.float16).astype(np.float32))
        if raw_entries:
            self.matrix = None

    def stacked(self) -> Vector:
        if self.matrix is None:
            self.matrix = np.stack(self.vectors)
        return self.matrix

    def forget(self, position: int) -> None:
        if position < len(self.tool_ids):
            self.tool_ids[position] = _DROPPED


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

    @staticmethod
    def _exact_route(key: str, raw: str | bytes) -> CachedRoute:
        data = json.loads(raw)
        return CachedRoute(
            data["tool_id"], data["confidence"], "exact", via=data.get("via", ""), key=key
        )

    @redis_optional(None)
    async def get_exact(self, scope: str, query: str) -> CachedRoute | None:
        exact, _ = self._keys(scope)
        key = abstract(query)
        raw = await self.redis.hget(exact, key)
        return None if raw is None else self._exact_route(key, raw)

    @redis_optional((None, 0))
    async def probe(
        self, scope: str, query: str, *, similar: bool = True
    ) -> tuple[CachedRoute | None, int]:
        """The exact hit on the abstracted query, if any, and how many vectors the scope
        holds: one round trip. With ``similar`` (a semantic lookup may follow), the vectors
        appended since this replica last looked come in the same round trip, so
        ``get_similar`` then needs none."""
        exact, vectors = self._keys(scope)
        key = abstract(query)
        mirror = self._mirrors.get(scope) if similar else None
        start = 0 if mirror is None else len(mirror.tool_ids)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(exact, key)
            pipe.llen(vectors)
            if similar:
                pipe.lrange(vectors, start, -1)
            raw, length, *fetched = await pipe.execute()
        if similar:
            self._sync(scope, int(length), start, fetched[0])
        return (None if raw is None else self._exact_route(key, raw)), int(length)

    @redis_optional(None)
    async def get_similar(
        self, scope: str, vector: Vector, length: int | None = None
    ) -> CachedRoute | None:
        """``vector``: the embedding of ``abstract(query)``. ``length``: the scope's
        vector count if already known (from ``probe``)."""
        mirror = await self._mirror(scope, length)
        if mirror is None or not mirror.tool_ids:
            return None
        similarities = mirror.stacked() @ vector
        for position, tool_id in enumerate(mirror.tool_ids):
            if tool_id == _DROPPED:
                similarities[position] = -1.0
        best = int(np.argmax(similarities))
        similarity = float(similarities[best])
        if similarity < self.threshold:
            return None
        return CachedRoute(
            mirror.tool_ids[best],
            mirror.confidences[best],
            "semantic",
            similarity,
            via=mirror.vias[best],
            key=mirror.keys[best],
            position=best,
        )

    @redis_optional(None)
    async def put(
        self,
        scope: str,
        query: str,
        vector: Vector | None,
        tool_id: str,
        confidence: float,
        via: str = "",
    ) -> None:
        """Cache ``tool_id`` for ``query``'s shape. ``vector``: the embedding of
        ``abstract(query)`` (None: exact hits only). No arguments are stored."""
        exact, vectors = self._keys(scope)
        key = abstract(query)
        route = {"tool_id": tool_id, "confidence": confidence, "via": via}
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(exact, key, json.dumps(route))
            if vector is not None:
                packed = base64.b64encode(vector.astype(np.float16).tobytes()).decode()
                pipe.rpush(vectors, json.dumps({**route, "key": key, "vector": packed}))
            pipe.expire(exact, self.ttl_s)
            pipe.expire(vectors, self.ttl_s)
            pipe.llen(vectors)
            results = await pipe.execute()
        if results[-1] > self.max_entries:  # bounded: the scope starts afresh
            await self.redis.delete(exact, vectors)

    @redis_optional(None)
    async def drop(self, scope: str, route: CachedRoute) -> None:
        """Forget ``route`` (it proved wrong for a query of its shape): its exact entry
        and its vector entries (the hit's, and any under the same key), here and for
        replicas loading them later. Replicas that already mirror an entry may still
        propose it; the router's candidate check turns it down there too."""
        exact, vectors = self._keys(scope)
        raw = await self.redis.hget(exact, route.key)
        if raw is not None and json.loads(raw)["tool_id"] == route.tool_id:
            await self.redis.hdel(exact, route.key)  # unless re-cached meanwhile
        mirror = await self._mirror(scope, None)
        if mirror is None:
            return
        positions = {
            i
            for i, (key, tool_id) in enumerate(zip(mirror.keys, mirror.tool_ids, strict=True))
            if tool_id == route.tool_id and (key == route.key or i == route.position)
        }
        for position in sorted(positions):
            mirror.forget(position)
            entry = await self.redis.lindex(vectors, position)
            if entry is None or json.loads(entry)["tool_id"] != route.tool_id:
                continue  # the list was reset meanwhile: not ours at that position
            tombstone = {**json.loads(entry), "tool_id": _DROPPED}
            with contextlib.suppress(ResponseError):  # trimmed between read and write
                await self.redis.lset(vectors, position, json.dumps(tombstone))

    async def _mirror(self, scope: str, length: int | None) -> _Mirror | None:
        _, vectors = self._keys(scope)
        if length is None:
            length = int(await self.redis.llen(vectors))
        mirror = self._sync(scope, length)
        if mirror is not None and len(mirror.tool_ids) < length:
            start = len(mirror.tool_ids)
            self._sync(scope, length, start, await self.redis.lrange(vectors, start, length - 1))
        return self._mirrors.get(scope)

    def _sync(
        self, scope: str, length: int, start: int = 0, entries: list[bytes | str] | None = None
    ) -> _Mirror | None:
        """This replica's mirror of the scope's vector list (``length`` long in Redis), with
        ``entries`` (the list from position ``start``) appended where they are new to it."""
        if length == 0:
            self._mirrors.pop(scope, None)
            return None
        mirror = self._mirrors.get(scope)
        if mirror is None or len(mirror.tool_ids) > length:  # new, or trimmed elsewhere
            if len(self._mirrors) > 256:  # scopes retire with registry revisions
                self._mirrors.clear()
            mirror = self._mirrors[scope] = _Mirror([], [], [], [], [])
        known = len(mirror.tool_ids)
        # Concurrent lookups may bring the same entries: append only those past ``known``.
        if entries and start <= known < start + len(entries):
            mirror.extend(entries[known - start :])
        return mirror
