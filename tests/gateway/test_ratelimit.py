"""Rate limits across replicas: each call counts once, in Redis, whichever gateway takes it."""

from __future__ import annotations

import asyncio
from collections import Counter

import psycopg
import pytest
from limits import parse
from redis.asyncio import BlockingConnectionPool, Redis

from gateway.ratelimit.service import Limit, RateLimited, RateLimiter
from reach_common.auth.keys import create_key
from reach_common.db import libpq_url
from tests.conftest import Backends, app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool


async def test_two_instances_200_concurrent_calls_exactly_50_succeed(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    manifest = python_tool(
        "limited", "add", rate_limit="50/minute", input_schema={"type": "object"}
    )
    first, second = make_gateway(), make_gateway()
    async with app_client(first) as one, app_client(second) as two:
        assert (await one.post("/tools/register", json=manifest, headers=ADMIN)).status_code == 201
        for app in (first, second):
            registry = app.state.runtime.registry
            while registry.get("limited") is None:
                await asyncio.wait_for(registry.changed.wait(), 2)

        async def call(n: int) -> tuple[int, dict[str, object], str | None]:
            client = one if n % 2 else two
            answer = await client.post(
                "/tools/limited/invoke",
                json={"arguments": {"a": n, "b": 1}, "user_context": {"user_id": f"u{n % 7}"}},
            )
            return answer.status_code, answer.json(), answer.headers.get("retry-after")

        results = await asyncio.gather(*(call(n) for n in range(200)))
        await first.state.runtime.audit.flush()
        await second.state.runtime.audit.flush()
    statuses = Counter(status for status, _, _ in results)
    assert statuses == {200: 50, 429: 150}
    refused = [(body, retry) for status, body, retry in results if status == 429]
    assert all(body["error"]["reason"] == "rate_limited" for body, _ in refused)  # type: ignore[index]
    assert all(retry is not None and 1 <= int(retry) <= 60 for _, retry in refused)
    assert "50 per minute" in str(refused[0][0]["error"]["message"])  # type: ignore[index]
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        audited = dict(
            conn.execute(
                "SELECT status, count(*) FROM gateway.invocation WHERE tool_id = 'limited' "
                "GROUP BY status"
            ).fetchall()
        )
    assert audited == {"succeeded": 50, "refused": 150}


async def test_per_caller_limit_and_no_double_counting(make_gateway: GatewayFactory) -> None:
    """A call refused by one limit uses up none of the others."""
    generous = python_tool(
        "generous", "add", rate_limit="100/minute", input_schema={"type": "object"}
    )
    strict_tool = python_tool(
        "scarce", "add", rate_limit="1/minute", input_schema={"type": "object"}
    )
    app = make_gateway(caller_rate_limit="3/minute")
    async with app_client(app) as client:
        await client.post("/tools/register", json=generous, headers=ADMIN)
        await client.post("/tools/register", json=strict_tool, headers=ADMIN)
        # Buckets key on verified identities (a claimed user id would be a free new bucket).
        async with app.state.runtime.registry_service._sessionmaker.begin() as session:
            u1 = {"X-API-Key": (await create_key(session, "u1", [])).key}
            u2 = {"X-API-Key": (await create_key(session, "u2", [])).key}
        call = {"arguments": {"a": 1, "b": 2}}
        scarce_first = await client.post("/tools/scarce/invoke", json=call, headers=u1)
        # The tool limit refuses:
        scarce_again = await client.post("/tools/scarce/invoke", json=call, headers=u1)
        u1_calls = [
            await client.post("/tools/generous/invoke", json=call, headers=u1) for _ in range(3)
        ]
        u2_call = await client.post("/tools/generous/invoke", json=call, headers=u2)
    assert scarce_first.status_code == 200
    assert scarce_again.status_code == 429
    assert "tool 'scarce'" in scarce_again.json()["error"]["message"]
    # u1 spent 1 of 3 on scarce (the refused call did not count): 2 more pass, then per-caller.
    assert [c.status_code for c in u1_calls] == [200, 200, 429]
    assert "per-caller" in u1_calls[2].json()["error"]["message"]
    assert u2_call.status_code == 200


async def test_routing_requests_are_limited_per_caller_before_the_router_works(
    make_gateway: GatewayFactory,
) -> None:
    """ROUTE_RATE_LIMIT: POST /run (dry runs too) and a ranked listing share one bucket per
    caller, counted before the request is embedded; a refused one is a 429 with
    Retry-After; another caller keeps its own bucket, and a plain listing is not routing."""
    app = make_gateway(route_rate_limit="3/minute")
    async with app_client(app) as client:
        adder = python_tool(
            "add_numbers",
            "add",
            description="Add two integers a and b.",
            input_schema={
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        )
        assert (await client.post("/tools/register", json=adder, headers=ADMIN)).is_success
        async with app.state.runtime.registry_service._sessionmaker.begin() as session:
            u1 = {"X-API-Key": (await create_key(session, "u1", [])).key}
            u2 = {"X-API-Key": (await create_key(session, "u2", [])).key}
        dry = {"user_query": "add 2 and 3", "dry_run": True}
        routed = [await client.post("/run", json=dry, headers=u1) for _ in range(2)]
        ranked = await client.get("/tools/list", params={"q": "add numbers"}, headers=u1)
        refused_run = await client.post("/run", json=dry, headers=u1)
        refused_rank = await client.get("/tools/list", params={"q": "add"}, headers=u1)
        plain = await client.get("/tools/list", headers=u1)
        other = await client.post("/run", json=dry, headers=u2)
    assert [r.status_code for r in routed] == [200, 200]
    assert ranked.status_code == 200
    assert refused_run.status_code == 429
    assert refused_run.json()["error"]["reason"] == "rate_limited"
    assert "routing limit is 3 per minute" in refused_run.json()["error"]["message"]
    assert 1 <= int(refused_run.headers["retry-after"]) <= 60
    assert refused_rank.status_code == 429
    assert refused_rank.json()["reason"] == "rate_limited"
    assert plain.status_code == 200
    assert other.status_code == 200


# Leases (RATE_LIMIT_LEASE_SHARE): a replica records a share of a large limit at once and
# spends it in memory. Measured on the limiter itself against the real Redis.


async def _limiter(backends: Backends, share: float = 0.01) -> tuple[RateLimiter, Redis]:
    # As the gateway's own client: a burst waits for a connection rather than failing.
    redis = Redis.from_pool(BlockingConnectionPool.from_url(backends.redis_url, max_connections=20))
    return RateLimiter(redis, caller_limit=None, lease_share=share), redis


def _limits(limiter: RateLimiter, limit: str) -> list[Limit]:
    return limiter.limits_for("tool_x", parse(limit), "u1")


async def test_a_large_limit_is_leased_and_spent_in_memory(clean_state: Backends) -> None:
    limiter, redis = await _limiter(clean_state)
    limits = _limits(limiter, "1000/minute")  # 1%: 10 slots for 0.6 s
    key = limits[0].key
    await limiter.hit(limits)
    assert await redis.zcard(key) == 10  # one run recorded the lease
    for _ in range(9):
        await limiter.hit(limits)
    assert await redis.zcard(key) == 10  # nine calls spent it without Redis
    await limiter.hit(limits)
    assert await redis.zcard(key) == 20
    await limiter.release()
    assert await redis.zcard(key) == 11  # the nine unspent slots given back
    await redis.aclose()


async def test_a_small_limit_is_counted_call_by_call(clean_state: Backends) -> None:
    limiter, redis = await _limiter(clean_state)
    limits = _limits(limiter, "150/minute")  # 1.5 slots: no lease
    await limiter.hit(limits)
    assert await redis.zcard(limits[0].key) == 1
    await redis.aclose()


async def test_slots_not_spent_in_time_are_given_back(clean_state: Backends) -> None:
    limiter, redis = await _limiter(clean_state)
    limits = _limits(limiter, "12000/minute")  # 100 slots (the most) for 0.6 s
    await limiter.hit(limits)
    assert await redis.zcard(limits[0].key) == 100
    await asyncio.sleep(0.7)
    await limiter.hit(limits)  # gives back 99, leases 100
    assert await redis.zcard(limits[0].key) == 101
    await redis.aclose()


async def test_replicas_leasing_never_admit_more_than_the_limit(clean_state: Backends) -> None:
    (one, redis), (two, other) = await _limiter(clean_state), await _limiter(clean_state)
    limit = "300/minute"  # 3 slots a lease
    key = _limits(one, limit)[0].key

    async def admitted(limiter: RateLimiter) -> bool:
        try:
            await limiter.hit(_limits(limiter, limit))
        except RateLimited:
            return False
        return True

    # One after the other: each replica holds at most 2 unspent slots when the limit is hit.
    results = [await admitted(one if n % 2 else two) for n in range(400)]
    assert 296 <= sum(results) <= 300
    # At once: one lease at a time per limit, so a burst spends what it leases.
    await redis.delete(key)
    for limiter in (one, two):
        await limiter.release()
    results = await asyncio.gather(*(admitted(one if n % 2 else two) for n in range(400)))
    assert 296 <= sum(results) <= 300
    for limiter in (one, two):
        await limiter.release()
    assert await redis.zcard(key) == sum(results)  # what is left counted is what was admitted
    await redis.aclose()
    await other.aclose()


async def test_a_lease_takes_what_is_left_then_refuses(clean_state: Backends) -> None:
    (one, redis), (two, other) = await _limiter(clean_state), await _limiter(clean_state, 0.0)
    limits = _limits(one, "250/minute")  # 2 slots a lease for the first replica
    for _ in range(249):
        await two.hit(limits)  # counted call by call
    await one.hit(limits)  # asks 2, granted the 1 left
    assert await redis.zcard(limits[0].key) == 250
    with pytest.raises(RateLimited) as refused:
        await one.hit(limits)
    assert 1 <= int(refused.value.headers["Retry-After"]) <= 60
    await redis.aclose()
    await other.aclose()
