"""Routing quality on the shipped tools: our own hand-written requests.

    make bench-shipped
    make bench-shipped REQUESTS=path/to/requests.jsonl
    python scripts/bench_shipped.py --manifests path/to/manifests   # other manifests
    python scripts/bench_shipped.py --today 2026-12-01 ...   # the day the set was written

Each line of the requests file is ``{"query", "gold": tool_id | null, "lang":
"en" | "zh", "session"?, "follow_up"?, "arguments"?}``; ``arguments`` (optional)
names values the filled arguments must hold for the line to count as right with
its arguments. A set whose requests say "tomorrow" or 明天 expects dates from the
day it was written: ``--today`` gives that day (else the gateway's UTC date). An in-process gateway (embedded
Postgres and Redis, or DATABASE_URL / REDIS_URL) loads ``manifests/`` by tool
auto-discovery, and every request goes, in file order, through ``POST /run``
with ``dry_run`` as a caller claiming every role the folder's tools ask for (an
admin tool's ``scope``): what is measured is routing, not who may call what.

Requests that share a ``session`` share a ``session_id``; the others get a
fresh one. A dry run executes nothing, so it leaves nothing in the session
context; after each routed request of a session the bench records the routed
call there (tool and arguments, no output), as the real call would have, so a
follow-up sees what it would see after the earlier request ran.

Reported: top-1 accuracy on requests with a gold tool (overall, per language,
follow-ups), the rejection rate of off-topic requests (``gold: null``, answered
``no_matching_tool``), the p50 latency of ``POST /run`` per language (a mostly
Chinese request also runs the model on its English reading: ``routing/gloss.py``),
and a confusion list with the misrouted queries.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from asgi_lifespan import LifespanManager

from reach_common.datasets import read_jsonl
from reach_common.embedded import temporary_backends

REPO = Path(__file__).resolve().parent.parent
DEFAULT_REQUESTS = REPO / "tests" / "data" / "shipped_requests.jsonl"
DEFAULT_MANIFESTS = REPO / "manifests"
USER_ID = "bench"
ROLES = ["admin", "ops_admin", "kb_admin", "finance", "order_manager"]
REJECTED = "no_matching_tool"
SHOW_MISROUTED = 40
QUERY_WIDTH = 90
# Building the index embeds every tool at startup: slow on a busy machine (default 5 s).
STARTUP_TIMEOUT_S = 300


@dataclass(frozen=True)
class Outcome:
    request: dict[str, Any]
    status: int
    predicted: str | None  # the tool routed to (even if its arguments did not fit), or None
    reason: str | None  # the failure reason, None on success
    confidence: float | None
    hint: str | None
    message: str = ""  # the error's message, on failure
    arguments: dict[str, Any] | None = None  # what the gateway filled in
    latency_ms: float = 0.0  # the POST /run, in process

    @property
    def expected(self) -> dict[str, Any] | None:
        """The request's ``arguments``, when its line says what they must hold."""
        wanted = self.request.get("arguments")
        return wanted if isinstance(wanted, dict) else None

    @property
    def arguments_right(self) -> bool:
        """Every expected argument holds exactly its value (others may be filled too)."""
        wanted, got = self.expected, self.arguments or {}
        return wanted is None or all(got.get(k) == v for k, v in wanted.items())

    @property
    def gold(self) -> str | None:
        gold: str | None = self.request.get("gold")
        return gold

    @property
    def rejected(self) -> bool:
        return self.reason == REJECTED or self.status == 404

    @property
    def label(self) -> str:
        """What the gateway answered, for the confusion list."""
        if self.rejected:
            return "(rejected)"
        if self.predicted is None:
            return f"(error: {self.reason or self.status})"
        return self.predicted

    @property
    def correct(self) -> bool:
        if self.gold is None:
            return self.rejected
        return not self.rejected and self.predicted == self.gold

    @property
    def complete(self) -> bool:
        """The right tool, with arguments that validate (the call would have run) and hold
        the values the request line expects, if it names any."""
        return (
            self.correct and self.gold is not None and self.reason is None and self.arguments_right
        )


def read_requests(path: Path) -> list[dict[str, Any]]:
    """The request lines: blank lines and lines with no query are left out (and counted),
    a line that is not a JSON object is named, a ``gold`` written as a list of one id (or
    an empty list) reads as that id (or null), and a line with no ``lang`` is labelled by
    its script."""
    rows, empty = [], 0
    for row in read_jsonl(path):
        if not str(row.get("query") or "").strip():
            empty += 1
            continue
        gold = row.get("gold")
        if isinstance(gold, list) and len(gold) <= 1:
            row["gold"] = str(gold[0]) if gold else None
        elif gold is not None and not isinstance(gold, str):
            raise SystemExit(f"{path.name}: gold is one tool id or null, not {gold!r}")
        if not row.get("lang"):  # unlabelled: by its script
            row["lang"] = "zh" if re.search(r"[\u4e00-\u9fff]", row["query"]) else "en"
        rows.append(row)
    if empty:
        print(f"{path.name}: left out {empty} lines without a query")
    return rows


def caller_roles(manifests: Path) -> list[str]:
    """``ROLES`` and every role a tool in ``manifests`` asks for (its ``scope``)."""
    from gateway.registry.discovery import manifest_files, read_manifest

    roles = set(ROLES)
    for path in manifest_files(manifests):
        scope = (read_manifest(path) or {}).get("scope")
        if isinstance(scope, list):
            roles.update(role for role in scope if isinstance(role, str))
    return sorted(roles)


async def send(
    client: httpx.AsyncClient,
    request: dict[str, Any],
    session_id: str,
    roles: list[str] = ROLES,
) -> tuple[Outcome, dict[str, Any]]:
    body = {
        "session_id": session_id,
        "user_query": request["query"],
        "dry_run": True,
        "user_context": {"user_id": USER_ID, "roles": roles},
    }
    started = time.perf_counter()
    response = await client.post("/run", json=body)
    latency_ms = (time.perf_counter() - started) * 1000
    data: dict[str, Any] = response.json()
    error = data.get("error") or {}
    route = data.get("route") or {}
    reason = None if data.get("success") else (error.get("reason") or data.get("reason"))
    outcome = Outcome(
        request=request,
        status=response.status_code,
        predicted=data.get("tool_id"),
        reason=reason,
        confidence=route.get("confidence"),
        hint=route.get("route_hint"),
        message=str(error.get("message") or data.get("message") or ""),
        arguments=data.get("arguments") if isinstance(data.get("arguments"), dict) else None,
        latency_ms=latency_ms,
    )
    return outcome, data


async def run_all(
    requests: list[dict[str, Any]],
    manifests: Path = DEFAULT_MANIFESTS,
    today: date | None = None,
) -> tuple[list[Outcome], int]:
    from gateway.app import create_app
    from gateway.settings import Settings

    with temporary_backends() as (database_url, redis_url):
        settings = Settings(
            database_url=database_url,
            redis_url=redis_url,
            log_level="WARNING",
            route_rate_limit=None,  # a benchmark routes as fast as it can
            auth_mode="permissive",
            tool_auto_discovery=True,
            manifests_dir=str(manifests),
            gc_freeze=False,
        )
        app = create_app(settings)
        async with LifespanManager(app, startup_timeout=STARTUP_TIMEOUT_S) as manager:
            if today is not None:  # "tomorrow" is the day after the set's writing
                app.state.runtime.router.extractor.today = lambda: today
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost"
            ) as client:
                roles = caller_roles(manifests)
                headers = {"X-User-Id": USER_ID, "X-User-Roles": ",".join(roles)}
                listed = await client.get("/tools/list", headers=headers)
                if listed.status_code != 200:
                    raise SystemExit(f"GET /tools/list: {listed.status_code} {listed.text}")
                visible = len(listed.json()["tools"])
                context = app.state.runtime.run.context
                run_id = uuid.uuid4().hex[:8]  # fresh sessions even on a reused Redis
                outcomes = []
                for i, request in enumerate(requests):
                    session = request.get("session")
                    session_id = f"shipped-{run_id}-{session or i}"
                    outcome, data = await send(client, request, session_id, roles)
                    outcomes.append(outcome)
                    if session and data.get("success") and outcome.predicted:
                        await context.remember(
                            USER_ID,
                            session_id,
                            outcome.predicted,
                            data.get("arguments") or {},
                            None,
                        )
    return outcomes, visible


def rate(hits: int, total: int) -> str:
    return f"{hits / total:.3f} ({hits}/{total})" if total else "n/a (0/0)"


def accuracy_line(label: str, outcomes: list[Outcome]) -> str:
    return f"  {label:<22s} {rate(sum(o.correct for o in outcomes), len(outcomes))}"


def shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUERY_WIDTH else text[: QUERY_WIDTH - 1] + "…"


def report(path: Path, outcomes: list[Outcome], visible: int, show: int = SHOW_MISROUTED) -> None:
    routed = [o for o in outcomes if o.gold is not None]
    offtopic = [o for o in outcomes if o.gold is None]
    langs = sorted({str(o.request.get("lang")) for o in outcomes})
    follow = [o for o in routed if o.request.get("follow_up")]
    try:
        shown = path.resolve().relative_to(REPO)
    except ValueError:
        shown = path
    print(f"shipped-tools routing bench: {shown}")
    print(
        f"{len(outcomes)} requests: {len(routed)} with a gold tool, {len(offtopic)} off-topic; "
        + ", ".join(
            f"{lang} {sum(o.request.get('lang') == lang for o in outcomes)}" for lang in langs
        )
        + f"; {sum(bool(o.request.get('follow_up')) for o in outcomes)} follow-ups"
    )
    print(f"tools visible to the bench caller: {visible}")
    print("\ntop-1 accuracy, requests with a gold tool (POST /run, dry_run):")
    print(accuracy_line("overall", routed))
    for lang in langs:
        print(accuracy_line(lang, [o for o in routed if o.request.get("lang") == lang]))
    print(accuracy_line("follow-ups", follow))
    args_invalid = sum(o.reason == "invalid_arguments" for o in routed)
    right_tool_args_invalid = sum(
        o.reason == "invalid_arguments" and o.predicted == o.gold for o in routed
    )
    print(
        f"  answered invalid_arguments: {args_invalid} "
        f"({right_tool_args_invalid} of them on the right tool, counted correct)"
    )
    complete = sum(o.complete for o in routed)
    print(f"  {'right tool, valid args':<22s} {rate(complete, len(routed))}")
    checked = [o for o in routed if o.expected is not None]
    if checked:
        print(
            f"    ({len(checked)} lines name the arguments they expect: those must hold them too)"
        )
    print("\noff-topic rejection (gold null, answered no_matching_tool):")
    print(accuracy_line("overall", offtopic))
    for lang in langs:
        print(accuracy_line(lang, [o for o in offtopic if o.request.get("lang") == lang]))

    print("\nPOST /run latency p50 (in process, one request at a time, route-cache hits too):")
    for lang in langs:
        spent = [o.latency_ms for o in outcomes if o.request.get("lang") == lang]
        print(f"  {lang:<22s} {statistics.median(spent):.1f} ms ({len(spent)} requests)")

    wrong = [o for o in outcomes if not o.correct]
    confusion = Counter((o.gold or "(none)", o.label) for o in wrong)
    print(f"\nconfusion, gold -> predicted: count ({len(wrong)} wrong):")
    for (gold, label), count in sorted(confusion.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {gold} -> {label}: {count}")
    print(f"\nmisrouted queries (first {min(show, len(wrong))} of {len(wrong)}):")
    for o in wrong[:show]:
        query = shorten(str(o.request["query"]))
        conf = f"{o.confidence:.2f}" if isinstance(o.confidence, int | float) else "-"
        tag = " follow-up" if o.request.get("follow_up") else ""
        print(
            f"  [{o.request.get('lang')}{tag}] {o.gold or '(none)'} -> {o.label} "
            f"(conf {conf}, {o.hint or '-'}): {query}"
        )


def report_arguments(outcomes: list[Outcome], show: int) -> None:
    """The right tool, with arguments it refused or got wrong: what the extraction missed."""
    refused = [o for o in outcomes if o.correct and o.gold is not None and not o.complete]
    print(
        f"\nright tool, arguments refused or wrong (first {min(show, len(refused))} of {len(refused)}):"
    )
    for o in refused[:show]:
        tag = " follow-up" if o.request.get("follow_up") else ""
        print(f"  [{o.request.get('lang')}{tag}] {o.gold}: {shorten(str(o.request['query']))}")
        if o.reason is not None:
            print(f"      {o.reason}: {shorten(o.message)}")
        else:
            print(f"      filled {o.arguments}, expected {o.expected}")


def main(
    requests: Annotated[
        Path, typer.Argument(help="JSONL of requests: query, gold, lang, session?, follow_up?")
    ] = DEFAULT_REQUESTS,
    manifests: Annotated[
        Path,
        typer.Option(help="Folder of manifests to load (e.g. the same tools without examples)."),
    ] = DEFAULT_MANIFESTS,
    show: Annotated[int, typer.Option(min=0, help="Misrouted queries to list.")] = SHOW_MISROUTED,
    today: Annotated[
        str | None,
        typer.Option(
            help="The date the set was written (YYYY-MM-DD): relative dates in its requests "
            "(tomorrow, 明天) are read from it. Default: the gateway's UTC date."
        ),
    ] = None,
) -> None:
    if not requests.exists():
        raise typer.BadParameter(f"{requests} does not exist")
    try:
        written = date.fromisoformat(today) if today else None
    except ValueError:
        raise typer.BadParameter(f"--today {today!r} is not a YYYY-MM-DD date") from None
    rows = read_requests(requests)
    outcomes, visible = asyncio.run(run_all(rows, manifests, written))
    report(requests, outcomes, visible, show)
    report_arguments(outcomes, show)


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    typer.run(main)
