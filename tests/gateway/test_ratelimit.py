"""Rate limits across replicas: each call counts once, in Redis, whichever gateway takes it."""

from __future__ import annotations

import asyncio
from collections import Counter

import psycopg

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
