"""Agent benchmark: per-turn overhead, session store latency, and a concurrency run.

    make bench-agent
    python scripts/bench_agent.py [FIXTURES_DIR] --turns 200 --sessions 50 --turns-per-session 10

The agent runs as a real process (uvicorn, real Postgres and Redis: embedded
in a temporary folder unless DATABASE_URL / REDIS_URL are set). Its model is
a loopback server replaying recorded vendor payloads (FIXTURES_DIR, default
``tests/fixtures/llm``) in the vendor's wire format, so the real SDK parses
real streams; the gateway is :class:`EchoGateway`, a loopback stand-in whose
tool answers at once (the real gateway's overhead is ``make bench-gateway``'s).
Model and tool time are therefore near zero, and what a turn costs is the
agent's own work: HTTP, the session lock, the claim and history load, two
streamed model calls through the SDK, the tool listing and one tool call, and
its writes.

Each turn: the model calls one tool, then answers (4 messages stored).
Printed: per-turn overhead p50/p95 per vendor (turn wall time with the model
and tool answering instantly; the gateway's time inside the tool is shown) and
what an average turn sent, measured in the agent process (see
:func:`counted_app`): SQL statements, the BEGIN/COMMIT/ROLLBACK really sent,
connection pings, Redis commands, gateway requests, and the agent's CPU time;
then session load and append p50 measured on the repository directly, and the
concurrency run's lost and misordered messages (non-zero fails the run).
``--overhead-only`` prints the per-turn part alone; ``--memory-only`` the latency
long-term memory adds to offline turns (memory on against off, by kind of turn:
requests that name their values, and requests that need a remembered one).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import httpx
import numpy as np
import psutil
import typer
from fastapi import FastAPI
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agent.sessions import repository  # noqa: E402
from agent.sessions.service import TurnStore  # noqa: E402
from reach_common import migrate  # noqa: E402
from reach_common.db import create_engine, create_sessionmaker  # noqa: E402
from reach_common.embedded import EmbeddedServers  # noqa: E402
from reach_common.llm.types import Message, ToolCall  # noqa: E402
from tests.agent.servers import ServerThread  # noqa: E402
from tests.agent.wire import ModelScript, replay_app  # noqa: E402
from tests.e2e.processes import free_port, wait_until_ready  # noqa: E402
from tests.fixtures import llm as fixtures  # noqa: E402

CHILD_FLAG = "--counted-agent"
COUNTS_PATH = "/_bench/round-trips"
SETTLED_PATH = "/_bench/settled"
SKU = re.compile(r"\bSKU\d{7}\b")

VENDOR_ENV = {
    "anthropic": {"LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-bench"},
    "openai": {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "sk-bench", "LLM_MODEL": "gpt-5.4-mini"},
}
ROUNDS = {"anthropic": ("stream_tool_use.sse",), "openai": ("stream_tool_calls.sse",)}
MESSAGES_PER_TURN = 4  # user, assistant tool call, tool result, answer


class EchoGateway:
    """What the agent uses of the gateway, and nothing else: ``GET /tools/list`` lists the
    shipped ``inventory_query`` (the tool the recorded answers call), with an ``ETag``
    honoured by ``If-None-Match`` as the real gateway does, and every
    ``POST /tools/{id}/invoke`` answers at once with its arguments.

    The real gateway would add its own routing, auth and tool time to every turn; this
    benchmark measures the agent's overhead alone. ``busy_s`` is the time spent inside
    tool calls, printed so a reader can see it is negligible.
    """

    def __init__(self) -> None:
        manifest = json.loads((REPO / "manifests" / "inventory_query.json").read_text("utf-8"))
        fields = ("tool_id", "name", "description", "input_schema", "idempotent")
        self.tools = [{key: manifest[key] for key in fields} | {"requires_approval": False}]
        self.busy_s = 0.0
        self.calls: Counter[str] = Counter()  # requests by kind: list, list_304, invoke, run

    def app(self) -> Starlette:
        async def list_tools(request: Request) -> Response:
            # As the real gateway: an ETag of the revision (one caller here), 304 on a match.
            etag = '"1"'
            if request.headers.get("if-none-match") == etag:
                self.calls["list_304"] += 1
                return Response(status_code=304, headers={"ETag": etag})
            self.calls["list"] += 1
            return JSONResponse({"revision": 1, "tools": self.tools}, headers={"ETag": etag})

        async def invoke(request: Request) -> JSONResponse:
            started = time.perf_counter()
            body = await request.json()
            tool_id = request.path_params["tool_id"]
            self.calls["invoke"] += 1
            output = {"echo": body.get("arguments", {})}
            self.busy_s += time.perf_counter() - started
            return JSONResponse({"success": True, "tool_id": tool_id, "output": output})

        async def run(request: Request) -> JSONResponse:
            # As the real gateway: the SKU comes from the request, else from a remembered
            # fact, else the call lacks it (422 invalid_arguments, the tool named).
            started = time.perf_counter()
            body = await request.json()
            self.calls["run"] += 1
            memories = body.get("memories", [])
            found = SKU.search(body.get("user_query", "")) or SKU.search(" ".join(memories))
            self.busy_s += time.perf_counter() - started
            if found is None:
                reason, message = "invalid_arguments", "missing sku"
                error = {"reason": reason, "message": message}
                return JSONResponse(
                    {"success": False, "tool_id": "inventory_query", "error": error}
                    | {"reason": reason, "message": message},
                    status_code=422,
                )
            output = {"echo": body.get("user_query"), "memories": len(memories)}
            return JSONResponse(
                {
                    "success": True,
                    "tool_id": "inventory_query",
                    "arguments": {"sku": found.group(0)},
                    "output": output,
                }
            )

        async def health(_: Request) -> JSONResponse:
            return JSONResponse({"status": "ok"})

        return Starlette(
            routes=[
                Route("/tools/list", list_tools),
                Route("/tools/{tool_id}/invoke", invoke, methods=["POST"]),
                Route("/run", run, methods=["POST"]),
                Route("/healthz", health),
            ]
        )


def pct(samples: list[float], q: float) -> float:
    return float(np.percentile(np.array(samples), q))


def counted_app() -> FastAPI:
    """The agent app, counting its own round trips (the child process's factory).

    SQLAlchemy events on every engine of the process (the agent has one): statements sent
    (``before_cursor_execute``), transactions begun, pool checkouts; the BEGIN, COMMIT and
    ROLLBACK really sent (asyncpg's ``Transaction``: an autocommit statement sends none;
    a ping's own are counted too) and the connection pings (three round trips each:
    BEGIN, ``;``, ROLLBACK), counted by wrapping the asyncpg adapter's ``ping``; and every
    Redis command the agent's client sends, by name. ``GET /_bench/round-trips`` reads
    them; ``GET /_bench/settled?user=`` answers once the user's memory learning is done
    (no SQL, no Redis).
    """
    from asyncpg.transaction import Transaction
    from sqlalchemy import event
    from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_connection
    from sqlalchemy.engine import Engine
    from sqlalchemy.pool import Pool

    from agent.app import create_app

    counts: Counter[str] = Counter()

    def counted(method: Any, key: str) -> Any:
        async def call(self: Transaction) -> Any:
            counts[key] += 1
            return await method(self)

        return call

    def statement(*_: Any) -> None:
        counts["statements"] += 1

    def begin(*_: Any) -> None:
        counts["transactions"] += 1

    def checkout(*_: Any) -> None:
        counts["checkouts"] += 1

    event.listen(Engine, "before_cursor_execute", statement)
    event.listen(Engine, "begin", begin)
    event.listen(Pool, "checkout", checkout)
    ping = AsyncAdapt_asyncpg_connection.ping

    def counted_ping(self: AsyncAdapt_asyncpg_connection) -> None:
        counts["pings"] += 1
        ping(self)

    AsyncAdapt_asyncpg_connection.ping = counted_ping  # type: ignore[method-assign]
    for name in ("start", "commit", "rollback"):  # what the server really receives
        setattr(Transaction, name, counted(getattr(Transaction, name), f"sent_{name}"))
    send = Redis.execute_command

    async def counted_command(self: Redis, *args: Any, **options: Any) -> Any:
        counts[f"redis_{str(args[0]).lower()}"] += 1
        return await send(self, *args, **options)

    Redis.execute_command = counted_command  # type: ignore[method-assign]
    app = create_app()

    async def read_counts() -> dict[str, int]:
        return dict(counts)

    async def settled(request: Request) -> dict[str, bool]:
        memory = request.state.memory
        if memory is not None:
            await memory.settled(request.query_params["user"])
        return {"settled": True}

    app.add_api_route(COUNTS_PATH, read_counts, methods=["GET"])
    app.add_api_route(SETTLED_PATH, settled, methods=["GET"])
    return app


def serve_counted_agent() -> None:
    from agent.settings import Settings
    from reach_common.service import run_service

    run_service(Settings(), "__main__:counted_app")


def start_agent(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    out = log.open("ab")
    process = subprocess.Popen(  # noqa: S603 - this very script, as the agent
        [sys.executable, str(Path(__file__).resolve()), CHILD_FLAG],
        env={**os.environ, **env, "PORT": str(port), "HOST": "127.0.0.1"},
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=REPO,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_ready(url, process, timeout=60)
    return process, url


def stop_agent(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def turn(client: httpx.AsyncClient, session_id: str, n: int) -> tuple[float, int]:
    started = time.perf_counter()
    response = await client.post(
        "/chat",
        json={"session_id": session_id, "message": f"turn {n}: how is SKU2024001 doing?"},
    )
    return (time.perf_counter() - started) * 1000, response.status_code


async def sequential(
    url: str, turns: int, prefix: str, stub: EchoGateway, pid: int
) -> tuple[list[float], int, dict[str, float]]:
    """Latencies of ``turns`` turns, failures, and the round trips of an average turn."""
    latencies: list[float] = []
    failures = 0
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        for n in range(5):  # warm-up: connections, SDK imports, caches
            await turn(client, f"{prefix}-warmup", n)
        before = await round_trips(client, stub, pid)
        for n in range(turns):
            ms, status = await turn(client, f"{prefix}-seq-{n // 10}", n)
            latencies.append(ms)
            failures += status != 200
        after = await round_trips(client, stub, pid)
    per_turn = {key: (after[key] - before.get(key, 0)) / turns for key in after}
    per_turn["redis"] = sum(n for key, n in per_turn.items() if key.startswith("redis_"))
    return latencies, failures, per_turn


async def round_trips(client: httpx.AsyncClient, stub: EchoGateway, pid: int) -> Counter[str]:
    """Totals so far: the agent's SQL statements, transactions, pool checkouts and Redis
    commands (counted in the agent, see :func:`counted_app`), the gateway requests it
    made, by kind, and the agent process's CPU time (ms)."""
    totals: Counter[str] = Counter((await client.get(COUNTS_PATH)).json())
    cpu = psutil.Process(pid).cpu_times()
    totals["cpu_ms"] = round((cpu.user + cpu.system) * 1000)
    totals.update({f"gateway_{kind}": n for kind, n in stub.calls.items()})
    for kind in ("gateway_list", "gateway_list_304", "gateway_invoke", "pings", "sent_rollback"):
        totals.setdefault(kind, 0)
    return totals


def describe_round_trips(per_turn: dict[str, float]) -> str:
    redis = ", ".join(
        f"{key.removeprefix('redis_')} {n:.1f}"
        for key, n in sorted(per_turn.items())
        if key.startswith("redis_") and n
    )
    return (
        f"  per turn: SQL statements {per_turn['statements']:.1f}; BEGIN sent "
        f"{per_turn['sent_start']:.1f}, COMMIT {per_turn['sent_commit']:.1f}, ROLLBACK "
        f"{per_turn['sent_rollback']:.1f} (SQLAlchemy transactions {per_turn['transactions']:.1f});"
        f" pool checkouts {per_turn['checkouts']:.1f}, connection pings {per_turn['pings']:.1f}; "
        f"Redis commands {per_turn['redis']:.1f} ({redis or 'none'}); gateway: GET "
        f"/tools/list {per_turn['gateway_list']:.2f} (answered 304: "
        f"{per_turn['gateway_list_304']:.2f}), invokes {per_turn['gateway_invoke']:.2f}; "
        f"agent CPU {per_turn['cpu_ms']:.1f} ms"
    )


MEMORY_USER = {"X-User-Id": "bench-user"}


NEEDS_MEMORY_EVERY = 4  # one turn in four asks for "my usual SKU" without naming it


def memory_message(n: int) -> tuple[str, str, str]:
    """Turn ``n`` of the memory run: ``(kind, message, message without memory)``. Most
    requests name their SKU (and state a new fact, so each teaches one); every fourth
    needs a remembered one. Without memory the user would have typed that SKU: the agent
    with memory off is sent that request, so both agents do the same work (one tool call
    with a SKU) and the difference is what memory costs, not a failed turn's savings."""
    if n % NEEDS_MEMORY_EVERY == NEEDS_MEMORY_EVERY - 1:
        typed = f"How much stock is left of SKU2024{n - 1:03d}?"
        return "needs a memory", "How much stock is left of my usual SKU?", typed
    message = f"My usual SKU is SKU2024{n:03d}, how much stock is left?"
    return "names its values", message, message


async def memory_overhead(
    on_url: str, off_url: str, turns: int, pids: dict[str, int]
) -> tuple[dict[str, dict[str, list[float]]], dict[str, dict[str, float]]]:
    """Offline turns of one user, alternating between an agent with memory on and one
    with it off, so both see the same machine load; the user has 40 memories first.
    Latencies by kind of turn (``memory_message``) and agent. A request that names its
    values recalls nothing offline (memories only fill a value the routed call lacks);
    one that refers back and names no id has its memories recalled before it is sent
    (the agent without memory is sent it with the SKU typed in). Every turn must end in
    its tool call, on both agents. A turn is timed until its answer is read (what the user
    waits for); then, untimed, the bench waits for that agent's background learning to
    finish, so it never runs during the other agent's timed turn (it would slow the turn
    without memory and make memory look cheaper than it is). Its cost shows in the CPU
    figures. Also returned, per agent: CPU time and SQL statements per turn (background
    learning included), which a busy machine distorts far less than latency."""
    latencies: dict[str, dict[str, list[float]]] = {}
    async with httpx.AsyncClient(timeout=30) as client:
        for n in range(40):
            await client.post(
                f"{on_url}/chat",
                json={"message": f"Remember that project {n} is run by team {n % 7}"},
                headers=MEMORY_USER,
            )
        before = {url: await work_done(client, url, pids[url]) for url in (on_url, off_url)}
        for n in range(turns):
            kind, message, typed = memory_message(n)
            for url, sent in ((on_url, message), (off_url, typed)):
                started = time.perf_counter()
                response = await client.post(
                    f"{url}/chat",
                    json={"session_id": f"mem-{n // 10}", "message": sent},
                    headers=MEMORY_USER,
                )
                spent = (time.perf_counter() - started) * 1000
                latencies.setdefault(kind, {}).setdefault(url, []).append(spent)
                assert response.status_code == 200, response.text
                assert response.json()["tool_calls"], response.text  # the same work, done
                await client.get(f"{url}{SETTLED_PATH}", params={"user": MEMORY_USER["X-User-Id"]})
        await client.get(f"{on_url}/memories", headers=MEMORY_USER)  # learning settled
        per_turn = {}
        for url in (on_url, off_url):
            after = await work_done(client, url, pids[url])
            per_turn[url] = {key: (after[key] - before[url][key]) / turns for key in after}
    return latencies, per_turn


async def work_done(client: httpx.AsyncClient, url: str, pid: int) -> dict[str, float]:
    """An agent's CPU time (ms) and SQL statements so far."""
    cpu = psutil.Process(pid).cpu_times()
    statements = (await client.get(f"{url}{COUNTS_PATH}")).json().get("statements", 0)
    return {"cpu_ms": (cpu.user + cpu.system) * 1000, "statements": float(statements)}


def report_memory(base_env: dict[str, str], log: Path, turns: int) -> None:
    """The latency memory adds to an offline turn: two agents, memory on and off."""
    on, on_url = start_agent({**base_env, "LLM_PROVIDER": "offline"}, log)
    off, off_url = start_agent(
        {**base_env, "LLM_PROVIDER": "offline", "MEMORY_ENABLED": "false"}, log
    )
    try:
        pids = {on_url: on.pid, off_url: off.pid}
        by_kind, work = asyncio.run(memory_overhead(on_url, off_url, turns, pids))
    finally:
        stop_agent(on)
        stop_agent(off)
    every = {url: [t for kind in by_kind.values() for t in kind[url]] for url in (on_url, off_url)}
    print()
    for kind, runs in [*by_kind.items(), ("all turns", every)]:
        with_memory, without = runs[on_url], runs[off_url]
        added = pct(with_memory, 50) - pct(without, 50)
        # Each turn with memory against the turn without it just before: noise the two
        # share (a busy moment of the machine) cancels out of the pair.
        paired = statistics.median(on - off for on, off in zip(with_memory, without, strict=True))
        print(
            f"[offline] {kind:<16} ({len(with_memory):3d} turns): memory on p50 "
            f"{pct(with_memory, 50):5.1f} ms, off p50 {pct(without, 50):5.1f} ms; added by "
            f"memory: p50 difference {added:+.1f} ms, median of paired differences "
            f"{paired:+.1f} ms"
        )
    print(
        f"  per turn: agent CPU {work[on_url]['cpu_ms']:.1f} ms on, "
        f"{work[off_url]['cpu_ms']:.1f} ms off (memory: "
        f"{work[on_url]['cpu_ms'] - work[off_url]['cpu_ms']:+.1f} ms, learning included); "
        f"SQL statements {work[on_url]['statements']:.1f} on, "
        f"{work[off_url]['statements']:.1f} off\n"
        f"  (the user has 40+ memories; a turn that names its SKU states a new fact, which "
        f'is learned; one in {NEEDS_MEMORY_EVERY} asks for "my usual SKU": recalled '
        "before it is sent with memory on, sent with that SKU typed in to the agent with it "
        "off; each turn timed "
        "until its answer is read, learning let finish untimed before the next)"
    )


def check_session(session_id: str, body: dict[str, Any], turns: int) -> tuple[int, int]:
    """``(lost, misordered)`` messages of one session of the concurrency run."""
    messages = body["messages"]
    lost = turns * MESSAGES_PER_TURN - len(messages)
    misordered = 0
    seqs = [m["seq"] for m in messages]
    misordered += sum(1 for i, s in enumerate(seqs) if s != i + 1)
    for n in range(turns):
        chunk = messages[n * MESSAGES_PER_TURN : (n + 1) * MESSAGES_PER_TURN]
        roles = [m["role"] for m in chunk]
        expected_user = f"turn {n}: how is SKU2024001 doing?"
        ok = (
            roles == ["user", "assistant", "tool", "assistant"]
            and chunk[0]["content"] == expected_user
            and len({m["turn_id"] for m in chunk}) == 1
            and chunk[1]["tool_calls"][0]["id"] == chunk[2]["tool_call_id"]
        )
        misordered += 0 if ok else len(chunk)
    return max(lost, 0), misordered


async def concurrency(url: str, sessions: int, turns: int) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        statuses: list[int] = []

        async def one_session(s: int) -> None:
            for n in range(turns):
                _, status = await turn(client, f"conc-{s}", n)
                statuses.append(status)

        started = time.perf_counter()
        await asyncio.gather(*(one_session(s) for s in range(sessions)))
        wall = time.perf_counter() - started
        lost = misordered = 0
        for s in range(sessions):
            body = (await client.get(f"/sessions/conc-{s}")).json()
            a, b = check_session(f"conc-{s}", body, turns)
            lost, misordered = lost + a, misordered + b
    return {
        "wall_s": wall,
        "turns": len(statuses),
        "non_200": sum(1 for s in statuses if s != 200),
        "lost": lost,
        "misordered": misordered,
    }


async def store_latency(database_url: str, rounds: int = 200) -> tuple[float, float, int]:
    """p50 of loading a 100-message session and of appending one round, in ms."""
    engine = create_engine(database_url, pool_size=2)
    sessionmaker = create_sessionmaker(engine)
    session_id = f"store-{uuid.uuid4().hex[:8]}"
    async with sessionmaker.begin() as db:
        await repository.ensure_session(db, session_id, None, "store benchmark")
    loads: list[float] = []
    appends: list[float] = []
    for n in range(rounds):
        # As the loop saves a round: the call and its result, in one statement.
        store = TurnStore(sessionmaker, session_id, uuid.uuid4(), None)
        call = ToolCall(id=f"c{n}", name="inventory_query", arguments={"sku": "SKU2024001"})
        result = Message(role="tool", content='{"available": 156}', tool_call_id=call.id)
        started = time.perf_counter()
        await store.save_round("", [(call, "inventory_query")], [result], 1)
        appends.append((time.perf_counter() - started) * 1000)
    # Loads of a 100-message window (the budget keeps windows about this size).
    async with sessionmaker() as db:
        last = await repository.get_session(db, session_id)
    assert last is not None
    start = last.last_seq - 99
    for _ in range(rounds):
        started = time.perf_counter()
        async with sessionmaker() as db:
            rows = await repository.list_messages(db, session_id, from_seq=start)
        loads.append((time.perf_counter() - started) * 1000)
    await engine.dispose()
    return statistics.median(loads), statistics.median(appends), len(rows)


def main(
    fixtures_dir: Annotated[
        Path, typer.Argument(help="Recorded vendor payloads (anthropic/ and openai/).")
    ] = REPO / "tests" / "fixtures" / "llm",
    turns: Annotated[int, typer.Option(help="Sequential turns per vendor.")] = 200,
    sessions: Annotated[int, typer.Option(help="Concurrent sessions.")] = 50,
    turns_per_session: Annotated[int, typer.Option(help="Turns in each session.")] = 10,
    memory_only: Annotated[
        bool, typer.Option(help="Only the memory on/off comparison (offline).")
    ] = False,
    overhead_only: Annotated[
        bool, typer.Option(help="Only the per-turn overhead of each vendor.")
    ] = False,
) -> None:
    fixtures.FIXTURES = fixtures_dir
    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    servers = None
    workdir = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    if not database_url or not redis_url:
        servers = EmbeddedServers(workdir / "data").start(
            need_postgres=not database_url, need_redis=not redis_url
        )
        database_url = database_url or servers.postgres.url  # type: ignore[union-attr]
        redis_url = redis_url or servers.redis.url  # type: ignore[union-attr]
    assert database_url
    assert redis_url
    migrate.upgrade(database_url)
    scripts = {v: ModelScript(v, rounds=ROUNDS[v], keep_requests=False) for v in VENDOR_ENV}
    stub = EchoGateway()
    log = workdir / "agent.log"
    ok = False
    try:
        with ServerThread(stub.app()) as gateway, ServerThread(replay_app(scripts)) as llm:
            base_env = {
                "DATABASE_URL": database_url,
                "REDIS_URL": redis_url,
                "GATEWAY_URL": gateway.url,
                "LLM_MAX_RETRIES": "0",
                "LOG_LEVEL": "WARNING",
                "OTEL_SPAN_STORE": "false",
                "DATABASE_POOL_SIZE": "20",
            }
            print(
                f"agent benchmark: {turns} sequential turns per vendor; "
                f"{sessions} sessions x {turns_per_session} turns concurrently"
            )
            print(
                "each turn = 2 streamed model calls (recorded) + 1 gateway tool call "
                "+ 4 stored messages\n"
            )
            vendors = {} if memory_only else VENDOR_ENV
            for vendor, env in vendors.items():
                base_url = llm.url if vendor == "anthropic" else f"{llm.url}/v1"
                process, url = start_agent({**base_env, **env, "LLM_BASE_URL": base_url}, log)
                try:
                    stub.busy_s = 0.0
                    latencies, failures, per_turn = asyncio.run(
                        sequential(url, turns, vendor, stub, process.pid)
                    )
                finally:
                    stop_agent(process)
                tool_ms = stub.busy_s * 1000 / (turns + 5)
                print(
                    f"[{vendor}] per-turn overhead  p50 {pct(latencies, 50):6.1f} ms   "
                    f"p95 {pct(latencies, 95):6.1f} ms   (tool time inside gateway "
                    f"{tool_ms:.2f} ms/turn; failures {failures})"
                )
                print(describe_round_trips(per_turn))

            if overhead_only:
                ok = True
                return
            report_memory(base_env, log, turns)
            if memory_only:
                ok = True
                return

            load_ms, append_ms, window = asyncio.run(store_latency(database_url))
            print(f"\nsession load p50   {load_ms:6.2f} ms  ({window}-message window)")
            print(
                f"session append p50 {append_ms:6.2f} ms  "
                "(one round: tool call + result, one statement)"
            )

            process, url = start_agent(
                {**base_env, **VENDOR_ENV["anthropic"], "LLM_BASE_URL": llm.url}, log
            )
            try:
                result = asyncio.run(concurrency(url, sessions, turns_per_session))
            finally:
                stop_agent(process)
            expected = sessions * turns_per_session * MESSAGES_PER_TURN
            print(
                f"\nconcurrency: {sessions} sessions x {turns_per_session} turns (anthropic wire)"
            )
            print(
                f"  turns {result['turns']}  non-200 {result['non_200']}  "
                f"wall {result['wall_s']:.1f} s  "
                f"throughput {result['turns'] / result['wall_s']:.1f} turns/s"
            )
            print(
                f"  messages expected {expected}  lost {result['lost']}  "
                f"misordered {result['misordered']}"
            )
            if result["lost"] or result["misordered"] or result["non_200"]:
                print(f"agent log: {log}")
                raise typer.Exit(1)
        ok = True
    finally:
        if servers is not None:
            servers.stop()
    if ok:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] == [CHILD_FLAG]:
        serve_counted_agent()
    else:
        typer.run(main)
