"""Postgres restarted (``pg_ctl restart -m fast``: every session ended) while traffic runs.

Promise (docs/reliability.md, "Postgres"): nothing answers 500; a request that needed the
database while it was down answers a clear error (503 ``dependency_unavailable`` with
``Retry-After``, or the tool error a failed upstream gives); no audit row of an answered
tool call is lost or written twice (the writer retries its batch); agent turns, with an
Anthropic and an OpenAI model, complete or fail cleanly and leave a session the vendor
accepts and that takes the next turn; the retriever never leaves half an ingest (a source
has all its chunks or none), and every ingest it acknowledged is there.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from reach_common.llm.anthropic import render_messages as anthropic_wire
from reach_common.llm.history import repair
from reach_common.llm.openai import render_messages as openai_wire
from reach_common.llm.types import Message
from tests.agent.servers import ServerThread
from tests.agent.wire import ModelScript, anthropic_violations, openai_violations, replay_app
from tests.e2e.test_agent_sigkill import stored_history
from tests.faults.conftest import FaultStack, Outcome, Traffic, unique
from tests.faults.matrix import Row, record

# The first test of a session also starts the fault stack (four services, Postgres, Redis).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

RECOVERY_LIMIT_S = 10.0
BUSY_LIMIT_S = 30.0  # a turn left running when the traffic stopped, on a loaded machine
VENDORS = ("anthropic", "openai")
# Clear answers to a request that needed the database while it was down: the service's own
# 503, or, for a tool call, the shop's 503 passed on as the tool's failure.
OUTAGE_REASONS = {"dependency_unavailable", "tool_unavailable", "tool_error"}
PROMISE = (
    "no 500; 503 dependency_unavailable + Retry-After (or the tool's error) while down; "
    "no audit row lost or doubled; agent sessions stay provider-valid and usable "
    "(Anthropic, OpenAI); no half ingest, no acknowledged ingest lost"
)
DOCUMENT = "\n\n".join(
    f"## Part {n}\n\n" + " ".join(f"Paragraph {n} sentence {k} about restarts." for k in range(12))
    for n in range(3)
)


@pytest.fixture(scope="module")
def models() -> Iterator[tuple[str, dict[str, ModelScript]]]:
    """The recorded model of each vendor, served over loopback (the real SDKs call it)."""
    scripts = {vendor: ModelScript(vendor, keep_requests=False) for vendor in VENDORS}
    with ServerThread(replay_app(scripts)) as server:
        yield server.url, scripts


def agent_env(vendor: str, llm_url: str) -> dict[str, str]:
    common = {"LLM_PROVIDER": vendor, "LLM_MAX_RETRIES": "0", "SESSION_LOCK_TTL_S": "5"}
    if vendor == "anthropic":
        return {**common, "ANTHROPIC_API_KEY": "sk-ant-test-key", "LLM_BASE_URL": llm_url}
    # The SDK's own variable: the provider stays "openai" (LLM_BASE_URL would make it an
    # OpenAI-compatible server, which needs LLM_MODEL).
    return {**common, "OPENAI_API_KEY": "sk-test-key", "OPENAI_BASE_URL": llm_url + "/v1"}


def traffic_for(
    stack: FaultStack, client: httpx.AsyncClient, caller: str, agents: dict[str, str]
) -> Traffic:
    who: dict[str, Any] = {"user_id": caller, "roles": ["ops_admin"]}
    traffic = Traffic(pause=0.05)
    traffic.add(
        "invoke",
        lambda: client.post(
            f"{stack.url('gateway')}/tools/inventory_query/invoke",
            json={"arguments": {"sku": "SKU2024001"}, "user_context": who},
        ),
    )
    for vendor, url in agents.items():
        traffic.add(vendor, chat_sender(client, url, f"{caller}-{vendor}", who))
    count = iter(range(10_000))
    traffic.add(
        "ingest",
        lambda: client.post(
            f"{stack.url('retriever')}/ingest",
            json={"source": f"{caller}/doc-{next(count)}.md", "text": DOCUMENT},
            headers={"X-User-Id": caller, "X-User-Roles": "retriever_writer"},
        ),
    )
    return traffic


def chat_sender(client: httpx.AsyncClient, url: str, session: str, who: dict[str, Any]) -> Any:
    return lambda: client.post(
        f"{url}/chat",
        json={"session_id": session, "message": "How is SKU2024001 doing?", "user_context": who},
    )


def broken_promises(outcomes: list[Outcome]) -> list[str]:
    problems = []
    for o in outcomes:
        if o.ok:
            continue
        if o.reason not in OUTAGE_REASONS:
            problems.append(f"{o.kind}: {o.status} {o.reason} {str(o.body)[:300]}")
        elif o.status == 503 and "retry-after" not in o.headers:
            problems.append(f"{o.kind}: 503 {o.reason} without Retry-After")
    return problems


def audit_loss(stack: FaultStack, outcomes: list[Outcome]) -> tuple[int, int]:
    """(answered tool calls with no audit row, calls with more than one)."""
    trace_ids = [str(o.body["trace_id"]) for o in outcomes if isinstance(o.body, dict)]
    rows = stack.sql(
        "SELECT trace_id, count(*) FROM gateway.invocation WHERE trace_id = ANY(%s) "
        "GROUP BY trace_id",
        trace_ids,
    )
    found = {str(t): int(n) for t, n in rows}
    return sum(1 for t in trace_ids if t not in found), sum(1 for n in found.values() if n > 1)


def ingest_problems(stack: FaultStack, caller: str, outcomes: list[Outcome]) -> list[str]:
    """Half ingests (a source whose chunks are not all there) and acknowledged ingests that
    are missing."""
    stored = {
        str(name): (int(expected), int(found))
        for name, expected, found in stack.sql(
            "SELECT s.name, s.chunk_count, count(c.id) FROM retriever.source s "
            "LEFT JOIN retriever.chunk c ON c.source_id = s.id WHERE s.name LIKE %s "
            "GROUP BY s.name, s.chunk_count",
            f"{caller}/%",
        )
    }
    problems = [f"{n}: {f} of {e} chunks" for n, (e, f) in stored.items() if e != f or e == 0]
    for o in outcomes:
        if o.ok and o.body["source"] not in stored:
            problems.append(f"{o.body['source']}: acknowledged ({o.status}) but not stored")
    return problems


def history_problems(messages: list[dict[str, Any]]) -> list[str]:
    """What a vendor would refuse in the next turn built on this stored session."""
    history = stored_history(messages)
    if repair(history) != history:
        return ["orphaned tool call or result"]
    follow_up = [*history, Message("user", "and now?")]
    tools = [{"name": call.name} for m in history for call in m.tool_calls]
    return [
        *anthropic_violations({"messages": anthropic_wire(follow_up), "tools": tools}),
        *openai_violations({"messages": openai_wire(follow_up, None)}),
    ]


async def sessions_after(
    client: httpx.AsyncClient, agents: dict[str, str], caller: str
) -> dict[str, Any]:
    """Per vendor: the stored session's problems and the status of one more turn."""
    result: dict[str, Any] = {}
    who = {"user_id": caller, "roles": ["ops_admin"]}
    for vendor, url in agents.items():
        session = f"{caller}-{vendor}"
        read = await once_not_busy(
            lambda url=url, session=session: client.get(
                f"{url}/sessions/{session}",
                headers={"X-User-Id": caller, "X-User-Roles": "ops_admin"},
            )
        )
        problems = history_problems(read.json()["messages"]) if read.status_code == 200 else []
        turn = await once_not_busy(chat_sender(client, url, session, who))
        result[vendor] = (read.status_code, problems, turn.status_code)
    return result


async def once_not_busy(send: Any, limit_s: float = BUSY_LIMIT_S) -> httpx.Response:
    """``send()`` again while the session answers 409 ``session_busy``, as the API tells a
    client to: the last turn the traffic sent had its client go away when the traffic
    stopped, and the agent finishes a turn whose caller left (bounded polling)."""
    deadline = time.monotonic() + limit_s
    while True:
        response: httpx.Response = await send()
        busy = response.status_code == 409 and response.json().get("reason") == "session_busy"
        if not busy or time.monotonic() > deadline:
            return response
        await asyncio.sleep(0.2)


async def start_agents(stack: FaultStack, llm_url: str) -> dict[str, str]:
    urls = await asyncio.gather(
        *(
            asyncio.to_thread(stack.start_extra, f"agent-{v}", "agent", **agent_env(v, llm_url))
            for v in VENDORS
        )
    )
    return dict(zip(VENDORS, urls, strict=True))


async def test_postgres_restarted_mid_load(
    stack: FaultStack, models: tuple[str, dict[str, ModelScript]]
) -> None:
    caller = unique("pg-restart")
    agents = await start_agents(stack, models[0])
    marks = stack.log_marks()
    async with httpx.AsyncClient(timeout=30) as client:
        traffic = traffic_for(stack, client, caller, agents)
        async with traffic.running():
            await traffic.warmed()  # every kind has run against a live database
            down_at = time.monotonic()
            await asyncio.to_thread(stack.postgres.restart, "fast")
            back_at = time.monotonic()
            await traffic.recovered(back_at, RECOVERY_LIMIT_S + 5)
            await asyncio.sleep(1.0)
        await asyncio.sleep(1.0)  # the audit writer's last batch
        sessions = await sessions_after(client, agents, caller)

    invokes = [o for o in traffic.outcomes if o.kind == "invoke" and o.status]
    lost, duplicates = audit_loss(stack, invokes)
    ingests = ingest_problems(stack, caller, [o for o in traffic.outcomes if o.kind == "ingest"])
    recovered = traffic.recovered_at(back_at)

    row = Row("postgres restarted", "gateway+agent+retriever", PROMISE)
    for outcome in traffic.between(down_at):
        row.count(outcome.reason)
    row.lost = lost + sum("not stored" in p for p in ingests)
    row.duplicates = duplicates
    row.recover_s = None if recovered is None else round(recovered - back_at, 2)
    record(row)

    before = traffic.between(0, down_at)
    assert {o.kind for o in before if o.ok} == set(traffic.loops), [
        (o.kind, o.status, o.reason) for o in before if not o.ok
    ][:8]
    assert broken_promises(traffic.outcomes) == []
    assert (lost, duplicates) == (0, 0)
    assert ingests == []
    assert sessions == {vendor: (200, [], 200) for vendor in VENDORS}
    assert recovered is not None, "some kind of request never succeeded again"
    assert stack.tracebacks_since(marks) == {}
