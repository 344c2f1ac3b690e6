"""Soak: the whole stack under mixed traffic at a fixed rate, for minutes, watched.

    make soak                      # 30 minutes at 10 requests/s
    make soak SOAK_MINUTES=5
    python scripts/soak.py --minutes 30 --rate 20 --interval 60 --json-out soak.json

Starts shop, retriever, gateway and agent as real processes on 127.0.0.1 over
throwaway embedded Postgres and Redis (or ``DATABASE_URL`` / ``REDIS_URL``), and
sends an open-loop schedule of requests at ``--rate`` per second, the n-th one at
``start + n / rate`` whether or not earlier ones have answered (latency counts from
that scheduled time, so a stall shows). The mix: gateway ``POST /run`` (plain
requests routed offline; repeated ones hit the route cache, numbered ones miss it),
``POST /tools/inventory_query/invoke``, retriever ``POST /retrieve``, ``POST
/ingest`` of a small new document (the oldest soak document is deleted once more
than ``LIVE_DOCUMENTS`` exist, so the corpus stays bounded), and agent ``POST
/chat`` in offline mode, plain and streamed. Ten callers share the load.

Every ``--interval`` seconds one row: requests, throughput, p50/p99 ms, errors by
reason (the JSON error body's ``reason``; transport errors by exception class),
RSS MB of every process (services: RSS; Postgres: the PSS sum of the server and its
backends, so shared buffers are not counted once per backend; Redis: RSS), open file
descriptors per service, and Postgres connections per service (each service logs in
as its own role ``soak_<service>`` on the embedded server). At the end a summary:
totals by kind, overall p50/p99, RSS growth after the warm-up per process, and
connections and descriptors at the end of the warm-up against the end.

Only loopback traffic; stops by itself; ends only the processes it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import httpx
import psutil
import psycopg
import typer
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ("shop", "retriever", "gateway", "agent")
SKUS = [f"SKU202400{n}" for n in range(1, 7)]
USERS = [f"soak-u{n}" for n in range(10)]
ROLES = "ops_admin,finance,retriever_writer"  # inventory, sales, ingest
LIVE_DOCUMENTS = 40  # soak documents kept in the retriever; older ones are deleted
TURNS_PER_SESSION = 6  # chat turns before a session is retired for a new one
MAX_IN_FLIGHT = 256  # beyond this the machine is saturated: the request is counted as shed
MIX = {"run": 30, "invoke": 20, "retrieve": 20, "ingest": 10, "chat": 12, "chat_stream": 8}
QUESTIONS = ["{sku} 还有多少库存", "how many {sku} are in stock", "{sku} 最近卖得怎么样"]
WORDS = ["refund", "shipping", "warranty", "invoice", "carrier", "parcel", "return", "exchange"]


# --- the stack --------------------------------------------------------------------------------


@dataclass
class Stack:
    urls: dict[str, str]
    pids: dict[str, int]  # services and redis
    database_url: str
    postgres_data: Path | None  # the embedded cluster's folder, to find its processes


def _with_user(url: str, user: str) -> str:
    return make_url(url).set(username=user).render_as_string(hide_password=False)


def _service_roles(database_url: str) -> dict[str, str]:
    """One login role per service on the throwaway cluster, so ``pg_stat_activity`` tells
    whose connections are whose. Superuser, as the embedded ``postgres`` user is."""
    from reach_common.db import libpq_url

    urls = {}
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        for name in SERVICES:
            role = f"soak_{name}"
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
            if not exists:
                conn.execute(f'CREATE ROLE "{role}" LOGIN SUPERUSER')  # our own fixed names
            urls[name] = _with_user(database_url, role)
    return urls


@contextlib.contextmanager
def soak_stack(workdir: Path) -> Iterator[Stack]:
    """Backends (embedded unless ``DATABASE_URL`` / ``REDIS_URL``), migrated, and the four
    services as processes with their logs in ``workdir``."""
    from reach_common import migrate
    from reach_common.embedded import EmbeddedServers
    from reach_common.processes import free_port, running_service
    from reach_common.stack import SERVICE_KEY_ENV, SERVICE_KEY_SECRET, mint_service_key

    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    with contextlib.ExitStack() as stack:
        servers = stack.enter_context(EmbeddedServers(workdir / "data"))
        servers.start(need_postgres=not database_url, need_redis=not redis_url)
        database_url = database_url or servers.postgres.url  # type: ignore[union-attr]
        redis_url = redis_url or servers.redis.url  # type: ignore[union-attr]
        migrate.upgrade(database_url)
        own = servers.postgres is not None
        db_urls = _service_roles(database_url) if own else dict.fromkeys(SERVICES, database_url)
        ports = {name: free_port() for name in SERVICES}
        urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
        base = {"REDIS_URL": redis_url, "LOG_LEVEL": "WARNING", "LLM_PROVIDER": "offline"}
        extra = {
            "gateway": {
                "SHOP_URL": urls["shop"],
                "RETRIEVER_URL": urls["retriever"],
                "TOOL_AUTO_DISCOVERY": "true",
                "MANIFESTS_DIR": str(ROOT / "manifests"),
                SERVICE_KEY_ENV: mint_service_key(database_url),
                "TOOL_SECRET_HOSTS": json.dumps({SERVICE_KEY_SECRET: ["retriever"]}),
            },
            "agent": {"GATEWAY_URL": urls["gateway"]},
        }
        pids = {}
        for name in SERVICES:
            env = {**base, "DATABASE_URL": db_urls[name], **extra.get(name, {})}
            service = running_service(name, ports[name], env, workdir, cwd=ROOT, ready_timeout=240)
            pids[name] = stack.enter_context(service).pid
        if servers.redis is not None and servers.redis.process is not None:
            pids["redis"] = servers.redis.process.pid
        postgres_data = servers.postgres.directory if own else None  # type: ignore[union-attr]
        yield Stack(urls, pids, database_url, postgres_data)


# --- measuring the processes -----------------------------------------------------------------


def _postgres_processes(data: Path) -> list[psutil.Process]:
    """The embedded postmaster (its command line names our data folder) and its backends."""
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if (process.info["name"] or "").startswith("postgres") and str(data) in cmdline:
            with contextlib.suppress(psutil.Error):
                return [process, *process.children(recursive=True)]
    return []


def sample_processes(stack: Stack) -> tuple[dict[str, float], dict[str, int]]:
    """RSS MB per process (Postgres: PSS sum) and open descriptors per service."""
    rss: dict[str, float] = {}
    fds: dict[str, int] = {}
    for name, pid in stack.pids.items():
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(pid)
            rss[name] = process.memory_info().rss / 2**20
            if name in SERVICES:
                fds[name] = process.num_fds()
    if stack.postgres_data is not None:
        pss = 0
        for process in _postgres_processes(stack.postgres_data):
            with contextlib.suppress(psutil.Error):
                pss += process.memory_full_info().pss
        rss["postgres"] = pss / 2**20
    return rss, fds


def sample_connections(stack: Stack) -> dict[str, int]:
    """Postgres connections per login role (``soak_<service>``, shown as the service), this
    sampler's own left out."""
    from reach_common.db import libpq_url

    query = (
        "SELECT usename, count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
        "AND pid <> pg_backend_pid() GROUP BY usename"
    )
    with psycopg.connect(libpq_url(stack.database_url), autocommit=True) as conn:
        rows = conn.execute(query).fetchall()
    return {str(user).removeprefix("soak_"): int(n) for user, n in rows}


# --- traffic ----------------------------------------------------------------------------------


class Failed(Exception):
    """A request that did not succeed, with the reason it is counted under."""


def _reason(response: httpx.Response) -> str:
    with contextlib.suppress(ValueError, AttributeError):
        reason = response.json().get("reason")
        if reason:
            return str(reason)
    return f"http_{response.status_code}"


def _check(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 300:
        raise Failed(_reason(response))
    body: dict[str, Any] = response.json()
    if body.get("success") is False:
        raise Failed(str(body.get("reason") or "tool_failed"))
    return body


def _letters(n: int) -> str:
    """``n`` written in the letters a-z: a tag that makes a wording new."""
    text = ""
    n += 26 * 26
    while n:
        n, digit = divmod(n, 26)
        text = "abcdefghijklmnopqrstuvwxyz"[digit] + text
    return text


class Traffic:
    """The requests of the mix; each raises :class:`Failed` (or a transport error)."""

    def __init__(self, urls: dict[str, str], seed: int = 19) -> None:
        self.urls = urls
        self.random = random.Random(seed)  # noqa: S311 - traffic, not secrets
        self.tags = 0  # new wordings so far
        self.ingested = 0
        self.documents: list[str] = []  # live soak documents, oldest first
        self.idle_sessions: list[tuple[str, int]] = []  # (session id, turns so far)
        self.sessions = 0

    def headers(self) -> dict[str, str]:
        return {"X-User-Id": self.random.choice(USERS), "X-User-Roles": ROLES}

    def question(self) -> str:
        text = self.random.choice(QUESTIONS).format(sku=self.random.choice(SKUS))
        if self.random.random() < 0.3:  # a new wording: a route cache miss
            self.tags += 1
            text += f" (ref {_letters(self.tags)})"  # no digits: a number reads as `days`
        return text

    async def run(self, client: httpx.AsyncClient) -> None:
        body = {"user_query": self.question()}
        _check(await client.post(f"{self.urls['gateway']}/run", json=body, headers=self.headers()))

    async def invoke(self, client: httpx.AsyncClient) -> None:
        url = f"{self.urls['gateway']}/tools/inventory_query/invoke"
        body = {"arguments": {"sku": self.random.choice(SKUS)}}
        _check(await client.post(url, json=body, headers=self.headers()))

    async def retrieve(self, client: httpx.AsyncClient) -> None:
        words = " ".join(self.random.sample(WORDS, 3))
        url = f"{self.urls['retriever']}/retrieve"
        _check(await client.post(url, json={"query": words, "top_k": 5}, headers=self.headers()))

    def document(self, n: int) -> str:
        words = " ".join(self.random.choice(WORDS) for _ in range(60))
        return f"# Soak note {n}\n\nPolicy {n} for {self.random.choice(SKUS)}.\n\n{words}\n"

    async def ingest(self, client: httpx.AsyncClient) -> None:
        self.ingested += 1
        source = f"soak/{self.ingested}.md"
        body = {"source": source, "text": self.document(self.ingested)}
        headers = self.headers()
        _check(await client.post(f"{self.urls['retriever']}/ingest", json=body, headers=headers))
        self.documents.append(source)

    async def delete(self, client: httpx.AsyncClient) -> None:
        source = self.documents.pop(0)
        url = f"{self.urls['retriever']}/sources/{source}"
        _check(await client.delete(url, headers=self.headers()))

    def take_session(self) -> tuple[str, int]:
        if self.idle_sessions:
            return self.idle_sessions.pop()
        self.sessions += 1
        return f"soak-{self.sessions}", 0

    async def chat(self, client: httpx.AsyncClient, stream: bool) -> None:
        """One turn of a session no other turn is using (no ``session_busy``)."""
        session_id, turns = self.take_session()
        user = USERS[hash(session_id) % len(USERS)]  # a session keeps its owner
        body = {"session_id": session_id, "message": self.question(), "stream": stream}
        headers = {"X-User-Id": user, "X-User-Roles": ROLES}
        url = f"{self.urls['agent']}/chat"
        try:
            if stream:
                await _chat_stream(client, url, body, headers)
            else:
                _check_tool_calls(_check(await client.post(url, json=body, headers=headers)))
        except httpx.HTTPError:
            raise  # the turn may still be running: this session is not used again
        except BaseException:
            self.give_back(session_id, turns)
            raise
        self.give_back(session_id, turns)

    def give_back(self, session_id: str, turns: int) -> None:
        if turns + 1 < TURNS_PER_SESSION:
            self.idle_sessions.append((session_id, turns + 1))


def _check_tool_calls(reply: dict[str, Any]) -> None:
    """A turn whose tool call failed is an error too, counted under the tool's reason."""
    for call in reply.get("tool_calls", []):
        if call.get("is_error"):
            result = call.get("result")
            error = result.get("error") if isinstance(result, dict) else None
            reason = error.get("reason") if isinstance(error, dict) else None
            raise Failed(f"tool_{reason or 'error'}")


async def _chat_stream(
    client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: dict[str, str]
) -> None:
    """Read to the end of the stream, not just to ``done``: the agent frees the session
    after its last event, so a client that sends the next message on ``done`` can race
    it and get ``session_busy``."""
    event, last = None, None
    async with client.stream("POST", url, json=body, headers=headers) as response:
        if response.status_code >= 300:
            await response.aread()
            raise Failed(_reason(response))
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                event = line.removeprefix("event:").strip()
            elif line.startswith("data:") and event in ("done", "error"):
                last = (event, json.loads(line.removeprefix("data:")))
    if last is None:
        raise Failed("stream_ended_without_done")
    if last[0] == "error":
        raise Failed(str(last[1].get("reason", "stream_error")))
    _check_tool_calls(last[1])


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Window:
    latencies: list[float] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class Soak:
    def __init__(self, stack: Stack, rate: float, seed: int = 19) -> None:
        self.stack = stack
        self.rate = rate
        self.traffic = Traffic(stack.urls, seed)
        self.window = Window()
        self.all_latencies: list[float] = []
        self.all_by_kind: dict[str, list[float]] = {}
        self.totals: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.in_flight = 0
        self.kinds = list(MIX)
        self.weights = list(MIX.values())

    async def one(self, client: httpx.AsyncClient, kind: str, scheduled: float) -> None:
        calls = {"chat": lambda: self.traffic.chat(client, stream=False)}
        calls["chat_stream"] = lambda: self.traffic.chat(client, stream=True)
        call = calls.get(kind) or (lambda: getattr(self.traffic, kind)(client))
        error = None
        try:
            await call()
        except Failed as exc:
            error = str(exc)
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            error = type(exc).__name__
        self.record(kind, (time.perf_counter() - scheduled) * 1000, error)
        if kind == "ingest" and error is None and len(self.traffic.documents) > LIVE_DOCUMENTS:
            await self.one(client, "delete", time.perf_counter())

    def record(self, kind: str, ms: float, error: str | None) -> None:
        self.window.latencies.append(ms)
        self.window.by_kind.setdefault(kind, []).append(ms)
        self.totals[kind] += 1
        self.all_latencies.append(ms)
        self.all_by_kind.setdefault(kind, []).append(ms)
        if error is not None:
            self.window.errors[f"{kind}:{error}"] += 1
            self.errors[f"{kind}:{error}"] += 1

    async def tracked(self, client: httpx.AsyncClient, kind: str, scheduled: float) -> None:
        self.in_flight += 1
        try:
            await self.one(client, kind, scheduled)
        finally:
            self.in_flight -= 1

    async def drive(self, client: httpx.AsyncClient, seconds: float) -> None:
        """The open-loop schedule: request n at ``start + n / rate``."""
        tasks: set[asyncio.Task[None]] = set()
        start = time.perf_counter()
        n = 0
        while (scheduled := start + n / self.rate) < start + seconds:
            await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
            kind = self.traffic.random.choices(self.kinds, self.weights)[0]
            if self.in_flight >= MAX_IN_FLIGHT:
                self.record(kind, 0.0, "shed_too_many_in_flight")
            else:
                task = asyncio.create_task(self.tracked(client, kind, scheduled))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            n += 1
        if tasks:
            await asyncio.wait(tasks, timeout=60)


@dataclass
class Row:
    t_s: int
    requests: int
    rps: float
    p50_ms: float
    p99_ms: float
    errors: dict[str, int]
    rss_mb: dict[str, float]
    fds: dict[str, int]
    db_connections: dict[str, int]
    p50_p99_by_kind: dict[str, tuple[float, float]]


def by_kind(latencies: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """p50 and p99 ms of each kind of request."""
    return {k: (percentile(v, 50), percentile(v, 99)) for k, v in sorted(latencies.items())}


def sample(stack: Stack) -> tuple[dict[str, float], dict[str, int], dict[str, int]]:
    rss, fds = sample_processes(stack)
    return rss, fds, sample_connections(stack)


def format_row(row: Row) -> str:
    errors = ", ".join(f"{k} {v}" for k, v in sorted(row.errors.items())) or "none"
    rss = " ".join(f"{k} {v:.0f}" for k, v in row.rss_mb.items())
    fds = " ".join(f"{k} {v}" for k, v in row.fds.items())
    conns = " ".join(f"{k} {v}" for k, v in sorted(row.db_connections.items()))
    return (
        f"{row.t_s:>5}s  {row.requests:>5} req  {row.rps:5.1f}/s  p50 {row.p50_ms:6.1f}  "
        f"p99 {row.p99_ms:7.1f} ms | errors: {errors} | RSS MB: {rss} | fds: {fds} | "
        f"db conns: {conns}"
    )


async def report(soak: Soak, seconds: float, interval: float, rows: list[Row]) -> None:
    """One row every ``interval`` seconds while the schedule runs (and one for the tail)."""
    start = time.perf_counter()
    tick = 1
    while True:
        end = min(start + tick * interval, start + seconds)
        await asyncio.sleep(max(0.0, end - time.perf_counter()))
        window, soak.window = soak.window, Window()
        rss, fds, conns = await asyncio.to_thread(sample, soak.stack)
        elapsed = interval if end < start + seconds else seconds - (tick - 1) * interval
        row = Row(
            t_s=round(end - start),
            requests=len(window.latencies),
            rps=len(window.latencies) / max(elapsed, 1e-9),
            p50_ms=percentile(window.latencies, 50),
            p99_ms=percentile(window.latencies, 99),
            errors=dict(window.errors),
            rss_mb=rss,
            fds=fds,
            db_connections=conns,
            p50_p99_by_kind=by_kind(window.by_kind),
        )
        rows.append(row)
        print(format_row(row), flush=True)
        if end >= start + seconds:
            return
        tick += 1


def summarize(soak: Soak, rows: list[Row], warmup_s: float) -> dict[str, Any]:
    """Totals, overall percentiles, and the last row against the end of the warm-up."""
    warm = next((r for r in rows if r.t_s >= warmup_s), rows[0])
    last = rows[-1]
    growth = {
        name: round((last.rss_mb.get(name, 0.0) - mb) / mb * 100, 1)
        for name, mb in warm.rss_mb.items()
        if mb > 0
    }
    return {
        "requests": dict(soak.totals),
        "total_requests": sum(soak.totals.values()),
        "errors": dict(soak.errors),
        "p50_ms": percentile(soak.all_latencies, 50),
        "p99_ms": percentile(soak.all_latencies, 99),
        "p50_p99_by_kind": by_kind(soak.all_by_kind),
        "warmup_end_s": warm.t_s,
        "rss_mb_warmup_end": warm.rss_mb,
        "rss_mb_end": last.rss_mb,
        "rss_growth_pct": growth,
        "fds_warmup_end": warm.fds,
        "fds_end": last.fds,
        "fds_max_after_warmup": _max_after(rows, warm, "fds"),
        "db_connections_first": rows[0].db_connections,
        "db_connections_warmup_end": warm.db_connections,
        "db_connections_end": last.db_connections,
        "db_connections_max_after_warmup": _max_after(rows, warm, "db_connections"),
        "documents_live": len(soak.traffic.documents),
    }


def _max_after(rows: list[Row], warm: Row, attribute: str) -> dict[str, int]:
    peak: dict[str, int] = {}
    for row in rows[rows.index(warm) :]:
        for name, value in getattr(row, attribute).items():
            peak[name] = max(peak.get(name, 0), value)
    return peak


def print_summary(summary: dict[str, Any]) -> None:
    print("\nsummary")
    print(f"  requests {summary['total_requests']}: " + json.dumps(summary["requests"]))
    print(f"  errors: {json.dumps(summary['errors']) if summary['errors'] else 'none'}")
    print(f"  latency overall: p50 {summary['p50_ms']:.1f} ms, p99 {summary['p99_ms']:.1f} ms")
    kinds = ", ".join(f"{k} {a:.0f}/{b:.0f}" for k, (a, b) in summary["p50_p99_by_kind"].items())
    print(f"  p50/p99 ms by kind: {kinds}")
    print(f"  RSS MB at the end of the warm-up ({summary['warmup_end_s']} s) -> end, growth:")
    for name, mb in summary["rss_mb_warmup_end"].items():
        end = summary["rss_mb_end"].get(name, 0.0)
        print(f"    {name:<9} {mb:7.1f} -> {end:7.1f}  {summary['rss_growth_pct'][name]:+5.1f}%")
    for key in ("fds", "db_connections"):
        print(
            f"  {key}: end of warm-up {json.dumps(summary[f'{key}_warmup_end'])}, end "
            f"{json.dumps(summary[f'{key}_end'])}, max after warm-up "
            f"{json.dumps(summary[f'{key}_max_after_warmup'])}"
        )
    print(f"  db connections first row: {json.dumps(summary['db_connections_first'])}")
    print(f"  soak documents live at the end: {summary['documents_live']}")


async def seed(urls: dict[str, str], traffic: Traffic) -> None:
    """A few documents for the searches to find, and the connections opened."""
    async with httpx.AsyncClient(timeout=60) as client:
        for n in range(8):
            source = f"seed/{n}.md"
            body = {"source": source, "text": traffic.document(n)}
            headers = {"X-User-Id": USERS[0], "X-User-Roles": ROLES}
            _check(await client.post(f"{urls['retriever']}/ingest", json=body, headers=headers))


async def soak_run(
    stack: Stack, seconds: float, rate: float, interval: float, warmup_s: float
) -> tuple[list[Row], dict[str, Any]]:
    """Drive the mix for ``seconds`` and report every ``interval``; rows and the summary."""
    soak = Soak(stack, rate)
    await seed(stack.urls, soak.traffic)
    rows: list[Row] = []
    limits = httpx.Limits(max_connections=MAX_IN_FLIGHT, max_keepalive_connections=64)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        await asyncio.gather(soak.drive(client, seconds), report(soak, seconds, interval, rows))
    return rows, summarize(soak, rows, warmup_s)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(
    minutes: Annotated[float, typer.Option(help="How long the traffic runs.")] = 30.0,
    rate: Annotated[float, typer.Option(help="Requests per second (open loop).")] = 10.0,
    interval: Annotated[float, typer.Option(help="Seconds between report rows.")] = 60.0,
    warmup: Annotated[float, typer.Option(help="Seconds of warm-up before growth counts.")] = 120.0,
    json_out: Annotated[Path | None, typer.Option(help="Write rows and summary here.")] = None,
) -> None:
    seconds = minutes * 60
    signal.signal(signal.SIGTERM, _interrupt)  # unwind: stop the services and servers
    with tempfile.TemporaryDirectory(prefix="reach-soak-") as folder:
        print(
            f"soak: {minutes:g} min at {rate:g} req/s, a row every {interval:g} s, warm-up "
            f"{warmup:g} s; mix {json.dumps(MIX)}; {os.cpu_count()} cores",
            flush=True,
        )
        with soak_stack(Path(folder)) as stack:
            print(f"stack up: {json.dumps(stack.pids)}", flush=True)
            rows, summary = asyncio.run(soak_run(stack, seconds, rate, interval, warmup))
        print_summary(summary)
        if json_out is not None:
            data = {"rows": [asdict(r) for r in rows], "summary": summary}
            json_out.write_text(json.dumps(data, indent=1))
    if summary["errors"]:
        raise typer.Exit(1)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    typer.run(main)
