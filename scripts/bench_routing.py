"""Routing benchmark: coarse recall, offline /run accuracy, rejection, and /run latency.

    make bench-routing DATASET=path/to/routing/metatool
    make bench-routing DATASET=path/to/routing/bfcl

The folder holds ``tools.jsonl`` and ``queries.jsonl`` (and optionally
``queries_irrelevant.jsonl``). Tools go into a real registry (embedded
Postgres and Redis, or DATABASE_URL / REDIS_URL) through ``POST
/tools/register`` of an in-process gateway; queries go through the real
routing code and ``POST /run`` with ``dry_run``.

Tool ids the manifest schema does not accept (``math.factorial``,
``Tax_Calculator``) are mapped (``math_factorial``, ``tax_calculator``), the
original kept as the tool's ``name``; every figure is scored against the
original ids.

Large query files (over 5,000 queries, i.e. MetaTool) are evaluated on their
last 20%, the stable test split; ``--fraction`` overrides.

``--examples N`` gives each tool up to N ``examples`` (the manifest field) taken
from the queries before the test split whose only gold tool it is: what a team
that wrote a few requests per tool gets. The test split is never read for them.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import httpx
import numpy as np
import typer
from asgi_lifespan import LifespanManager

from reach_common.datasets import read_jsonl
from reach_common.embedded import temporary_backends

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
THRESHOLDS = (0.0, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
# Building the index embeds every tool at startup: slow on a busy machine (default 5 s).
STARTUP_TIMEOUT_S = 300
EXAMPLE_MAX_CHARS = 500  # the manifest schema's limit for one example
# The manifest schema's limits for a tool's description and name.
DESCRIPTION_MIN, DESCRIPTION_MAX, NAME_MAX = 10, 4000, 200
JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
MAX_EXAMPLES = 50  # and for how many a tool may have


def read_tools(path: Path) -> list[dict[str, Any]]:
    """A dataset's tools, each id once (its first entry), ids as strings. A line with no
    ``tool_id`` or a repeated id is left out, and said so."""
    tools: dict[str, dict[str, Any]] = {}
    unnamed = repeated = 0
    for row in read_jsonl(path):
        tool_id = str(row.get("tool_id") or "").strip()
        if not tool_id:
            unnamed += 1
        elif tool_id in tools:
            repeated += 1
        else:
            tools[tool_id] = row | {"tool_id": tool_id}
    if unnamed or repeated:
        print(f"{path.name}: left out {unnamed} lines without a tool_id, {repeated} repeated ids")
    return list(tools.values())


def read_queries(path: Path) -> list[dict[str, Any]]:
    """A dataset's queries with ``query`` a string and ``gold`` a list of ids (a
    single id or null is accepted too). A line with no text is left out, and said so."""
    queries = []
    empty = 0
    for row in read_jsonl(path):
        text = str(row.get("query") or "")
        gold = row.get("gold")
        gold = [] if gold is None else [gold] if isinstance(gold, str | int) else gold
        if not text.strip():
            empty += 1
            continue
        queries.append(row | {"query": text, "gold": [str(g) for g in gold]})
    if empty:
        print(f"{path.name}: left out {empty} lines without a query")
    return queries


def map_ids(original_ids: list[str]) -> dict[str, str]:
    """original id → an id the manifest schema accepts, unique."""
    mapped: dict[str, str] = {}
    taken: set[str] = set()
    for original in original_ids:
        if original in mapped:
            continue
        base = (
            original
            if ID_PATTERN.match(original)
            else re.sub(r"[^a-z0-9_]+", "_", original.lower())
        )
        base = base.strip("_") or "tool"
        if not base[0].isalpha():
            base = f"t_{base}"
        base = base[:60]
        candidate, n = base, 2
        while candidate in taken:
            candidate, n = f"{base[:57]}_{n}", n + 1
        taken.add(candidate)
        mapped[original] = candidate
    return mapped


def training_examples(queries: list[dict[str, Any]], per_tool: int) -> dict[str, list[str]]:
    """Up to ``per_tool`` single-gold queries per tool (original ids), in file order,
    each within the manifest schema's length limit."""
    examples: dict[str, list[str]] = {}
    for query in queries:
        gold, text = query.get("gold") or [], query["query"].strip()
        if len(gold) != 1 or not text or len(text) > EXAMPLE_MAX_CHARS:
            continue
        chosen = examples.setdefault(gold[0], [])
        if len(chosen) < per_tool and text not in chosen:
            chosen.append(text)
    return examples


def manifest(
    tool: dict[str, Any], tool_id: str, examples: list[str] | None = None
) -> dict[str, Any]:
    """The manifest registering a dataset's tool, fitted to the manifest schema's limits
    (see :func:`describe` and :func:`object_schema`)."""
    return {
        "tool_id": tool_id,
        "name": tool["tool_id"][:NAME_MAX],
        "namespace": "bench",
        "description": describe(tool),
        "input_schema": object_schema(tool.get("input_schema")),
        "endpoint": {"type": "http", "method": "POST", "url": "http://127.0.0.1:9/unused"},
        "permission": "public",
    } | ({"examples": examples} if examples else {})


def describe(tool: dict[str, Any]) -> str:
    """The tool's description (its id when it has none) within the schema's length limits:
    a short one is prefixed with the tool's id, a long one cut at a word."""
    name = tool["tool_id"]
    text = str(tool.get("description") or "")
    text = text if text.strip() else name
    if len(text.strip()) < DESCRIPTION_MIN:
        text = text.strip()
        text = f"{name}: {text}" if text != name else f"The {name} tool."
    if len(text) < DESCRIPTION_MIN:
        text = f"The tool named {text}"
    if len(text) > DESCRIPTION_MAX:
        text = text[:DESCRIPTION_MAX].rsplit(" ", 1)[0]
    return text


# Type names some datasets use that JSON Schema spells otherwise (BFCL's own, Python's).
TYPE_NAMES = {
    "dict": "object",
    "float": "number",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
}


def object_schema(schema: Any) -> dict[str, Any]:
    """``schema`` as the object schema a manifest needs: an absent or non-object schema
    becomes one with no properties, and type names JSON Schema does not know are mapped
    (``dict`` -> ``object``, ``float`` -> ``number``; ``any`` dropped). Valid JSON Schema
    passes unchanged."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    fitted = _json_schema_types(schema)
    if fitted.get("type") != "object":
        fitted["type"] = "object"
    if not isinstance(fitted.get("properties", {}), dict):
        fitted["properties"] = {}
    required = fitted.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        del fitted["required"]
    return fitted


def _json_schema_types(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema_types(item) for item in node]
    if not isinstance(node, dict):
        return node
    fitted = {key: _json_schema_types(value) for key, value in node.items()}
    kind = fitted.get("type")
    if isinstance(kind, str) and kind not in JSON_TYPES:
        if kind in TYPE_NAMES:
            fitted["type"] = TYPE_NAMES[kind]
        else:
            del fitted["type"]  # "any" and other unknown names: any value
    return fitted


def relaxed(schema: dict[str, Any]) -> dict[str, Any]:
    """An object schema the gateway accepts whatever ``schema`` held: its property names and
    descriptions only (for a dataset tool whose schema the gateway refused)."""
    properties = schema.get("properties") or {}
    kept = {
        str(name)[:200]: {"description": str(value.get("description"))[:500]}
        if isinstance(value, dict) and value.get("description")
        else {}
        for name, value in list(properties.items())[:200]
    }
    return {"type": "object", "properties": kept}


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else float("nan")


ADMIN = {"X-User-Id": "bench-admin", "X-User-Roles": "admin"}  # a claimed registry admin


async def register_all(client: httpx.AsyncClient, manifests: list[dict[str, Any]]) -> None:
    """Register every manifest. One the gateway refuses for its schema is registered again
    with :func:`relaxed` in its place; one refused again is left out. Either is said."""
    sem = asyncio.Semaphore(4)
    relaxed_ids: list[str] = []
    refused: dict[str, str] = {}

    async def one(m: dict[str, Any]) -> None:
        async with sem:
            r = await client.post("/tools/register", json=m, headers=ADMIN)
            if r.status_code == 422:
                relaxed_ids.append(m["tool_id"])
                m["input_schema"] = relaxed(m["input_schema"])
                r = await client.post("/tools/register", json=m, headers=ADMIN)
            if r.status_code in (200, 201):
                return
            if r.status_code >= 500 or r.status_code in (401, 403):
                raise SystemExit(f"register {m['tool_id']} failed: {r.status_code} {r.text}")
            refused[m["tool_id"]] = f"{r.status_code} {r.text[:300]}"

    await asyncio.gather(*(one(m) for m in manifests))
    if relaxed_ids:
        print(
            f"{len(relaxed_ids)} tools' input schemas were refused; registered with their "
            f"parameter names only: {', '.join(sorted(relaxed_ids)[:10])}"
        )
    if refused:
        first = next(iter(refused.items()))
        print(f"{len(refused)} tools could not be registered (first: {first[0]}: {first[1]})")
        manifests[:] = [m for m in manifests if m["tool_id"] not in refused]


async def run_bench(
    dataset: Path,
    fraction: float | None,
    limit: int | None,
    llm_limit: int,
    int8: bool | None,
    examples_per_tool: int = 0,
    misses: Path | None = None,
) -> None:
    from gateway.app import create_app
    from gateway.settings import Settings

    tools = read_tools(dataset / "tools.jsonl")
    queries = read_queries(dataset / "queries.jsonl")
    if fraction is None:
        fraction = 0.2 if len(queries) > 5000 else 1.0
    split = int(len(queries) * (1 - fraction))
    if examples_per_tool and split == 0:
        raise SystemExit("--examples needs queries before the test split (set --fraction < 1)")
    examples = training_examples(queries[:split], examples_per_tool)
    queries = queries[split:]
    if limit:
        queries = queries[:limit]
    if not tools or not queries:
        raise SystemExit(
            f"{dataset}: nothing to score ({len(tools)} tools, {len(queries)} queries)"
        )
    irrelevant_path = dataset / "queries_irrelevant.jsonl"
    irrelevant = read_queries(irrelevant_path) if irrelevant_path.exists() else []
    extra = [
        d | {"tool_id": str(d["tool_id"])}
        for q in irrelevant
        for d in q.get("candidates_defs") or []
        if isinstance(d, dict) and d.get("tool_id")
    ]
    known = {t["tool_id"] for t in tools}
    extra = list({d["tool_id"]: d for d in extra if d["tool_id"] not in known}.values())
    all_tools = tools + extra
    ids = map_ids([t["tool_id"] for t in all_tools])
    back = {v: k for k, v in ids.items()}

    with temporary_backends() as (database_url, redis_url):
        settings = Settings(
            database_url=database_url,
            redis_url=redis_url,
            log_level="WARNING",
            route_rate_limit=None,  # a benchmark routes as fast as it can
            auth_mode="permissive",
            tool_auto_discovery=False,
        )
        if int8 is not None:
            settings.embedder_int8 = int8
        app = create_app(settings)
        async with LifespanManager(app, startup_timeout=STARTUP_TIMEOUT_S) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                started = time.perf_counter()
                await register_all(
                    client,
                    [manifest(t, ids[t["tool_id"]], examples.get(t["tool_id"])) for t in all_tools],
                )
                print(
                    f"registered {len(all_tools)} tools in {time.perf_counter() - started:.1f} s "
                    f"({sum(1 for k, v in ids.items() if k != v)} ids mapped)"
                )
                if examples_per_tool:
                    given = sum(len(e) for e in examples.values())
                    print(
                        f"examples: {given} from the queries before the test split "
                        f"(up to {examples_per_tool} a tool, {len(examples)} tools)"
                    )
                router = app.state.runtime.router
                print(f"embedder: {router.embedder.compute} matrix products")
                await router.registry.refresh()
                index = await router.index()
                report_coarse(index, router.embedder, queries, ids, tools)
                missed = await report_run(client, queries, ids, back, misses)
                report_duplicates(router.embedder, all_tools, missed, len(queries))
                await report_breakdown(router, queries)
                if irrelevant:
                    report_rejection(index, router.embedder, queries, irrelevant, ids)
                await report_llm(client, router, queries, ids, back, llm_limit)


def report_coarse(
    index: Any,
    embedder: Any,
    queries: list[dict[str, Any]],
    ids: dict[str, str],
    tools: list[dict[str, Any]],
) -> None:
    pooled = {ids[t["tool_id"]] for t in tools}
    vectors = embedder.embed([q["query"] for q in queries], batch_size=64)
    print(f"\ncoarse stage over {len(pooled)} tools, {len(queries)} queries:")
    print(f"  {'':8s} {'R@1':>6s} {'R@5':>6s} {'R@10':>6s}")
    for label, alpha in (("dense", 1.0), ("lexical", 0.0), ("fused", None)):
        hits = {1: 0, 5: 0, 10: 0}
        for query, vector in zip(queries, vectors, strict=True):
            gold = {ids[g] for g in query["gold"] if g in ids}
            top = [
                c.tool_id
                for c in index.search(query["query"], vector, allowed=pooled, k=10, alpha=alpha)
            ]
            for k in hits:
                hits[k] += bool(gold & set(top[:k]))
        n = sum(1 for query in queries if query["gold"]) or 1
        print(f"  {label:8s} {hits[1] / n:6.3f} {hits[5] / n:6.3f} {hits[10] / n:6.3f}")


async def dry_run(
    client: httpx.AsyncClient, query: str, session: str
) -> tuple[dict[str, Any], float]:
    """One ``POST /run`` with ``dry_run``: its body and its latency in ms."""
    body = {
        "session_id": session,
        "user_query": query,
        "dry_run": True,
        "user_context": {"user_id": "bench"},
    }
    started = time.perf_counter()
    response = await client.post("/run", json=body)
    return response.json(), (time.perf_counter() - started) * 1000


async def report_run(
    client: httpx.AsyncClient,
    queries: list[dict[str, Any]],
    ids: dict[str, str],
    back: dict[str, str],
    misses: Path | None = None,
) -> list[dict[str, Any]]:
    """Top-1 of ``POST /run``; ``misses``: a JSONL file of the wrong answers (query, gold,
    what was chosen and the route), for reading. Returns the wrong answers."""
    correct = 0
    missed: list[dict[str, Any]] = []
    routed: list[int] = []
    miss_latency: list[float] = []
    wrong: Counter[str] = Counter()
    for i, query in enumerate(queries):
        data, elapsed = await dry_run(client, query["query"], f"bench-{i}")
        route = data.get("route") or {}
        if route.get("route_hint") != "route_cache":
            miss_latency.append(elapsed)
        # Only confident routes are cached (ROUTE_CACHE_MIN_CONFIDENCE): time hits on those.
        if data.get("success") and "not cached" not in str(route.get("why")):
            routed.append(i)
        chosen = back.get(data.get("tool_id") or "")
        # A query with no gold tool (out of the format, but seen) is right when refused.
        right = chosen in query["gold"] if query["gold"] else chosen is None
        correct += right
        if not right:
            kind = _failure(data, route, {ids[g] for g in query["gold"] if g in ids})
            wrong[kind] += 1
            missed.append(query | {"chosen": chosen, "kind": kind, "route": route})
    if misses is not None:
        lines = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in missed)
        await asyncio.to_thread(misses.write_text, lines)
    hit_latency: list[float] = []
    for i in routed[-300:]:  # the newest entries: the cache is bounded
        data, elapsed = await dry_run(client, queries[i]["query"], f"bench-{i}")
        if (data.get("route") or {}).get("route_hint") == "route_cache":
            hit_latency.append(elapsed)
    print(
        f"\noffline POST /run (dry_run), top-1 accuracy: {correct / len(queries):.3f} ({correct}/{len(queries)})"
    )
    print(
        "  wrong answers by kind: "
        + (", ".join(f"{kind} {n}" for kind, n in wrong.most_common()) or "none")
    )
    print(
        f"POST /run latency, cache miss: p50 {statistics.median(miss_latency):.2f} ms, p95 {pct(miss_latency, 95):.2f} ms (n={len(miss_latency)})"
    )
    print(
        f"POST /run latency, cache hit:  p50 {statistics.median(hit_latency or [float('nan')]):.2f} ms, p95 {pct(hit_latency, 95):.2f} ms (n={len(hit_latency)})"
    )
    return missed


DUPLICATE_COSINE = 0.9


def report_duplicates(
    embedder: Any, tools: list[dict[str, Any]], missed: list[dict[str, Any]], n: int
) -> None:
    """How many wrong answers chose a tool described as the gold one is (cosine of the two
    descriptions at least ``DUPLICATE_COSINE``): a pooled catalogue such as BFCL's holds
    the same task under several names (``calculate_factorial`` and ``math.factorial``,
    ``calculate_BMI`` and ``calculate_bmi``), and only one of them is gold for a query.
    Top-1 above counts these as wrong; this says how much of the gap they are."""
    described = {t["tool_id"]: str(t.get("description") or t["tool_id"]) for t in tools}
    pairs = [
        (m["chosen"], [g for g in m["gold"] if g in described])
        for m in missed
        if m.get("chosen") in described
    ]
    texts = sorted({t for chosen, golds in pairs for t in (chosen, *golds)})
    if not texts:
        return
    vectors = dict(zip(texts, embedder.embed([described[t] for t in texts]), strict=True))
    same = sum(
        any(float(vectors[chosen] @ vectors[g]) >= DUPLICATE_COSINE for g in golds)
        for chosen, golds in pairs
    )
    print(
        f"  of {len(missed)} wrong answers, {same} chose a tool whose description is within "
        f"cosine {DUPLICATE_COSINE} of the gold tool's (the same task under another name); "
        f"top-1 counting those as right: {(n - len(missed) + same) / n:.3f}"
    )


async def report_breakdown(router: Any, queries: list[dict[str, Any]]) -> None:
    """Where a cache miss spends its time: each routing step timed on its own, in process,
    on the same queries and inputs as ``POST /run`` gives them (the bench's caller sees
    every registered tool). The rest of a miss is HTTP, auth and the session context."""
    from gateway.routing.context import Known
    from gateway.routing.text import instruction
    from reach_common.auth.caller import Caller

    index = await router.index()
    caller = Caller(user_id="bench", via="user_context")
    allowed = router.visible(caller, None)
    scope, has_examples = router._scope(index, allowed)
    needs_shape = has_examples or router.provider is not None
    scratch = f"bench-breakdown-{scope}"  # a scope of its own: the real one is untouched
    steps: dict[str, list[float]] = {"embed": [], "search": [], "fill": [], "cache": []}
    for query in queries:
        text = instruction(query["query"])
        started = time.perf_counter()
        router._recent_vectors.pop(text, None)  # as on a miss: the model runs
        vector, shape_vector = router._embed(text, needs_shape)
        steps["embed"].append(_ms_since(started))
        started = time.perf_counter()
        candidates = index.search(
            text, vector, allowed=allowed, k=router.settings.top_k, shape_vector=shape_vector
        )
        steps["search"].append(_ms_since(started))
        started = time.perf_counter()
        router._fill(query["query"], candidates[0].tool_id, Known({}))
        steps["fill"].append(_ms_since(started))
        started = time.perf_counter()
        await router.cache.probe(scratch, text, similar=shape_vector is not None)
        await router.cache.put(scratch, text, shape_vector, candidates[0].tool_id, 0.9)
        steps["cache"].append(_ms_since(started))
    await router.cache.redis.delete(*router.cache._keys(scratch))
    both = [a + b for a, b in zip(steps["search"], steps["fill"], strict=True)]
    texts = "query and its shape" if needs_shape else "the query alone (no tool has examples)"
    print(f"\ncache-miss breakdown over {len(allowed)} visible tools ({len(queries)} queries):")
    print(f"  embedding: {texts}")
    rows = [("  embedding", steps["embed"]), ("  index search", steps["search"])]
    rows += [("  argument filling", steps["fill"]), ("  search + filling", both)]
    rows += [("  route cache (probe + put)", steps["cache"])]
    for label, values in rows:
        print(f"{label:30s} p50 {statistics.median(values):6.2f} ms, p95 {pct(values, 95):6.2f} ms")


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _failure(data: dict[str, Any], route: dict[str, Any], gold: set[str]) -> str:
    """Why a /run answer was wrong: rejected, a cache hit, or a wrong pick (the gold tool
    first among the coarse candidates or not)."""
    if data.get("tool_id") is None:
        return "rejected (below threshold)"
    if not gold:
        return "a tool chosen where none serves"
    if route.get("route_hint") == "route_cache":
        return "cache hit on another tool"
    candidates = [c.get("tool_id") for c in route.get("candidates") or []]
    if candidates and candidates[0] in gold:
        return "gold ranked first, another chosen"
    return "gold not ranked first" if gold & set(candidates) else "gold not in the candidates"


def report_rejection(
    index: Any,
    embedder: Any,
    queries: list[dict[str, Any]],
    irrelevant: list[dict[str, Any]],
    ids: dict[str, str],
) -> None:
    from gateway.routing.service import RouterSettings

    def offered(names: list[Any]) -> set[str]:
        return {ids[str(n)] for n in names if str(n) in ids}

    relevant = [q for q in queries if offered(q.get("candidates") or [])]
    irrelevant = [
        q
        for q in irrelevant
        if offered(
            [d.get("tool_id") for d in q.get("candidates_defs") or [] if isinstance(d, dict)]
        )
    ]
    if not relevant or not irrelevant:
        print("\nrejection vs accuracy: not measured (no queries list the candidates offered)")
        return
    rel_vectors = embedder.embed([q["query"] for q in relevant], batch_size=64)
    irr_vectors = embedder.embed([q["query"] for q in irrelevant], batch_size=64)
    rel = []
    for query, vector in zip(relevant, rel_vectors, strict=True):
        found = index.search(query["query"], vector, allowed=offered(query["candidates"]), k=1)
        gold = offered(query["gold"])
        rel.append((found[0].confidence, found[0].tool_id in gold) if found else (0.0, False))
    irr = []
    for query, vector in zip(irrelevant, irr_vectors, strict=True):
        allowed = offered([d.get("tool_id") for d in query["candidates_defs"]])
        found = index.search(query["query"], vector, allowed=allowed, k=1)
        irr.append(found[0].confidence if found else 0.0)
    default = RouterSettings().threshold
    print("\nrejection vs accuracy, each query routed among the candidates it was offered")
    print(
        f"({len(irrelevant)} irrelevant queries, {len(relevant)} relevant; default threshold {default}):"
    )
    print(f"  {'threshold':>9s} {'irrelevant rejected':>20s} {'relevant kept correct':>22s}")
    for t in sorted({*THRESHOLDS, default}):
        rejected = sum(c < t for c in irr) / len(irr)
        kept = sum(ok and c >= t for c, ok in rel) / len(rel)
        print(f"  {t:9.2f} {rejected:20.3f} {kept:22.3f}")


def argument_correct(arguments: dict[str, Any], truth: dict[str, list[Any]]) -> bool:
    """BFCL's rule: each parameter's value is one of the acceptable ones ("" = may be omitted)."""
    for param, acceptable in truth.items():
        if param not in arguments:
            if "" not in acceptable:
                return False
            continue
        value = arguments[param]
        if value not in acceptable and str(value) not in [str(a) for a in acceptable]:
            return False
    return all(param in truth for param in arguments)


async def report_llm(
    client: httpx.AsyncClient,
    router: Any,
    queries: list[dict[str, Any]],
    ids: dict[str, str],
    back: dict[str, str],
    limit: int,
) -> None:
    if router.provider is None:
        print(
            "\nLLM re-rank: did not run (offline mode: no LLM configured; set "
            "ANTHROPIC_API_KEY or OPENAI_API_KEY, or LLM_BASE_URL + LLM_MODEL)."
        )
        return
    sample = queries[:limit]
    correct = args_scored = args_right = 0
    for i, query in enumerate(sample):
        data, _ = await dry_run(client, query["query"], f"llm-{i}")
        chosen = back.get(data.get("tool_id") or "")
        correct += chosen in query["gold"]
        truths = [t for t in query.get("ground_truth") or [] if chosen in t]
        if truths and data.get("success"):
            args_scored += 1
            args_right += argument_correct(data.get("arguments") or {}, truths[0][chosen])
    print(
        f"\nLLM re-rank with {router.provider.name} ({router.provider.model}), {len(sample)} queries:"
    )
    print(f"  top-1 after re-rank: {correct / len(sample):.3f}")
    if args_scored:
        print(
            f"  argument accuracy vs ground_truth: {args_right / args_scored:.3f} (of {args_scored})"
        )
    else:
        print("  argument accuracy: no ground_truth in this dataset")


def main(
    dataset: Annotated[Path, typer.Argument(help="Folder with tools.jsonl and queries.jsonl.")],
    fraction: Annotated[
        float | None, typer.Option(help="Evaluate the last FRACTION of queries.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="At most this many queries.")] = None,
    llm_limit: Annotated[int, typer.Option(help="Queries sent through the LLM re-rank.")] = 200,
    int8: Annotated[
        bool | None,
        typer.Option("--int8/--float", help="Embedder products (default: EMBEDDER_INT8)."),
    ] = None,
    examples: Annotated[
        int,
        typer.Option(
            min=0,
            max=MAX_EXAMPLES,
            help="Give each tool up to N examples from the queries before the test split.",
        ),
    ] = 0,
    misses: Annotated[
        Path | None, typer.Option(help="Write the wrong /run answers here (JSONL).")
    ] = None,
) -> None:
    if not (dataset / "tools.jsonl").exists():
        raise typer.BadParameter(f"{dataset} has no tools.jsonl")
    asyncio.run(run_bench(dataset, fraction, limit, llm_limit, int8, examples, misses))


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    typer.run(main)
