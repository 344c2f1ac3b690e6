"""Redis killed (SIGKILL) and started again, empty, while traffic runs through the stack.

Promise (docs/reliability.md, "Redis"): nothing answers 500; what does not need Redis keeps
serving (tool calls, their rate limits failing open by default, their audit rows); what does
answers 503 ``dependency_unavailable`` or ``queue_unavailable`` with ``Retry-After``; every
kind of request succeeds again within 5 s of Redis being back; no audit row of an answered
call is lost or written twice; the agent's sessions stay readable and usable.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from tests.faults.conftest import FaultStack, Outcome, Traffic, unique
from tests.faults.matrix import Row, record

# The first test of a session also starts the fault stack (four services, Postgres, Redis).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

OUTAGE_S = 3.0
RECOVERY_LIMIT_S = 5.0
# What a request may answer while Redis is down (anything else is a broken promise).
# (The offline agent names the gateway's 503 as gateway_unavailable, with its reason.)
OUTAGE_REASONS = {"dependency_unavailable", "queue_unavailable", "gateway_unavailable"}
PROMISE = (
    "no 500; tool calls and /run keep serving (limits open, cache and context missed); "
    "Redis-only features answer 503 "
    "dependency_unavailable/queue_unavailable + Retry-After; full service <= 5 s after Redis "
    "returns; no audit row lost or doubled; sessions stay usable"
)


def traffic_for(stack: FaultStack, client: httpx.AsyncClient, caller: str) -> Traffic:
    """The four kinds: a tool call, /run (route cache, session context), a queued tool
    (the Redis stream), an agent turn (session lock)."""
    gateway, agent = stack.url("gateway"), stack.url("agent")
    who: dict[str, Any] = {"user_id": caller, "roles": ["ops_admin"]}
    traffic = Traffic(pause=0.05)
    traffic.add(
        "invoke",
        lambda: client.post(
            f"{gateway}/tools/inventory_query/invoke",
            json={"arguments": {"sku": "SKU2024001"}, "user_context": who},
        ),
    )
    traffic.add(
        "run",
        lambda: client.post(
            f"{gateway}/run",
            json={
                "user_query": "SKU2024002 还有多少库存",
                "session_id": f"{caller}-run",
                "user_context": who,
            },
        ),
    )
    traffic.add(
        "queue",
        lambda: client.post(
            f"{gateway}/tools/report_monthly/invoke",
            json={"arguments": {"month": "2024-07"}, "user_context": who},
        ),
        pause=0.5,  # the tool's own rate limit is 30/minute
    )
    traffic.add(
        "agent",
        lambda: client.post(
            f"{agent}/chat",
            json={
                "session_id": f"{caller}-chat",
                "message": "SKU2024003 还有多少库存",
                "user_context": who,
            },
        ),
    )
    return traffic


def broken_promises(outcomes: list[Outcome]) -> list[str]:
    """Answers no Redis outage excuses: a 500, a reason outside the outage set, a 503
    without Retry-After."""
    problems = []
    for o in outcomes:
        if o.ok:
            continue
        if o.status == 0 or (o.status >= 500 and o.reason not in OUTAGE_REASONS):
            problems.append(f"{o.kind}: {o.status} {o.reason} {str(o.body)[:200]}")
        elif o.status == 503 and "retry-after" not in o.headers:
            problems.append(f"{o.kind}: 503 {o.reason} without Retry-After")
        elif o.status < 500 and o.reason not in OUTAGE_REASONS:
            problems.append(f"{o.kind}: {o.status} {o.reason}")
    return problems


def audit_counts(stack: FaultStack, trace_ids: list[str]) -> tuple[int, int]:
    """(answered calls with no audit row, calls with more than one row), by trace id."""
    rows = stack.sql(
        "SELECT trace_id, count(*) FROM gateway.invocation WHERE trace_id = ANY(%s) "
        "AND tool_id = 'inventory_query' GROUP BY trace_id",
        trace_ids,
    )
    found = {str(t): int(n) for t, n in rows}
    lost = sum(1 for t in trace_ids if t not in found)
    return lost, sum(1 for n in found.values() if n > 1)


async def wait_for_audit(stack: FaultStack, trace_ids: list[str], limit_s: float = 10) -> None:
    """Until every answered call has its audit row (the writer batches), or ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not audit_counts(stack, trace_ids)[0]:
            return
        await asyncio.sleep(0.2)


async def last_task(client: httpx.AsyncClient, stack: FaultStack, traffic: Traffic) -> str:
    """The status of the last task queued, once it has finished (or after 15 s)."""
    accepted = [o for o in traffic.outcomes if o.kind == "queue" and o.ok]
    task_id = accepted[-1].body["task_id"]
    deadline = time.monotonic() + 15
    status = "unknown"
    while time.monotonic() < deadline:
        task = await client.get(
            f"{stack.url('gateway')}/tasks/{task_id}",
            headers={"X-User-Id": "ops", "X-User-Roles": "admin"},
        )
        status = task.json().get("status", f"http_{task.status_code}")
        if status in ("succeeded", "failed"):
            break
        await asyncio.sleep(0.2)
    return str(status)


async def test_redis_killed_and_restarted_mid_load(stack: FaultStack) -> None:
    caller = unique("redis-kill")
    marks = stack.log_marks()
    async with httpx.AsyncClient(timeout=15) as client:
        traffic = traffic_for(stack, client, caller)
        async with traffic.running():
            await traffic.warmed()  # every kind has run against a live Redis
            killed_at = time.monotonic()
            stack.redis.kill()
            await asyncio.sleep(OUTAGE_S)
            await asyncio.to_thread(stack.redis.start)
            back_at = time.monotonic()
            await traffic.recovered(back_at, RECOVERY_LIMIT_S + 5)
            await asyncio.sleep(1.0)  # and it stays up
        task = await last_task(client, stack, traffic)
        session = await client.get(
            f"{stack.url('agent')}/sessions/{caller}-chat",
            headers={"X-User-Id": caller, "X-User-Roles": "ops_admin"},
        )

    before = traffic.between(0, killed_at)
    during = traffic.between(killed_at, back_at)
    recovered = traffic.recovered_at(back_at)
    invokes = [o for o in traffic.outcomes if o.kind == "invoke" and o.ok]
    trace_ids = [str(o.body["trace_id"]) for o in invokes]
    await wait_for_audit(stack, trace_ids)
    lost, duplicates = audit_counts(stack, trace_ids)

    row = Row("redis killed + restarted", "gateway+agent", PROMISE)
    for outcome in traffic.between(killed_at):
        row.count(outcome.reason)
    row.lost, row.duplicates = lost, duplicates
    row.recover_s = None if recovered is None else round(recovered - back_at, 2)
    record(row)

    assert {o.kind for o in before if o.ok} == set(traffic.loops), before[-8:]
    assert broken_promises(traffic.outcomes) == []
    # What does not need Redis kept serving: tool calls (rate limits fail open), and /run
    # (its route cache and session context degrade to a miss).
    for kind in ("invoke", "run"):
        assert [o for o in during if o.kind == kind], f"no {kind} ran during the outage"
        assert all(o.ok for o in during if o.kind == kind), [
            (o.status, o.reason) for o in during if o.kind == kind and not o.ok
        ][:5]
    assert recovered is not None, "some kind of request never succeeded again"
    assert recovered - back_at <= RECOVERY_LIMIT_S
    assert (lost, duplicates) == (0, 0)
    assert stack.tracebacks_since(marks) == {}
    assert task == "succeeded"  # the worker runs tasks again after Redis came back empty
    assert session.status_code == 200, session.text
    assert session.json()["messages"], "the session lost its history"
