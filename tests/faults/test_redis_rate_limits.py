"""Rate limits while Redis is killed: they fail in the direction RATE_LIMIT_WITHOUT_REDIS says.

A tool limited to 5 calls a minute is registered; the stack's gateway (the default,
``open``) and one more gateway set to ``closed`` share the stack's Redis, and each keeps
calling it for a caller of its own (the tool's limit counts per tool, so each gateway calls
a copy). Before the kill both answer 429 once over the limit; while Redis is down the open
one admits the calls (uncounted) and the closed one refuses them with 503
``dependency_unavailable`` and ``Retry-After``; once Redis is back (empty) both count again
from zero.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from tests.faults.conftest import REPO_ROOT, FaultStack, Traffic, unique
from tests.faults.matrix import Row, record

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
LIMIT = 5
DIRECTIONS = ("open", "closed")
TOOL = {direction: f"inventory_limited_{direction}" for direction in DIRECTIONS}
PROMISE = {
    "open": "limits fail open: over-limit calls admitted while Redis is down; 429 again after",
    "closed": "limits fail closed: 503 dependency_unavailable + Retry-After while Redis is "
    "down; calls admitted again <= 5 s after it returns",
}


def limited_copy(tool_id: str) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads(
        (REPO_ROOT / "manifests/inventory_query.json").read_text()
    )
    manifest.update(tool_id=tool_id, rate_limit=f"{LIMIT}/minute")
    return manifest


async def start_gateways(stack: FaultStack, client: httpx.AsyncClient) -> dict[str, str]:
    """The URL each direction's gateway answers at, once each has its limited tool."""
    for direction in DIRECTIONS:
        registered = await client.post(
            f"{stack.url('gateway')}/tools/register",
            json=limited_copy(TOOL[direction]),
            headers={"X-User-Id": "fault-admin", "X-User-Roles": "admin"},
        )
        assert registered.status_code in (200, 201, 409), registered.text
    closed = await asyncio.to_thread(
        stack.start_extra,
        "gateway-limits-closed",
        "gateway",
        RATE_LIMIT_WITHOUT_REDIS="closed",
        TASK_WORKER="false",
        TOOL_AUTO_DISCOVERY="false",  # the registry is in Postgres already
    )
    return {"open": stack.url("gateway"), "closed": closed}


def invoker(client: httpx.AsyncClient, url: str, tool_id: str, caller: str) -> Any:
    return lambda: client.post(
        f"{url}/tools/{tool_id}/invoke",
        json={
            "arguments": {"sku": "SKU2024001"},
            "user_context": {"user_id": caller, "roles": ["ops_admin"]},
        },
    )


async def both_limited(traffic: Traffic, since: float, limit_s: float = 20) -> None:
    """Wait (bounded) until both gateways have answered 429 since ``since``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        limited = {o.kind for o in traffic.between(since) if o.reason == "rate_limited"}
        if limited >= set(DIRECTIONS):
            return
        await asyncio.sleep(0.1)


async def test_rate_limits_fail_as_configured_while_redis_is_down(stack: FaultStack) -> None:
    callers = {direction: unique(f"limits-{direction}") for direction in DIRECTIONS}
    async with httpx.AsyncClient(timeout=15) as client:
        gateways = await start_gateways(stack, client)
        marks = stack.log_marks()
        traffic = Traffic(pause=0.1)
        for direction, url in gateways.items():
            traffic.add(direction, invoker(client, url, TOOL[direction], callers[direction]))
        async with traffic.running():
            await both_limited(traffic, 0.0)  # both callers are over their limit
            await asyncio.sleep(0.5)
            killed_at = time.monotonic()
            stack.redis.kill()
            await asyncio.sleep(2.0)
            # A call answered between these two marks may have met the new, empty Redis
            # before start() returned: it belongs to neither "down" nor "back".
            restarting_at = time.monotonic()
            await asyncio.to_thread(stack.redis.start)
            back_at = time.monotonic()
            await both_limited(traffic, back_at)  # both count to their limit again

    before = traffic.between(0, killed_at)
    during = traffic.between(killed_at + 0.1, restarting_at)
    after = traffic.between(restarting_at)
    for direction in DIRECTIONS:
        row = Row("redis killed (rate limits)", f"gateway, limits {direction}", PROMISE[direction])
        for outcome in traffic.between(killed_at):
            if outcome.kind == direction:
                row.count(outcome.reason)
        recovered = next((o.at for o in after if o.kind == direction and o.ok), None)
        row.recover_s = None if recovered is None else round(max(0.0, recovered - back_at), 2)
        record(row)

    def reasons(outcomes: list[Any], direction: str) -> set[str | None]:
        return {o.reason for o in outcomes if o.kind == direction}

    # With Redis up, both count: LIMIT calls admitted, then 429.
    for direction in DIRECTIONS:
        mine = [o for o in before if o.kind == direction]
        assert [o.reason for o in mine[:LIMIT]] == [None] * LIMIT
        assert reasons(mine[LIMIT:], direction) == {"rate_limited"}
    # Redis down: open admits the over-limit caller, closed refuses with a clear 503.
    assert reasons(during, "open") == {None}
    closed = [o for o in during if o.kind == "closed"]
    assert closed
    assert {(o.status, o.reason) for o in closed} == {(503, "dependency_unavailable")}
    assert all(o.headers.get("retry-after") == "1" for o in closed)
    # Redis back (empty): both admit again, then count to the limit again.
    for direction in DIRECTIONS:
        mine = [o for o in after if o.kind == direction]
        first_ok = next(i for i, o in enumerate(mine) if o.ok)
        assert mine[first_ok].at - back_at <= 5.0
        assert "rate_limited" in reasons(mine[first_ok:], direction)
    assert stack.tracebacks_since(marks) == {}
