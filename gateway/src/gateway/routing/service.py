"""The router: natural language in, one tool and its arguments out.

    candidates   the tools this caller may use (``auth.service.can_use``), in
                 the request's namespaces: filtered before anything is ranked
    coarse       ``ToolIndex``: dense + BM25, fused, top-k with scores, over the
                 request's instruction (``text.instruction``: a payload after a colon
                 does not decide the tool)
    route cache  the query's shape (values abstracted: ``cache.abstract``), exact then
                 semantically equal, in this scope; served only while the cached tool
                 is still a top-k candidate above ``threshold`` (else dropped), with
                 arguments filled from this query; only routes at or above
                 ``cache_min_confidence`` are cached. The shape's vector (a second
                 model run) is embedded only when the tools' examples or an LLM
                 re-rank can use it; without it the cache is exact-only
    fine         an LLM picks and fills arguments (``rerank``), or offline: the top
                 candidate, nudged by the identifiers the request carries and the
                 session's last tool, less what the request asks that the tool does
                 not offer (``choose``, ``vocabulary.action_gap``), above ``threshold``, and
                 schema-guided extraction; offline a cache hit only confirms the top
                 candidate (deciding afresh costs no more)
    context      a required argument the query refers back to ("this SKU")
                 comes from the session's previous calls

The router decides; it does not execute. ``POST /run`` hands its decision to
the same invoke pipeline ``POST /tools/{id}/invoke`` uses. When it cannot
decide it raises (``routing.errors``): ``NoMatchingTool`` or
``RoutedArgumentsInvalid``, with the decision so far attached.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
import structlog
from jsonschema import Draft202012Validator
from opentelemetry import trace
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.auth.service import can_use
from gateway.catalog.spec import ToolSpec
from gateway.metrics import record_route, record_route_cache, record_route_failure
from gateway.registry.cache import RegistryCache
from gateway.registry.vectors import StoredVectors
from gateway.routing import bounds, codes, currencies, intent, kin, vocabulary
from gateway.routing.cache import (
    CachedRoute,
    RouteCache,
    Vector,
    abstract,
    normalise,
    scope_of,
)
from gateway.routing.choose import (
    FIT_MARGIN,
    FOREIGN_ID_PENALTY,
    carries_a_lookup_key,
    carries_identifiers,
    carries_its_abbreviation,
    choose,
    gives_new_values,
    identifier_parameters,
    identifier_values,
    named_identifier_values,
    shaped_values,
    takes_none_of,
)
from gateway.routing.context import Known, PastCall, previous_arguments
from gateway.routing.errors import NoMatchingTool, RoutedArgumentsInvalid, RouteFailed, RouterBusy
from gateway.routing.extract import (
    ArgumentExtractor,
    Extraction,
    continues_previous,
    examples_of,
    is_elliptical,
    person_names,
    states_a_number,
    takes_a_name,
    with_tool_zone,
)
from gateway.routing.gloss import catalogue_words, dictionary, gloss, gloss_ready, gloss_toward
from gateway.routing.index import (
    GLOSS_SHARE,
    Candidate,
    Glossed,
    ToolIndex,
    example_texts,
    index_texts,
)
from gateway.routing.options import choose_options
from gateway.routing.rerank import rerank
from gateway.routing.text import cjk_share, instruction, split_identifier, tokenize
from reach_common.auth.caller import Caller
from reach_common.embeddings import Embedder, VectorCache, Vectors
from reach_common.llm.types import LLMProvider
from reach_common.references import IDENTIFIER, refers_back
from reach_common.storable import unstorable_at

log = structlog.get_logger(__name__)
_T = TypeVar("_T")


def _read_as(query: str) -> str:
    """What a request is routed by: what it asks for (``instruction``), a verb typed with a
    slip read as the verb (``vocabulary.respelt``: "cancle BK-…")."""
    return vocabulary.respelt(instruction(query))


class _Runner(Protocol):
    """How a route's reading runs: on the event loop (``_inline``) or off it
    (``Router._off_loop``)."""

    def __call__(self, work: Callable[..., _T], /, *args: Any) -> Awaitable[_T]: ...


async def _inline(work: Callable[..., _T], *args: Any) -> _T:
    return work(*args)


# Query vectors kept per replica: a repeated request (a cache hit, a retry) skips the model.
_RECENT_VECTORS = 4096
# ...of texts up to this many characters: the cache then holds at most 16 M characters.
_RECENT_TEXT_CHARS = 4096
# A request longer than this is read off the event loop, one such request at a time.
# Reading a request costs about 0.1 ms a character (its model run, its values for each
# candidate's parameters): 4,000 characters held the loop 0.4-0.8 s, every other call
# of the gateway waiting (docs/security.md, finding 21). Shorter ones stay on the loop,
# where they cost no thread hop.
OFF_LOOP_CHARS = 500
# Long requests admitted at once (being read or waiting): past them a long request is
# refused at once (503 router_busy, Retry-After) instead of queueing without bound.
OFF_LOOP_WAITING = 8
# ...and of those, at most this many from one caller (``auth.service.rate_key``), so one
# caller sending long requests without pause cannot hold every place (finding 23).
OFF_LOOP_PER_CALLER = 2
# What follows a colon is a payload ("内容如下：SKU2024001 单价 99 元"), not its subject.
_PAYLOAD = re.compile(r"[:：]")
# Words with digits (identifiers, amounts, dates) say nothing of a request's language.
# Chinese is written without spaces: a value ends where a Han character begins, so
# "1000欧元能换多少港币" keeps its Chinese. From a token's start only: linear.
_VALUES = re.compile(r"(?<![^\s\u3400-\u9fff])[^\s\u3400-\u9fff]*\d[^\s\u3400-\u9fff]*")
_DIGIT = re.compile(r"\d")
# A tool's words "in the other language" from a request's (``Router._across``).
ACROSS_CJK_BELOW = 0.2
ACROSS_CJK_ABOVE = 0.7
# How far below the best fused score the words may rank the writer an order's verb
# names, when the request names no identifier (``Router._plain_writer``).
PLAIN_ORDER_MARGIN = 0.4


# A request whose every action the tool's description says it does not take.
DISCLAIMED_PENALTY = 1.0
MISREAD = "a tool of the other kind: it writes and the request asks to read, or the reverse"


def _method(spec: ToolSpec) -> str:
    """The tool's HTTP method, upper-case; "" for a tool that is not called over HTTP."""
    return str(getattr(spec.endpoint, "method", "") or "").upper()


def _own_words(manifest: dict[str, Any]) -> str:
    """A tool's own words, lower-cased: its id, name, description, aliases, examples, and
    its parameters' names and descriptions (about 0.02 ms a tool: the whole catalogue's
    words are read once, then a tool's again only when it changes)."""
    parts = [split_identifier(str(manifest.get("tool_id") or "")), str(manifest.get("name") or "")]
    parts += [str(manifest.get("description") or "")]
    parts += map(str, [*(manifest.get("aliases") or ()), *(manifest.get("examples") or ())])
    schema = manifest.get("input_schema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    for name, spec in (properties or {}).items() if isinstance(properties, dict) else ():
        parts.append(split_identifier(str(name)))
        if isinstance(spec, dict):
            parts.append(str(spec.get("description") or ""))
    return " ".join(parts).lower()


def _dropped_in_either(
    drop: Callable[[str], float], drop_english: Callable[[str], float], tools: frozenset[str]
) -> Callable[[str], float]:
    """``drop``, or for ``tools`` (described only in English) the more of it and of
    ``drop_english`` (what the request's English reading asks that they do not offer)."""

    def dropped(tool_id: str) -> float:
        lost = drop(tool_id)
        return max(lost, drop_english(tool_id)) if tool_id in tools else lost

    return dropped


def _reads_only(spec: ToolSpec) -> bool:
    """A tool that only reads: idempotent, and not an HTTP PUT, PATCH or DELETE."""
    return spec.idempotent and _method(spec) not in ("PUT", "PATCH", "DELETE")


@dataclass
class RouteDecision:
    """What the router chose and why; ``tool_id`` is None when nothing fits."""

    tool_id: str | None
    arguments: dict[str, Any] = field(default_factory=dict)
    confidence: float = 0.0
    route_hint: str = "semantic_match"
    candidates: list[Candidate] = field(default_factory=list)
    why: str = ""
    # Refused because the request gives the closest tool too little to run (``_unfilled``):
    # that tool and what it lacks, for a caller that can supply it (the agent's memories).
    closest: dict[str, Any] | None = None

    def as_route(self) -> dict[str, Any]:
        route = {
            "confidence": round(self.confidence, 4),
            "route_hint": self.route_hint,
            "why": self.why,
            "candidates": [c.as_dict() for c in self.candidates],
        }
        if self.closest is not None:
            route["closest"] = self.closest
        return route


@dataclass(frozen=True)
class RouterSettings:
    top_k: int = 5
    threshold: float = 0.3
    unfilled_threshold: float = 0.36  # for a route the request gives too little to run
    alpha: float = 0.8
    name_weight: float = 0.3
    cache_min_confidence: float = 0.45


def _unfilled(
    top: Candidate,
    filled: Extraction,
    candidates: list[Candidate],
    why: str,
    settings: RouterSettings,
) -> NoMatchingTool:
    """A weak route that could not run: the request gives the tool too little.

    Below ``unfilled_threshold``, a tool missing a required argument is more often a
    guess at a request no tool serves ("帮我订一张去成都的机票" of a booking lookup, "convert
    150 USD to yen" of a wallet top-up) than the right tool asked without its values:
    over 90 request sets, the 552 routes that missed an argument below 0.36 were 283
    requests no tool serves, 163 wrong tools and 106 right ones. The answer
    still names the closest tool and what it needs, so a caller who meant it can say so.
    """
    names = ", ".join(repr(name) for name in filled.missing[:3])
    more = f" and {len(filled.missing) - 3} more" if len(filled.missing) > 3 else ""
    return NoMatchingTool(
        f"No tool matches confidently enough (threshold {settings.threshold}, "
        f"{settings.unfilled_threshold} for a tool the request gives too little to run). "
        f"The closest, {top.tool_id} ({top.confidence:.2f}), needs {names}{more}, "
        "which the request does not give.",
        decision=RouteDecision(
            None,
            confidence=top.confidence,
            candidates=candidates,
            why=f"below threshold: {why}, but {', '.join(filled.missing)} missing and "
            f"{top.confidence:.3f} < {settings.unfilled_threshold}",
            closest={"tool_id": top.tool_id, "missing": list(filled.missing)},
        ),
    )


# An example identifier written as a prefix of capitals and a number (RSV-48213, INV2041).
_PREFIXED_EXAMPLE = re.compile(r"([A-Z]{2,6})[-_]?\d{3,}")


def _prefixed_alike(arguments: dict[str, Any], schema: dict[str, Any]) -> bool:
    """Whether some required identifier parameter holds a value, and none holds one with
    another prefix than every one of its examples has (RA-445190 for "e.g. RSV-48213": a
    rental's number, read loosely). A pattern's values are of its shape already, and a
    scrambled example (K7QX2M) tells no prefix."""
    properties = schema.get("properties") or {}
    filled = [n for n in identifier_parameters(schema) if isinstance(arguments.get(n), str)]
    for name in filled:
        spec = properties.get(name) or {}
        if not isinstance(spec, dict) or spec.get("pattern"):
            continue
        prefixes = [m[1] for e in examples_of(spec) if (m := _PREFIXED_EXAMPLE.fullmatch(e))]
        value = arguments[name].upper()
        if prefixes and not any(value.startswith(p) for p in prefixes):
            return False
    return bool(filled)


class Router:
    def __init__(
        self,
        registry: RegistryCache,
        embedder: Embedder,
        cache: RouteCache,
        *,
        provider: LLMProvider | None = None,
        settings: RouterSettings | None = None,
        tracer: trace.Tracer | None = None,
        sessionmaker: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        """``sessionmaker``: keep the index's vectors in Postgres (``StoredVectors``), so
        a start embeds only texts never embedded before."""
        self.registry = registry
        # The app's own tracer: a process-wide one would miss this app's span store.
        self.tracer = tracer or trace.get_tracer("gateway.routing")
        self.embedder = embedder
        self.cache = cache
        self.provider = provider
        self.settings = settings or RouterSettings()
        self.extractor = ArgumentExtractor()
        self._vectors = VectorCache(embedder)
        self._stored = StoredVectors(sessionmaker, self._vectors) if sessionmaker else None
        self._recent_vectors: OrderedDict[str, Vector] = OrderedDict()
        self._recent_lock = threading.Lock()  # the loop and the reader both embed
        # Long requests are read here (OFF_LOOP_CHARS), one at a time; the index is not
        # changed while one is read (``_reading``, taken by ``_update`` too).
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="route-reader")
        self._reading = asyncio.Lock()
        # the English words of the tools a caller may use that have no Chinese of their
        # own, per registry revision and caller's tools (``_catalogue_words``)
        self._catalogues: dict[tuple[int, frozenset[str]], frozenset[str]] = {}
        self._tool_words: dict[str, tuple[dict[str, Any], frozenset[str]]] = {}
        self._long_requests = 0  # admitted by _reader_for, being read or waiting
        self._long_by_owner: Counter[str] = Counter()  # the same, per caller
        self._index: ToolIndex | None = None
        self._building: asyncio.Lock = asyncio.Lock()
        self._visible: dict[tuple[int, bool, frozenset[str], frozenset[str]], frozenset[str]] = {}
        self._scopes: dict[tuple[int, frozenset[str]], tuple[str, bool]] = {}
        self._rebuild: asyncio.Task[None] | None = None
        self._stale = False
        self._offered: dict[
            int,
            tuple[
                dict[str, Any],
                frozenset[str] | None,
                bool,
                intent.OwnWords,
                frozenset[str],
                frozenset[str] | None,
                bool,  # whether the gloss dictionary was read
            ],
        ] = {}
        self._naming: dict[tuple[int, str, bool, bool], frozenset[str]] = {}  # _named_writer's
        self._converters: tuple[int, frozenset[str]] | None = None  # _converter's memo
        self._kinds: tuple[int, bool] | None = None  # _mixed's memo
        # _attribute_words' memo: the manifest, its words, its text, whether glossed
        self._attributes: dict[int, tuple[dict[str, Any], frozenset[str], str, bool]] = {}
        self._schemas: dict[int, tuple[ToolSpec, dict[str, Any], dict[str, Any], int]] = {}
        self._kin: tuple[int, kin.Patterns] = (-2, kin.Patterns())

    # -- index lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        """Build the index now, and again in the background whenever the registry changes,
        so no request pays for embedding the catalogue."""
        await self.index()
        self.registry.add_listener(self._on_registry_change)

    def _on_registry_change(self, _: RegistryCache) -> None:
        # Coalesce bursts (a folder of manifests loading): one rebuild runs at a
        # time, and one more follows if the registry moved meanwhile.
        self._stale = True
        if self._rebuild is None or self._rebuild.done():
            self._rebuild = asyncio.get_running_loop().create_task(self._rebuild_until_current())

    async def stop(self) -> None:
        if self._rebuild is not None and not self._rebuild.done():
            self._rebuild.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._rebuild
        self._reader.shutdown(wait=False, cancel_futures=True)

    async def _rebuild_until_current(self) -> None:
        while self._stale:
            self._stale = False
            await self.index()

    async def index(self) -> ToolIndex:
        """The index for the registry's current revision: built once, then updated with
        just the tools each change touched."""
        index = self._index
        if index is not None and index.revision == self.registry.revision:
            return index
        async with self._building:
            index = self._index
            if index is None:
                revision = self.registry.revision
                manifests = [t.spec.manifest for t in self.registry.tools.values()]
                if self._stored is not None:  # the texts off the loop: 10,000 tools take a while
                    texts = await asyncio.to_thread(index_texts, manifests)
                    await self._stored.fill(texts, start=True)
                index = await asyncio.to_thread(
                    ToolIndex,
                    manifests,
                    self._vectors,
                    revision=revision,
                    alpha=self.settings.alpha,
                    name_weight=self.settings.name_weight,
                )
                self._index = index
                log.info("routing_index_built", revision=revision, tools=len(index))
            elif index.revision != self.registry.revision:
                await self._update(index)
        return index

    async def _update(self, index: ToolIndex) -> None:
        """Bring ``index`` to the registry's revision: embed the changed tools off the loop,
        then apply the change on it (where searches run)."""
        revision, tools = self.registry.revision, self.registry.tools
        ids = self.registry.changed_since(index.revision)
        if ids is None:  # further behind than the registry remembers: compare every tool
            ids = frozenset(tools).symmetric_difference(index.manifests) | {
                t for t, tool in tools.items() if index.manifests.get(t) is not tool.spec.manifest
            }
        upserts = [
            tools[t].spec.manifest
            for t in sorted(ids)
            if t in tools and index.manifests.get(t) is not tools[t].spec.manifest
        ]
        removed = [t for t in ids if t not in tools and t in index.manifests]
        if self._stored is not None:
            await self._stored.fill(await asyncio.to_thread(index_texts, upserts))
        prepared = await asyncio.to_thread(index.prepare, upserts)
        async with self._reading:  # not while a long request is read from it
            index.apply(prepared, removed, revision)
        log.info(
            "routing_index_updated", revision=revision, tools=len(index), changed=len(upserts),
            removed=len(removed),
        )  # fmt: skip

    # -- routing ---------------------------------------------------------------------

    def visible(self, caller: Caller, namespaces: Collection[str] | None) -> frozenset[str]:
        """Ids of the tools ``caller`` may use in ``namespaces``: ``can_use`` over the registry.

        Memoised per registry revision and what ``can_use`` looks at (authenticated or
        not, roles), so a busy gateway does not re-decide 1,000 tools per request.
        """
        key = (
            self.registry.revision,
            caller.authenticated,
            frozenset(caller.roles),
            frozenset(namespaces or ()),
        )
        cached = self._visible.get(key)
        if cached is None:
            cached = frozenset(
                tool.tool_id
                for tool in self.registry.tools.values()
                if (not namespaces or tool.spec.namespace in namespaces)
                and can_use(caller, tool.spec).allowed
            )
            if len(self._visible) > 1024:
                self._visible.clear()
            self._visible[key] = cached
        return cached

    async def route(
        self,
        query: str,
        caller: Caller,
        *,
        namespaces: Collection[str] | None = None,
        recent: Sequence[PastCall] = (),
        remembered: Sequence[str] = (),
        within: frozenset[str] | None = None,
        owner: str,
    ) -> RouteDecision:
        """The tool for ``query`` and its arguments, among the tools ``caller`` may use (in
        ``namespaces``, and only ``within`` these ids when given: a curated surface).
        ``owner`` is whose share of the long-request places it takes (the caller's rate
        key). Raises :class:`NoMatchingTool` or :class:`RoutedArgumentsInvalid`, each with
        the decision so far, or :class:`RouterBusy`."""
        # A failed route is an answer (404/422), not a crash: no traceback on the span.
        with self.tracer.start_as_current_span(
            "gateway.route", record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                decision = await self._route(
                    query, caller, namespaces, recent, remembered, within, owner
                )
            except RouteFailed as exc:
                _describe(span, exc.decision)
                span.set_attribute("route.failure", exc.reason)
                record_route_failure(exc.reason)
                raise
            _describe(span, decision)
            record_route(decision.route_hint, decision.confidence)
            return decision

    async def _route(
        self,
        query: str,
        caller: Caller,
        namespaces: Collection[str] | None,
        recent: Sequence[PastCall],
        remembered: Sequence[str],
        within: frozenset[str] | None,
        owner: str,
    ) -> RouteDecision:
        index = await self.index()
        allowed = self._allowed(caller, namespaces, within)
        previous = Known(
            previous_arguments(list(recent)), tuple(remembered), recent[0] if recent else None
        )
        async with self._reader_for(query, owner) as run:
            return await self._decide(query, index, allowed, recent, previous, run)

    async def _decide(
        self,
        query: str,
        index: ToolIndex,
        allowed: frozenset[str],
        recent: Sequence[PastCall],
        previous: Known,
        run: _Runner,
    ) -> RouteDecision:
        """The route of ``query`` among ``allowed``: its reading (model runs, scores,
        values) done by ``run``, on the loop or off it (``OFF_LOOP_CHARS``)."""
        scope, has_examples = self._scope(index, allowed)
        # Found by what it asks for (a payload after a colon aside); filled from all of it.
        text = await run(_read_as, query)
        # The shape's vector costs a second model run: embedded when the tools' examples
        # or an LLM re-rank (whose calls a semantic hit saves) can use it (see _embed).
        needs_shape = has_examples or self.provider is not None
        cached, cached_vectors = await self.cache.probe(scope, text, similar=needs_shape)
        vector, shape_vector = await run(self._embed, text, needs_shape)
        if cached is None and cached_vectors > 0 and shape_vector is not None:
            cached = await self.cache.get_similar(scope, shape_vector, cached_vectors)
        record_route_cache(cached is not None)
        english = await self._english(text, index, allowed, run)
        # The coarse stage runs on every request: a cache hit is checked against it.
        named, candidates = await run(
            self._coarse, text, vector, shape_vector, index, allowed, recent, english
        )
        note = ""
        if cached is not None:
            served, note = await self._serve_cached(
                scope, query, cached, allowed, candidates, previous, run
            )
            if served is not None:
                return served
        try:
            if self.provider is not None:
                decision = await self._fine_llm(query, candidates, recent)
            else:
                last_tool = recent[0].tool_id if recent else None
                reading = (english.text, index.english_only) if english else None
                decision = await run(
                    self._fine_offline, query, candidates, previous, last_tool, named, reading
                )
        except RouteFailed as exc:
            exc.decision.why = "; ".join(filter(None, (note, exc.decision.why)))
            raise
        decision.why = "; ".join(filter(None, (note, decision.why)))
        if decision.tool_id:
            await self._remember(scope, text, shape_vector, decision)
        return decision

    def _coarse(
        self,
        text: str,
        vector: Vector,
        shape_vector: Vector | None,
        index: ToolIndex,
        allowed: frozenset[str],
        recent: Sequence[PastCall],
        english: Glossed | None,
    ) -> tuple[frozenset[str], list[Candidate]]:
        """The coarse stage's candidates, and the writers the request names (an order's
        verb across languages, a converter two currencies name, a plain order's writer
        near the top)."""
        named = self._named_writer(text, allowed) | self._converter(text, allowed)
        candidates = index.search(
            text, vector, allowed=allowed, k=self.settings.top_k, shape_vector=shape_vector,
            include=named | _followed(text, recent), english=english,
        )  # fmt: skip
        plain = self._plain_writer(text, allowed)
        if plain is not None and any(
            c.tool_id == plain and c.score >= candidates[0].score - PLAIN_ORDER_MARGIN
            for c in candidates
        ):
            named |= {plain}
        return named, candidates

    @contextlib.asynccontextmanager
    async def _reader_for(self, query: str, owner: str) -> AsyncIterator[_Runner]:
        """How ``query`` is read: on the loop when it is short (``OFF_LOOP_CHARS``), else
        in the reader thread once it is its turn (one at a time, the index unchanged
        meanwhile); refused (RouterBusy) when ``OFF_LOOP_WAITING`` are admitted already,
        or ``OFF_LOOP_PER_CALLER`` of ``owner``'s."""
        if len(query) <= OFF_LOOP_CHARS:
            yield _inline
            return
        if self._long_requests >= OFF_LOOP_WAITING:
            raise RouterBusy(self._long_requests, OFF_LOOP_CHARS)
        if self._long_by_owner[owner] >= OFF_LOOP_PER_CALLER:
            raise RouterBusy(self._long_by_owner[owner], OFF_LOOP_CHARS, yours=True)
        self._long_requests += 1
        self._long_by_owner[owner] += 1
        try:
            async with self._reading:
                yield self._off_loop
        finally:
            self._long_requests -= 1
            self._long_by_owner[owner] -= 1
            if not self._long_by_owner[owner]:
                del self._long_by_owner[owner]

    async def _off_loop(self, work: Callable[..., _T], *args: Any) -> _T:
        """``work(*args)`` in the reader thread, the event loop free meanwhile."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reader, functools.partial(work, *args))

    def _allowed(
        self, caller: Caller, namespaces: Collection[str] | None, within: frozenset[str] | None
    ) -> frozenset[str]:
        """The tools this caller may use in the namespaces (and ``within``, if given)."""
        allowed = self.visible(caller, namespaces)
        if within is not None:
            allowed &= within
        if not allowed:
            raise NoMatchingTool(
                "No tool is available to this caller in the requested namespaces.",
                decision=RouteDecision(None, why="no visible tools"),
            )
        return allowed

    # -- route cache -----------------------------------------------------------------

    def _scope(self, index: ToolIndex, allowed: frozenset[str]) -> tuple[str, bool]:
        """The route cache's scope for ``allowed`` at the index's revision, and whether any
        of those tools has aliases or examples (matched by the query's shape); memoised."""
        key = (index.revision, allowed)
        found = self._scopes.get(key)
        if found is None:
            if len(self._scopes) > 1024:
                self._scopes.clear()
            examples = any(
                example_texts(index.manifests[t]) for t in allowed if t in index.manifests
            )
            found = self._scopes[key] = (scope_of(index.revision, allowed), examples)
        return found

    async def rank(
        self, query: str, allowed: frozenset[str], k: int, *, owner: str
    ) -> list[Candidate]:
        """The coarse stage alone (no cache, no fine choice): the top ``k`` of ``allowed``
        for ``query``, with the same text handling and vectors as :meth:`route` (``owner``
        as there). Only candidates with some evidence: one whose every score is zero has
        not scored."""
        index = await self.index()
        async with self._reader_for(query, owner) as run:
            return await self._rank(query, index, allowed, k, run)

    async def _rank(
        self, query: str, index: ToolIndex, allowed: frozenset[str], k: int, run: _Runner
    ) -> list[Candidate]:
        text = await run(_read_as, query)
        vector, shape_vector = await run(self._embed, text)
        english = await self._english(text, index, allowed, run)
        search = functools.partial(
            index.search, allowed=allowed, k=k, shape_vector=shape_vector, english=english
        )
        candidates = await run(search, text, vector)
        return [c for c in candidates if c.score > 0 or c.confidence > 0 or c.lexical > 0]

    async def _english(
        self, text: str, index: ToolIndex, allowed: frozenset[str], run: _Runner
    ) -> Glossed | None:
        """A mostly Chinese request read in English words (``gloss``) and its vector (with
        its leaning reading: ``Glossed``): a second model run, for Chinese requests only,
        and only when a tool the caller may use is described only in English. The
        dictionary is read off the event loop the first Chinese request (about half a
        second): argument filling reads Chinese words of enum options in it too (年假
        "annual leave" for ``annual``)."""
        if cjk_share(text) < GLOSS_SHARE:
            return None
        if not gloss_ready():
            await asyncio.to_thread(dictionary)
        if not index.reads_english_only(allowed):
            return None
        return await run(self._glossed, text, index, allowed)

    def _glossed(self, text: str, index: ToolIndex, allowed: frozenset[str]) -> Glossed:
        """``text``'s English reading, and its leaning one (``Glossed``) when that differs:
        both embedded in one model run."""
        english = gloss(text)
        leaning = gloss_toward(text, self._catalogue_words(index, allowed))
        if leaning == english:
            return Glossed(english, self._embed(english, needs_shape=False)[0])
        vectors = self._embed_recent([english, leaning])
        return Glossed(english, vectors[english], (leaning, vectors[leaning]))

    def _catalogue_words(self, index: ToolIndex, allowed: frozenset[str]) -> frozenset[str]:
        """The words of the tools of ``allowed`` described only in English (what a Chinese
        word's sense is chosen by): per tool memoised while its manifest stays, the union
        per revision and set of tools."""
        key = (index.revision, allowed)
        found = self._catalogues.get(key)
        if found is None:
            if len(self._catalogues) > 64:
                self._catalogues.clear()
            if len(self._tool_words) > 2 * len(index.manifests) + 1024:  # tools removed
                self._tool_words = {
                    t: held for t, held in self._tool_words.items() if t in index.manifests
                }
            words: set[str] = set()
            for tool_id in allowed:
                if index.english_only(tool_id):
                    words |= self._words_of(tool_id, index.manifests[tool_id])
            found = self._catalogues[key] = frozenset(words)
        return found

    def _words_of(self, tool_id: str, manifest: dict[str, Any]) -> frozenset[str]:
        held = self._tool_words.get(tool_id)
        if held is None or held[0] is not manifest:
            held = self._tool_words[tool_id] = (manifest, catalogue_words(_own_words(manifest)))
        return held[1]

    def _embed(self, query: str, needs_shape: bool = True) -> tuple[Vector, Vector | None]:
        """The query's vector (for the coarse stage) and its shape's (values abstracted:
        for the tools' examples and the semantic route cache), embedded in one batch.

        The shape's vector is a second model run (on BFCL about 40% of a miss's CPU):
        without ``needs_shape`` it is left out (None) unless it is free, i.e. the query has
        no values and is its own shape. Offline a semantic hit may only confirm the top
        candidate, where deciding afresh starts anyway, so a semantic lookup alone does not
        pay for the run (BFCL top-1 is the same with and without it).

        A text embedded lately is not embedded again: a repeated query then costs an index
        search, not a model run."""
        shape = abstract(query)
        # A query without values is its own shape (the model is uncased): one model run.
        same = shape == normalise(query)
        texts = [query] if same or not needs_shape else [query, shape]
        vectors = self._embed_recent(texts)
        vector = vectors[query]
        if same:
            return vector, vector
        return vector, vectors[shape] if needs_shape else None

    def _embed_texts(self, texts: Sequence[str]) -> Vectors:
        """``texts``' vectors in order (an ``(n, 384)`` array), in one model run for those
        not embedded lately: a request's clauses (``options``)."""
        vectors = self._embed_recent(list(texts))
        return np.stack([vectors[t] for t in texts])

    def _embed_recent(self, texts: list[str]) -> dict[str, Vector]:
        """Each of ``texts``' vectors: the ones embedded lately from memory, the rest in
        one model run, kept for next time."""
        recent = self._recent_vectors
        with self._recent_lock:
            vectors = {t: recent[t] for t in texts if t in recent}
        missing = list(dict.fromkeys(t for t in texts if t not in vectors))
        if missing:
            vectors.update(zip(missing, self.embedder.embed(missing), strict=True))
        with self._recent_lock:
            for text in texts:
                if len(text) > _RECENT_TEXT_CHARS:
                    continue  # a long text is rarely repeated; it would pin its size in memory
                recent[text] = vectors[text]
                recent.move_to_end(text)
                if len(recent) > _RECENT_VECTORS:
                    recent.popitem(last=False)
        return vectors

    async def _serve_cached(
        self,
        scope: str,
        query: str,
        cached: CachedRoute,
        allowed: frozenset[str],
        candidates: list[Candidate],
        previous: Known,
        run: _Runner,
    ) -> tuple[RouteDecision | None, str]:
        """The decision for a cache hit, or None and why it is not served. A hit only
        saves the choice: the cached tool must still be a candidate of the coarse stage
        for *this* query (a wrong route cached for one id cannot spread to another),
        and the arguments come from this query, never from the cache."""
        label = f"cached route {cached.tool_id} ({cached.match} hit"
        label += f", similarity {cached.similarity:.3f})" if cached.match == "semantic" else ")"
        if cached.tool_id not in allowed:
            return None, f"{label} not visible to this caller"
        rank, current = next(
            ((i, c) for i, c in enumerate(candidates, 1) if c.tool_id == cached.tool_id),
            (0, None),
        )
        # Offline, deciding afresh costs no more than the cache does: a hit may confirm
        # the top candidate, never overrule it (near-duplicate tools share query shapes:
        # on BFCL, overruling cost 2.4 points of top-1).
        offline_not_top = self.provider is None and rank != 1
        if current is None or current.confidence < self.settings.threshold or offline_not_top:
            await self.cache.drop(scope, cached)
            if current is None:
                reason = f"not among the top-{self.settings.top_k} candidates"
            elif current.confidence < self.settings.threshold:
                reason = f"confidence {current.confidence:.3f} < {self.settings.threshold}"
            else:
                reason = f"candidate #{rank}, and offline a hit only confirms the top one"
            log.info("route_cache_dropped", tool_id=cached.tool_id, reason=reason)
            return None, f"{label} dropped: {reason}"
        return await run(self._served, label, query, cached, candidates, previous, rank, current)

    def _served(
        self,
        label: str,
        query: str,
        cached: CachedRoute,
        candidates: list[Candidate],
        previous: Known,
        rank: int,
        current: Candidate,
    ) -> tuple[RouteDecision | None, str]:
        """A cache hit whose tool is still the top candidate: its decision with this
        query's arguments, or None and why it is not used."""
        text = _read_as(query)
        lost = self._unoffered(text, candidates)(current.tool_id)
        if current.confidence - lost < self.settings.threshold:
            return None, f"{label} not used: the request asks what the tool does not offer"
        # A route cached before the rule (or for another kind of request of the same
        # shape) is no way around it: a question never reaches a writer from the cache.
        last = previous.last.tool_id if previous.last is not None else None
        if self._misread(text, candidates, last=last)(current.tool_id):
            return None, f"{label} not used: {MISREAD}"
        hit = self._fill(query, cached.tool_id, previous)
        error = None if hit.missing else self._validate(cached.tool_id, hit.arguments)
        if hit.missing or error is not None:
            return None, f"{label} not used: arguments {error or 'incomplete'}"
        why = f"{label}; candidate #{rank}, confidence {current.confidence:.3f}"
        why += "; arguments filled from this query"
        if hit.from_context:
            why += f" ({', '.join(hit.from_context)} from the session's previous call)"
        if hit.from_memory:
            why += f" ({', '.join(hit.from_memory)} from what the user told the agent before)"
        if hit.by_meaning:
            why += f" ({', '.join(hit.by_meaning)} the option closest to the request's meaning)"
        decision = RouteDecision(
            cached.tool_id, hit.arguments, current.confidence, "route_cache", candidates, why
        )
        return decision, ""

    async def _remember(
        self, scope: str, query: str, shape_vector: Vector | None, decision: RouteDecision
    ) -> None:
        """Cache the decision's tool (never its arguments) when it is confident enough to
        reuse: a weak guess is never served again."""
        assert decision.tool_id is not None
        bar = self.settings.cache_min_confidence
        if decision.confidence < bar:
            decision.why += f"; not cached (confidence {decision.confidence:.3f} < {bar})"
            return
        await self.cache.put(
            scope, query, shape_vector, decision.tool_id, decision.confidence, decision.route_hint
        )

    def _fill(self, query: str, tool_id: str, known: Known) -> Extraction:
        """The arguments the request gives ``tool_id``: by the extractor's rules, the last
        call's values a follow-up keeps (``_carry_on``), then an enum option the request
        means in other words (``options``)."""
        spec = self.registry.tools[tool_id].spec
        extraction = self._extracted(query, tool_id, known)
        choose_options(
            extraction,
            query,
            self._schema(spec),
            spec.description or tool_id,
            acts=not _reads_only(spec),
            request_vector=lambda text: self._embed(text, needs_shape=False)[0],
            embed=self._vectors.embed,
            clause_vectors=self._embed_texts,
        )
        _defaulted(extraction, query, self._own_schema(spec))
        return extraction

    def _extracted(self, query: str, tool_id: str, known: Known) -> Extraction:
        """The arguments by the extractor's rules, and the last call's values a follow-up
        keeps (``_carry_on``)."""
        spec = self.registry.tools[tool_id].spec
        schema, own = self._schema(spec), self._own_schema(spec)
        read = functools.partial(
            self.extractor.extract,
            query,
            previous=known.previous,
            remembered=known.remembered,
            elliptical=_reads_only(spec),
        )
        extraction = read(schema)
        unfound = kin.lent(schema, own) - extraction.arguments.keys() if schema is not own else ()
        if unfound:
            # a shape lent by the catalogue (``kin``) finds nothing: read as the tool writes
            # it ("charge it to ALPHA-7" of a project code others write as PRJ-0000)
            plain = read(own)
            for name in unfound:
                if name in plain.arguments:
                    extraction.arguments[name] = plain.arguments[name]
                    if name in extraction.missing:
                        extraction.missing.remove(name)
        _carry_on(extraction, query, tool_id, schema, known.last)
        return extraction

    def _fits(self, query: str, tool_id: str) -> bool:
        """Whether the request holds what the tool is looked up by: every identifier it
        needs; or, for a question to a tool that only reads, a value of the shape of one
        of its parameters when it requires none ("where does E40012 sit?"), or a person's
        name when it takes one ("who is Maria Lopez's manager?", "帮我找一下李娜，她在哪个部门")."""
        spec = self.registry.tools[tool_id].spec
        if carries_identifiers(self.extractor, query, self._schema(spec)):
            return True
        named = f"{split_identifier(tool_id)} {spec.name}"
        if carries_its_abbreviation(self.extractor, query, self._schema(spec), named):
            return True  # "has HW-118402 been graded yet?" of homework_feedback_status
        if not (_reads_only(spec) and intent.asks_to_read(query)):
            return False
        if carries_a_lookup_key(self.extractor, query, self._schema(spec)):
            return True
        return takes_a_name(self._schema(spec)) and bool(person_names(query))

    def _fits_fullest(
        self, query: str, candidates: list[Candidate], fits: Callable[[str], bool]
    ) -> Callable[[str], bool]:
        """``fits``, less a tool that leaves unused identifiers another fitting candidate
        near it (``FIT_MARGIN``) takes with all of its own, by their parameters' patterns:
        "shift 24 KIM-00893 A-14-4-D -> A-14-1-D" holds a returns log's SKU, but a stock
        move takes the SKU and both bins."""
        top = candidates[0].score if candidates else 0.0
        near = [c.tool_id for c in candidates if c.score >= top - FIT_MARGIN]
        found: dict[str, tuple[bool, frozenset[str]]] = {}

        def taken(tool_id: str) -> tuple[bool, frozenset[str]]:
            if tool_id not in found:
                values: frozenset[str] = frozenset()
                if fitting := fits(tool_id):
                    schema = self._schema(self.registry.tools[tool_id].spec)
                    values = frozenset(shaped_values(self.extractor, query, schema))
                found[tool_id] = (fitting, values)
            return found[tool_id]

        read: dict[str, tuple[bool, frozenset[str], frozenset[str]]] = {}

        def complete(tool_id: str) -> tuple[bool, frozenset[str]]:
            """Whether the request gives every value the tool requires, and the values."""
            return read_for(tool_id)[:2]

        def read_for(tool_id: str) -> tuple[bool, frozenset[str], frozenset[str]]:
            """``complete``, and the days and times of the values."""
            if tool_id not in read:
                schema = self._schema(self.registry.tools[tool_id].spec)
                extraction = self.extractor.extract(query, schema)
                said = frozenset(map(str, extraction.arguments.values()))
                properties = schema.get("properties") or {}
                days = frozenset(
                    str(value)
                    for name, value in extraction.arguments.items()
                    if (properties.get(name) or {}).get("format") in ("date", "date-time")
                )
                read[tool_id] = (not extraction.missing, said, days)
            return read[tool_id]

        def reader(tool_id: str) -> bool:
            return _reads_only(self.registry.tools[tool_id].spec)

        def read_with_days(tool_id: str) -> frozenset[str]:
            """A reader's identifiers and the days it is read for: "明天有没有课 ST-…" is
            a lookup of that day's sessions, not of the student's lesson balance."""
            return taken(tool_id)[1] | read_for(tool_id)[2]

        def fullest(tool_id: str) -> bool:
            fitting, mine = taken(tool_id)
            if not fitting:
                return False
            others = [other for other in near if other != tool_id and taken(other)[0]]
            if mine and any(taken(other)[1] > mine for other in others):
                return False
            if mine and reader(tool_id):
                readers = [other for other in others if reader(other)]
                if any(read_with_days(o) > read_with_days(tool_id) for o in readers):
                    return False
            # One that lacks a required value loses to one that has all of its own and
            # uses more of the request: "top up TC40213377 with 50 dollars" is a top-up's
            # card and amount, not a season ticket's card without its zones.
            done, said = complete(tool_id)
            if done or not others:
                return True
            return not any(complete(o)[0] and complete(o)[1] > said for o in others)

        return fullest

    def _fits_the_last_call(self, query: str, tool_id: str, known: Known) -> bool:
        """Whether a request that refers back and names no identifier ("ok cancel it",
        "please just cancel it") gets every identifier the tool needs from the session's
        last call ("cancel it" after a look at WO-104233: the cancel tool's
        ``work_order_id``), as a request that names them fits (``_fits``)."""
        if known.last is None or IDENTIFIER.search(query) or not refers_back(query):
            return False
        keyed = identifier_parameters(self._schema(self.registry.tools[tool_id].spec))
        if not keyed:
            return False
        extraction = self._extracted(query, tool_id, known)
        return all(name in extraction.from_context for name in keyed)

    def _unoffered(self, text: str, candidates: list[Candidate]) -> Callable[[str], float]:
        """Per candidate, the confidence it loses for what the request asks that the tool
        does not offer: an action its own words do not name (``vocabulary.action_gap``),
        a thing they do not name that another candidate is named for
        (``vocabulary.object_gap``), or identifiers another candidate takes and it takes in
        no parameter. Evaluated only for the candidates ``choose`` considers accepting."""
        requested = vocabulary.requested_actions(text)
        changed = vocabulary.changed_attribute(text)
        acted = vocabulary.acted_on(text)
        # the candidates named for what it acts on ("file_claim": "withdraw my damage claim")
        named_for = frozenset(
            c.tool_id
            for c in candidates
            if acted is not None and acted[1] in tokenize(split_identifier(c.tool_id))
        )
        identifiers: tuple[set[str], set[str]] | None = None
        head = _PAYLOAD.split(text, maxsplit=1)[0]  # ids in a payload say what it holds
        # an identifier with letters (a bare number may be one typed without its prefix),
        # in a request that does not refer to something it does not name ("how is my usual
        # product selling? asking for ticket ABC-12345": the product is remembered)
        names_one = not refers_back(head) and any(
            re.search(r"[^\W\d_]", m.group(0)) for m in IDENTIFIER.finditer(head)
        )

        def drop(tool_id: str) -> float:
            nonlocal identifiers
            spec = self.registry.tools[tool_id].spec
            if names_one and self._needs_another(head, self._schema(spec)):
                return FOREIGN_ID_PENALTY
            offered = self._offered_actions(spec.manifest)
            if offered is None:
                lost = vocabulary.opposed_gap(requested, self._named_actions(spec.manifest))
            else:
                lost = vocabulary.action_gap(requested, offered)
            refused = self._disclaimed_actions(spec.manifest)
            if requested and requested <= refused:  # "不负责…修改或取消已有预约"
                lost = max(lost, DISCLAIMED_PENALTY)
            if changed:  # "change the title of LS-…" of a tool that changes prices
                own_words, own_text = self._attribute_words(spec.manifest)
                lost = max(lost, vocabulary.attribute_gap(changed, own_words, own_text))
            if named_for - {tool_id}:  # "withdraw my damage claim" of a pickup's cancel
                own_words = self._attribute_words(spec.manifest)[0]
                lost = max(lost, vocabulary.object_gap(acted, spec.manifest, own_words))
            if identifiers is None:
                shaped: set[str] = set()
                named: set[str] = set()
                for c in candidates:
                    schema = self._schema(self.registry.tools[c.tool_id].spec)
                    shaped |= identifier_values(self.extractor, head, schema)
                    named |= named_identifier_values(self.extractor, head, schema)
                identifiers = (shaped, named)
            shaped, named = identifiers
            # A manifest that does not describe its requests (``offered`` None) answers
            # only for identifiers the request names by kind ("claim CLM-611940").
            carried = named if offered is None else shaped | named
            if takes_none_of(self.extractor, head, self._schema(spec), carried):
                lost += FOREIGN_ID_PENALTY
            return lost

        return drop

    def _needs_another(self, text: str, schema: dict[str, Any], *, shaped: bool = False) -> bool:
        """Whether the tool needs identifiers of known shapes and ``text``, which names an
        identifier, gives it none of them: "SKU2024003 还有多少库存" is about a product,
        not the leave balance of an employee id the request never names. With ``shaped``,
        none in their own shape either: RA-445190 read loosely for "e.g. RSV-48213"."""
        keyed = identifier_parameters(schema)
        if not keyed:
            return False
        arguments = self.extractor.extract(text, schema).arguments
        if shaped:
            return not _prefixed_alike(arguments, schema)
        return not any(name in arguments for name in keyed)

    def _in_english(
        self,
        english: tuple[str, Callable[[str], bool]] | None,
        candidates: list[Candidate],
        request: str,
        last: str | None = None,
    ) -> tuple[Callable[[str], float], Callable[[str], bool]]:
        """``_unoffered`` and ``_misread`` of ``request``; for a Chinese request, also of
        its English reading against the candidates described only in English, as an
        English request's would be ("关闭工单" reads "close work order", which a priority
        change does not do). ``last``: the session's last tool."""
        drop = self._unoffered(request, candidates)
        misread = self._misread(request, candidates, last=last)
        if english is None:
            return drop, misread
        text, english_only = english
        tools = frozenset(c.tool_id for c in candidates if english_only(c.tool_id))
        drop_english = self._unoffered(text, candidates)
        # A word-by-word reading names a verb as a dictionary does (申请 "apply for"): only a
        # verb of an action class (取消 "cancel") says what an English tool must do, and
        # never of a question (理赔…到哪一步了？ reads "settle a claim … how one step?").
        if self._asks_to_read(request, last):
            return _dropped_in_either(drop, drop_english, tools), misread
        misread_english = self._misread(text, candidates, classed_only=True)

        def misread_either(tool_id: str) -> bool:
            return misread(tool_id) or (tool_id in tools and misread_english(tool_id))

        return _dropped_in_either(drop, drop_english, tools), misread_either

    def _misread(
        self,
        text: str,
        candidates: list[Candidate],
        *,
        classed_only: bool = False,
        last: str | None = None,
    ) -> Callable[[str], bool]:
        """Per candidate, whether it is the wrong kind for the request (``intent``): a
        writer for a question, or for an order a reader or a writer that does not do its
        verb (with ``classed_only``, only a verb of an action class). Nothing is, unless
        the catalogue holds both readers and writers (``_mixed``). For an order the
        candidates may all write ("block my number …" of a number port and a SIM
        suspension); a question among writers only is taken as asking for something ("do
        you have a charger I could borrow?"). ``last``: the session's last tool
        (``_asks_to_read``)."""
        tools = self.registry.tools
        present = [c.tool_id for c in candidates if c.tool_id in tools]
        reading = {t for t in present if _reads_only(tools[t].spec)}
        if not self._mixed():
            return lambda _: False
        verb = intent.changes_instead(text)  # "can CX… come on 2025-04-09 instead?"
        if verb is None and self._asks_to_read(text, last):
            if not reading:
                return lambda _: False
            # (a reader by its method only, an idempotent POST that assigns a trailer or
            # applies a promo code, writes: it answers no question)
            readers = {t for t in reading if not self._writes_too(t)}
            return lambda tool_id: (
                tool_id not in readers and (tool_id in reading or self._writes(tool_id))
            )
        verb = verb or intent.order_verb(text)
        later = intent.later_order_verb(text) if verb is None else None
        asked = verb or later
        if asked is None and intent.ba_order(text) and any(self._writes(t) for t in present):
            # an order by its clause, of no action word known: no reader's
            return lambda tool_id: tool_id in reading and not self._writes_too(tool_id)
        if asked is None or not any(self._writes(t) for t in present):
            return lambda _: False
        if classed_only and not vocabulary.synonyms(asked)[1]:
            return lambda _: False

        # An order: no tool whose words do not name its verb takes it, and no reader
        # unless the verb is its subject ("refund RF… status" of refund_status). A later
        # order ("…, book it") holds only the readers to its verb. What is submitted
        # names the action: a writer whose words name it does "submit a ticket".
        thing = intent.submitted(text) if asked == "submit" else frozenset()
        given = intent.given(text)
        applied = intent.applied_for(text, asked)
        outright = intent.asked_outright(text)

        def misread(tool_id: str) -> bool:
            # A reader by its method only (an idempotent POST that freezes a card) is held
            # to an order's verb as a writer is.
            reader = tool_id in reading and not self._writes_too(tool_id)
            if not reader and verb is None:
                return False
            if reader and outright:
                return True
            words = self._actions(tools[tool_id].spec.manifest)[2]
            if intent.disowns(words, asked):
                return True
            if not reader and not thing.isdisjoint(words.stems):
                return False
            if not reader and given is not None and given in words.named:
                return False
            if not reader and applied is not None and applied in words.text:
                return False
            return not intent.does(words, asked, strict=reader, reader=reader)

        return misread

    def _asks_to_read(self, text: str, last: str | None) -> bool:
        """``intent.asks_to_read``, or a "what about …?" (``intent.asks_what_about``) that
        does not follow a tool that writes: it asks again what was asked last."""
        if intent.asks_to_read(text):
            return True
        tools = self.registry.tools
        after_writer = last is not None and last in tools and self._writes(last)
        return not after_writer and intent.asks_what_about(text)

    def _across(
        self, text: str, candidates: list[Candidate], named: frozenset[str]
    ) -> Callable[[str], bool]:
        """Per candidate, whether something other than its words vouches for it (``choose``),
        when its words are in the other language from the request's (``_other_language``).

        - A question, and a tool that only reads: every identifier the tool needs is in
          the request with its declared shape and a digit (an id, not a word shaped like
          "zhang.wei"), and no other reader among the candidates takes any of them,
          even optionally.
        - An order: the writer ``named`` by its verb (``_named_writer``), or, as for a
          question, the one writer the request's identifiers are for ("ak_c0ffee01
          泄露了，赶紧吊销！" of the only tool taking ``^ak_[0-9a-f]{8}$``).
        - Either: the one tool two named currencies are for (``_converter``, in ``named``).
        """
        question = intent.asks_to_read(text)
        verb = None if question else intent.order_verb(text)
        if not question and verb is None:
            return named.__contains__
        tools = self.registry.tools
        present = [c.tool_id for c in candidates if c.tool_id in tools]
        # the candidates of the request's kind: readers for a question, writers for an order
        kind = [t for t in present if _reads_only(tools[t].spec) == question]
        other_language = self._other_language(text)

        def by_identifiers(tool_id: str) -> bool:
            if tool_id in named:
                return True
            if tool_id not in kind or not other_language(tool_id):
                return False
            words = self._actions(tools[tool_id].spec.manifest)[2]
            if verb is not None and not intent.does(words, verb):
                return False  # an order's writer does its verb
            schema = self._schema(tools[tool_id].spec)
            keyed = identifier_parameters(schema)
            values = identifier_values(self.extractor, text, schema)
            if not keyed or len(values) < len(keyed):
                return False
            if not all(_DIGIT.search(v) for v in values):
                return False
            return all(
                takes_none_of(self.extractor, text, self._schema(tools[other].spec), values)
                for other in kind
                if other != tool_id
            )

        return by_identifiers

    def _other_language(self, text: str) -> Callable[[str], bool]:
        """Per tool, whether its own words are in the other language from ``text``'s: a
        request in Chinese (its identifiers aside) and a tool whose words hold almost none
        (``ACROSS_CJK_BELOW``), or a request in English and a tool written almost all in
        Chinese (``ACROSS_CJK_ABOVE``); aliases in the request's language bridge."""
        in_chinese = cjk_share(_VALUES.sub(" ", text)) > 0.5
        tools = self.registry.tools

        def other_language(tool_id: str) -> bool:
            share = self._actions(tools[tool_id].spec.manifest)[2].cjk
            return share < ACROSS_CJK_BELOW if in_chinese else share > ACROSS_CJK_ABOVE

        return other_language

    def _named_writer(self, text: str, allowed: frozenset[str]) -> frozenset[str]:
        """For an order (``intent.action_word``), the one allowed tool whose words name its
        verb's action class (报销 and "reimbursement": ``intent.does``, strictly), if it
        writes and its words are in the other language; empty otherwise. It joins the
        candidates wherever the coarse stage ranks it (a Chinese request ranks the tools
        described in Chinese first, whatever they mean), and ``_across`` vouches for it.

        In the request's own language the verb points to its one writer only with an
        identifier that writer takes: "kill WO-103390 pls, that machine is being
        decommissioned" is the work order cancel's, however far MiniLM, which weighs the
        object over the verb, ranks it. There a reader's words count only where they use
        the verb as an action, not as a state it shows ("cancelled")."""
        verb = intent.action_word(text)
        if verb is None:
            return frozenset()
        keyed = _names_a_key(text)
        thing = intent.applied_for(text, verb)
        if thing is not None:  # the tool must name what is applied for
            tools = self.registry.tools
            allowed = frozenset(
                t
                for t in allowed
                if t in tools and thing in self._actions(tools[t].spec.manifest)[2].text
            )
        named = self._doers(verb, acting=False) & allowed
        if len(named) == 1:
            (tool_id,) = named
            schema = self._schema(self.registry.tools[tool_id].spec)
            # Not when the request names an identifier and none of the ones the tool needs,
            # in their shape: "Cancel the Japan roaming pass on 0421654987" is no technician
            # visit's TV-…, and "取消 RA-445190 的自动扣款" no reservation's "e.g. RSV-48213"
            if (
                self._writes(tool_id)
                and self._other_language(text)(tool_id)
                and not (keyed and self._needs_another(text, schema, shaped=True))
            ):
                return named
        if not keyed:
            return frozenset()
        named = self._doers(verb, acting=True) & allowed
        if len(named) != 1:
            return frozenset()
        (tool_id,) = named
        schema = self._schema(self.registry.tools[tool_id].spec)
        takes = bool(identifier_parameters(schema)) and not self._needs_another(
            text, schema, shaped=True
        )
        return named if self._writes(tool_id) and takes else frozenset()

    def _plain_writer(self, text: str, allowed: frozenset[str]) -> str | None:
        """For an order that names no identifier, the one allowed writer in the request's
        language whose own words do its verb (``_doers``, acting), if the request gives
        every value it requires: "can u transfer 75.50 to the landlord" is
        ``create_transfer``'s (``amount``), however low MiniLM scores a short request
        against a long description. Not a writer whose description disowns the verb
        ("Does not resend … invitations" of "resend the invite to …"). The caller vouches
        for it only where the words rank it within ``PLAIN_ORDER_MARGIN`` of the best:
        "add dev@contractor.io to the workspace w/ admin" is no API key's, though "add" is
        the create class and "admin" one of the key's scopes."""
        verb = intent.action_word(text)
        if verb is None or _names_a_key(text):
            return None
        other = self._other_language(text)
        named = [t for t in self._doers(verb, acting=True) & allowed if not other(t)]
        if len(named) != 1 or not self._writes(named[0]):
            return None
        spec = self.registry.tools[named[0]].spec
        required = self._schema(spec).get("required") or []
        if not required or self.extractor.extract(text, self._schema(spec)).missing:
            return None
        if intent.disowns(self._actions(spec.manifest)[2], verb):
            return None
        return named[0]

    def _doers(self, verb: str, *, acting: bool) -> frozenset[str]:
        """The registered tools whose own words name ``verb``'s action class (strictly);
        with ``acting``, a reader's only in a form other than a past participle."""
        key = (self.registry.revision, verb, acting, gloss_ready())
        named = self._naming.get(key)
        if named is None:
            if len(self._naming) > 256:
                self._naming.clear()
            named = self._naming[key] = frozenset(
                tool_id
                for tool_id, tool in self.registry.tools.items()
                if intent.does(
                    self._actions(tool.spec.manifest)[2],
                    verb,
                    strict=True,
                    reader=acting and not self._writes(tool_id),
                )
            )
        return named

    def _converter(self, text: str, allowed: frozenset[str]) -> frozenset[str]:
        """For a request naming two currencies, one of them as converted into
        ("今天美元兑人民币汇率多少", "1000欧元能换多少港币"), the one allowed tool that takes a
        pair of them (``currencies.takes_a_pair``), if its words are in the other
        language; empty otherwise. Currencies, like identifiers, do not depend on the
        language a request is written in, and a source and a target currency are what
        such a tool needs. It joins the candidates wherever the coarse stage ranks it,
        and ``_across`` vouches for it (a question's reader, or for an order no verb
        names a writer of)."""
        mentions = currencies.mentioned(text)
        if len({m.code for m in mentions}) < 2 or not any(m.role == "to" for m in mentions):
            return frozenset()  # two currencies, one converted into ("美元和欧元的流水": not)
        revision = self.registry.revision
        if self._converters is None or self._converters[0] != revision:
            tools = self.registry.tools.items()
            pairs = frozenset(
                t for t, tool in tools if currencies.takes_a_pair(self._schema(tool.spec))
            )
            self._converters = (revision, pairs)
        found = self._converters[1] & allowed
        if len(found) != 1 or not self._other_language(text)(next(iter(found))):
            return frozenset()
        return found

    def _mixed(self) -> bool:
        """Whether the registry holds both tools that only read and tools that write (not
        a catalogue of POSTs: BFCL and MetaTool in the bench); memoised per revision."""
        revision = self.registry.revision
        if self._kinds is None or self._kinds[0] != revision:
            reads = {_reads_only(tool.spec) for tool in self.registry.tools.values()}
            self._kinds = (revision, len(reads) == 2)
        return self._kinds[1]

    def _writes_too(self, tool_id: str) -> bool:
        """An idempotent tool whose words do not say it reads (``rag_ingest``: a POST
        that stores, safe to repeat): a reader by its method only."""
        spec = self.registry.tools[tool_id].spec
        return _method(spec) not in ("GET", "HEAD", "") and self._actions(spec.manifest)[1]

    def _writes(self, tool_id: str) -> bool:
        spec = self.registry.tools[tool_id].spec
        return not _reads_only(spec) and self._actions(spec.manifest)[1]

    def _offered_actions(self, manifest: dict[str, Any]) -> frozenset[str] | None:
        return self._actions(manifest)[0]

    def _named_actions(self, manifest: dict[str, Any]) -> frozenset[str] | None:
        """``vocabulary.named_actions``, memoised with :meth:`_actions`."""
        self._actions(manifest)
        return self._offered[id(manifest)][5]

    def _actions(
        self, manifest: dict[str, Any]
    ) -> tuple[frozenset[str] | None, bool, intent.OwnWords]:
        """``vocabulary.offered_actions``, whether the tool's words make it a writer if its
        endpoint does (``intent.writes``), and its words for ``intent.does``; memoised per
        manifest (a changed tool is a new one)."""
        key = id(manifest)
        found, ready = self._offered.get(key), gloss_ready()
        # (read again once the dictionary is: a Chinese name's gloss is part of its words)
        if found is None or found[0] is not manifest or found[6] != ready:
            if len(self._offered) > 4096:
                self._offered.clear()
            offered = vocabulary.offered_actions(manifest)
            writer = intent.writes(manifest, reads_only=False)
            words = intent.own_words(manifest)
            refused = vocabulary.disclaimed_actions(manifest)
            named = vocabulary.named_actions(manifest) if offered is None else None
            found = (manifest, offered, writer, words, refused, named, ready)
            self._offered[key] = found
        return found[1], found[2], found[3]

    def _schema(self, spec: ToolSpec) -> dict[str, Any]:
        """The input schema as the router reads it (``bounds.routing_schema``, an unshaped
        identifier given its namesakes' pattern: ``kin``), memoised per tool spec (a changed
        tool is a new one) and registry revision."""
        return self._schemas_of(spec)[0]

    def _own_schema(self, spec: ToolSpec) -> dict[str, Any]:
        """``bounds.routing_schema`` of the tool's own schema (nothing lent by ``kin``):
        the very object :meth:`_schema` is when nothing is lent."""
        return self._schemas_of(spec)[1]

    def _schemas_of(self, spec: ToolSpec) -> tuple[dict[str, Any], dict[str, Any]]:
        """(:meth:`_schema`, :meth:`_own_schema`), memoised together."""
        key, revision = id(spec), self.registry.revision
        found = self._schemas.get(key)
        if found is None or found[0] is not spec or found[3] != revision:
            if len(self._schemas) > 4096:
                self._schemas.clear()
            own = bounds.routing_schema(spec.input_schema)
            # the clock the tool's description sets ("Times are Vancouver local time")
            own = with_tool_zone(own, spec.description or "")
            # the names it gives an enum's codes ("Port codes: PSM = Portsmere")
            own = codes.with_coded_names(own, spec.description or "")
            read = kin.with_kin(own, self._kin_patterns(), spec.description or "")
            found = self._schemas[key] = (spec, read, own, revision)
        return found[1], found[2]

    def _kin_patterns(self) -> kin.Patterns:
        """``kin.Patterns`` of the registry at its revision: brought there with the tools
        changed since (``changed_since``), or read whole when that is not known."""
        at, patterns = self._kin
        revision, tools = self.registry.revision, self.registry.tools
        if at != revision:
            changed = self.registry.changed_since(at) if 0 <= at < revision else None
            if changed is None:
                patterns = kin.Patterns()
                changed = frozenset(tools)
            for tool_id in changed:
                tool = tools.get(tool_id)
                patterns.put(tool_id, None if tool is None else tool.spec.input_schema)
            self._kin = (revision, patterns)
        return patterns

    def _attribute_words(self, manifest: dict[str, Any]) -> tuple[frozenset[str], str]:
        """The words a request may name as what it changes (``vocabulary.attribute_text``,
        Chinese read in English too) and the text itself; memoised per manifest."""
        key, ready = id(manifest), gloss_ready()
        found = self._attributes.get(key)
        if found is None or found[0] is not manifest or found[3] != ready:
            if len(self._attributes) > 4096:
                self._attributes.clear()
            text = vocabulary.attribute_text(manifest)
            words = set(tokenize(text))
            if ready:
                words |= set(tokenize(gloss(text, latin=False)))
            found = self._attributes[key] = (manifest, frozenset(words), text, ready)
        return found[1], found[2]

    def _disclaimed_actions(self, manifest: dict[str, Any]) -> frozenset[str]:
        """``vocabulary.disclaimed_actions``, memoised with :meth:`_actions`."""
        self._actions(manifest)
        return self._offered[id(manifest)][4]

    def _validate(self, tool_id: str, arguments: dict[str, Any]) -> str | None:
        tool = self.registry.get(tool_id)
        if tool is None:
            return f"Tool {tool_id!r} is no longer registered."
        # A number too large to be finite ("1e999" from a model, a long run of digits) is
        # a valid JSON Schema number but no JSON can carry it: refused here, not a 500.
        where = unstorable_at(arguments)
        if where is not None:
            return f"{where or 'arguments'}: not a value JSON can carry (a number too large, a NUL)"
        errors = sorted(tool.spec.validator.iter_errors(arguments), key=lambda e: list(e.path))
        if not errors:
            return None
        return "; ".join(
            f"{'.'.join(map(str, e.path)) or 'arguments'}: {e.message}" for e in errors[:5]
        )

    def _fine_offline(
        self,
        query: str,
        candidates: list[Candidate],
        previous: Known,
        last_tool: str | None = None,
        named: frozenset[str] = frozenset(),
        english: tuple[str, Callable[[str], bool]] | None = None,
    ) -> RouteDecision:
        """``named``: the writer an order's verb names across languages (``_named_writer``)
        and the converter two currencies name (``_converter``);
        ``english``: a Chinese request's English reading, and which tools are described
        only in English (``_in_english``)."""
        text = _read_as(query)
        drop, misread = self._in_english(english, candidates, text, last_tool)
        choice = choose(
            candidates,
            threshold=self.settings.threshold,
            fits=self._fits_fullest(
                query,
                candidates,
                lambda tool_id: (
                    self._fits(query, tool_id) or self._fits_the_last_call(query, tool_id, previous)
                ),
            ),
            last_tool=last_tool,
            continues=lambda tool_id: gives_new_values(
                self.extractor,
                query,
                self._schema(self.registry.tools[tool_id].spec),
                previous.previous,
            ),
            drop=drop,
            misread=misread,
            across=self._across(text, candidates, named),
            asks_again=last_tool is not None and intent.asks_what_about(text),
        )
        if choice.candidate is None:
            surest = sorted(candidates, key=lambda c: -c.confidence)[:3]
            best = ", ".join(f"{c.tool_id} ({c.confidence:.2f})" for c in surest)
            raise NoMatchingTool(
                f"No tool matches confidently enough (threshold {self.settings.threshold})."
                + (f" Best candidates: {best}." if best else ""),
                decision=RouteDecision(
                    None,
                    confidence=choice.best.confidence if choice.best else 0.0,
                    candidates=candidates,
                    why=f"below threshold: {choice.why}",
                ),
            )
        top = choice.candidate
        filled = self._fill(query, top.tool_id, previous)
        hint = "context" if filled.from_context or filled.from_memory else "semantic_match"
        why = choice.why
        if filled.from_context:
            why += f"; {', '.join(filled.from_context)} from the session's previous call"
        if filled.from_memory:
            why += f"; {', '.join(filled.from_memory)} from what the user told the agent before"
        if filled.by_meaning:
            why += f"; {', '.join(filled.by_meaning)} the option closest to the request's meaning"
        if filled.by_default:
            why += f"; {', '.join(filled.by_default)} the schema's default (the request says none)"
        decision = RouteDecision(
            top.tool_id, filled.arguments, top.confidence, hint, candidates, why=why
        )
        if filled.missing:  # (in the tool's own words: no shape lent by ``kin``)
            if top.confidence < self.settings.unfilled_threshold and top.tool_id != last_tool:
                raise _unfilled(top, filled, candidates, why, self.settings)
            schema = self._own_schema(self.registry.tools[top.tool_id].spec)
            raise RoutedArgumentsInvalid(filled.missing_message(schema), decision=decision)
        error = self._validate(top.tool_id, filled.arguments)
        if error is not None:
            raise RoutedArgumentsInvalid(f"Invalid arguments: {error}", decision=decision)
        return decision

    async def _fine_llm(
        self, query: str, candidates: list[Candidate], recent: Sequence[PastCall]
    ) -> RouteDecision:
        assert self.provider is not None
        if not candidates:
            raise NoMatchingTool("No candidate tools.", decision=RouteDecision(None))
        manifests = [self.registry.tools[c.tool_id].spec.manifest for c in candidates]
        result = await rerank(
            self.provider, query, manifests, recent=recent, validate=self._validate
        )
        scores = {c.tool_id: c for c in candidates}
        if result.tool_id is None:
            raise NoMatchingTool(
                f"The model found no fitting tool: {result.reason}",
                decision=RouteDecision(
                    None, candidates=candidates, route_hint="llm_rerank", why="llm chose none"
                ),
            )
        confidence = scores[result.tool_id].confidence
        why = f"llm chose {result.tool_id} among {len(candidates)} candidates"
        if result.attempts > 1 and result.validation_error is None:
            why += " after one validation retry"
        decision = RouteDecision(
            result.tool_id, result.arguments, confidence, "llm_rerank", candidates, why=why
        )
        if result.validation_error is not None:
            raise RoutedArgumentsInvalid(
                f"Invalid arguments after {result.attempts} attempts: {result.validation_error}",
                decision=decision,
            )
        return decision


def _describe(span: trace.Span, decision: RouteDecision) -> None:
    span.set_attribute("route.hint", decision.route_hint)
    span.set_attribute("route.tool_id", decision.tool_id or "")
    span.set_attribute("route.confidence", decision.confidence)
    span.set_attribute("route.why", decision.why)
    span.set_attribute(
        "route.candidates",
        [f"{c.tool_id}:{c.score:.3f}:{c.confidence:.3f}" for c in decision.candidates],
    )


_LATIN_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_LONG_NUMBER = re.compile(r"(?<![\d.])\d{8,}(?![\d.])")  # a phone or account number


def _names_a_key(text: str) -> bool:
    """Whether ``text`` names an identifier: one with a letter (TV-448120), or a long number
    (0421654987); not a year, an amount or a count."""
    return bool(_LONG_NUMBER.search(text)) or any(
        re.search(r"[A-Za-z]", m.group(0)) and re.search(r"\d", m.group(0))
        for m in _LATIN_TOKEN.finditer(text)
    )


def _carry_on(
    extraction: Extraction,
    query: str,
    tool_id: str,
    schema: dict[str, Any],
    last: PastCall | None,
) -> None:
    """A follow-up that continues the session's last call to the same tool ("what about
    Thursday?" after a search for spin classes at Riverside in the evening, "and the
    midterm?", "same for CC-1300") is that call again with what it changes: each of the
    last call's values the request does not give is kept, optional ones too."""
    if last is None or last.tool_id != tool_id:
        return
    if not (is_elliptical(query) or continues_previous(query) or refers_back(query)):
        return
    properties = schema.get("properties") or {}
    for name, value in last.arguments.items():
        if name in properties and name not in extraction.arguments:
            extraction.arguments[name] = value
            extraction.from_context.append(name)
            if name in extraction.missing:
                extraction.missing.remove(name)


def _defaulted(extraction: Extraction, query: str, schema: dict[str, Any]) -> None:
    """A required parameter the request leaves unsaid takes the default its schema gives
    ("just me" books ``ticketCount``'s default of 1): the tool's author said what it is
    when nobody says. Only for the call: whether a tool fits the request is still read
    from what the request says."""
    properties = schema.get("properties") or {}
    stated = states_a_number(query) if extraction.missing else False
    for name in list(extraction.missing):
        spec = properties.get(name)
        if not isinstance(spec, dict) or spec.get("default") is None:
            continue
        default = spec["default"]
        if spec.get("type") in ("integer", "number") and stated:
            continue  # (a count the request writes and the rules did not read: asked)
        if Draft202012Validator(spec).is_valid(default):
            extraction.arguments[name] = default
            extraction.missing.remove(name)
            extraction.by_default.append(name)


def _followed(text: str, recent: Sequence[PastCall]) -> frozenset[str]:
    """The tool just used, for a short follow-up ("and for Pied Piper?", "same for
    CC-1300"): it stays among the candidates wherever its words rank it, and ``choose``
    decides whether it continues."""
    follows = is_elliptical(text) or continues_previous(text)
    return frozenset({recent[0].tool_id}) if recent and follows else frozenset()
