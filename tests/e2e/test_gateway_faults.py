"""Fault tests: the gateway (in process) against the real shop running as a subprocess.

- the slow report with a small timeout_ms ends in tool_timeout: one deadline for the whole
  call, so the attempt cut off by it is not retried;
- an idempotent tool behind a 503 is retried as its policy says, honouring Retry-After;
- order_create is never retried and creates its order exactly once;
- the circuit breaker opens on failures and recovers through a half-open probe (its clock
  driven by the test);
- GET /traces/{id} of an invoke shows gateway and shop spans and the phases.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest
import redis

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.db import libpq_url
from reach_common.embeddings import Embedder
from tests.conftest import Backends, app_client
from tests.e2e.processes import free_port
from tests.gateway.conftest import ADMIN, http_tool, shipped
from tests.gateway.upstream import Reply, Upstream

REPORT = "http://shop:9000/api/reports/monthly"
DELAY_SCHEMA = {"type": "object", "properties": {"delay_ms": {"type": "integer"}}}


@pytest.fixture(scope="module")
def model() -> Embedder:
    return Embedder()


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _audit_rows(backends: Backends, tool_id: str) -> list[tuple[str | None, int]]:
    """``(reason, attempts)`` of each audited call of ``tool_id``, oldest first."""
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        return conn.execute(
            "SELECT reason, attempts FROM gateway.invocation WHERE tool_id = %s ORDER BY id",
            (tool_id,),
        ).fetchall()


def _clean_gateway(backends: Backends) -> None:
    """Empty the gateway's tables and Redis, keeping the shop's seeded data."""
    with psycopg.connect(libpq_url(backends.database_url), autocommit=True) as conn:
        conn.execute(
            "TRUNCATE gateway.tool, gateway.registry_state, auth.api_key, gateway.invocation"
        )
    client = redis.Redis.from_url(backends.redis_url)
    client.flushdb()
    client.close()


@pytest.fixture
async def gateway(
    backends: Backends, shop_url: str, model: Embedder
) -> AsyncIterator[tuple[Any, httpx.AsyncClient]]:
    _clean_gateway(backends)
    settings = Settings(
        database_url=backends.database_url,
        redis_url=backends.redis_url,
        shop_url=shop_url,
        log_level="WARNING",
        caller_rate_limit=None,
        route_rate_limit=None,
        audit_flush_ms=20,
        gc_freeze=False,
        approvals_enabled=False,  # order_create is called directly here
    )
    app = create_app(settings, embedder=model)
    async with app_client(app) as client:
        yield app, client


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    server = await Upstream().start()
    try:
        yield server
    finally:
        await server.stop()


async def invoke(
    client: httpx.AsyncClient, tool_id: str, arguments: dict[str, Any], **kw: Any
) -> Any:
    return await client.post(
        f"/tools/{tool_id}/invoke",
        json={"arguments": arguments, "user_context": {"user_id": "u1", "roles": ["ops_admin"]}},
        **kw,
    )


async def test_slow_report_times_out_and_the_deadline_covers_retries(
    gateway: Any, backends: Backends
) -> None:
    app, client = gateway
    slow = http_tool(
        "report_quick",
        REPORT,
        input_schema=DELAY_SCHEMA,
        timeout_ms=300,
        retry_policy={"max_retries": 2, "backoff_ms": 50},
    )
    await client.post("/tools/register", json=slow, headers=ADMIN)
    answer = await invoke(client, "report_quick", {"delay_ms": 3000})
    fast = await invoke(client, "report_quick", {"delay_ms": 0})
    await app.state.runtime.audit.flush()
    assert answer.status_code == 504
    body = answer.json()
    assert body["success"] is False
    assert body["error"]["reason"] == "tool_timeout"
    assert "300 ms" in body["error"]["message"]
    # timeout_ms is one deadline for the call, retries included: the attempt it cut off
    # was the only one, although the policy allows two retries.
    assert _audit_rows(backends, "report_quick") == [("tool_timeout", 1), (None, 1)]
    assert fast.status_code == 200
    assert set(fast.json()["output"]) >= {"month", "orders", "units_sold", "revenue", "top_skus"}


async def test_queued_report_with_small_timeout_fails_as_tool_timeout(gateway: Any) -> None:
    _, client = gateway
    report = shipped("report_monthly")
    report["timeout_ms"] = 300  # the shop takes 1.5 s by default
    await client.post("/tools/register", json=report, headers=ADMIN)
    accepted = await invoke(client, "report_monthly", {"month": "2024-07"})
    assert accepted.status_code == 202
    task_id = accepted.json()["task_id"]
    for _ in range(100):
        task = (await client.get(f"/tasks/{task_id}", headers=ADMIN)).json()
        if task["status"] in ("succeeded", "failed"):
            break
        await asyncio.sleep(0.05)
    assert task["status"] == "failed"
    assert task["result"]["error"]["reason"] == "tool_timeout"
    assert "300 ms" in task["result"]["error"]["message"]


async def test_shipped_report_runs_as_a_task(gateway: Any) -> None:
    _, client = gateway
    await client.post("/tools/register", json=shipped("report_monthly"), headers=ADMIN)
    accepted = await invoke(client, "report_monthly", {"month": "2024-07"})
    task_id = accepted.json()["task_id"]
    for _ in range(100):
        task = (await client.get(f"/tasks/{task_id}", headers=ADMIN)).json()
        if task["status"] in ("succeeded", "failed"):
            break
        await asyncio.sleep(0.1)
    assert accepted.status_code == 202
    assert task["status"] == "succeeded"
    report = task["result"]["output"]
    assert report["month"] == "2024-07"
    assert report["orders"] == 5


async def test_idempotent_tool_behind_503_is_retried_as_its_policy_says(
    gateway: Any, upstream: Upstream
) -> None:
    app, client = gateway
    retried = http_tool(
        "flaky_read", upstream.url + "/stock", retry_policy={"max_retries": 2, "backoff_ms": 50}
    )
    capped = http_tool(
        "flaky_capped", upstream.url + "/stock", retry_policy={"max_retries": 1, "backoff_ms": 20}
    )
    for manifest in (retried, capped):
        await client.post("/tools/register", json=manifest, headers=ADMIN)

    upstream.script = [
        Reply(503, {"message": "busy"}, {"Retry-After": "1"}),
        Reply(503, {"message": "busy"}),
        Reply(200, {"available": 3}),
    ]
    recovered = await invoke(client, "flaky_read", {})
    hits_recovered = upstream.hits()
    upstream.reset()
    upstream.default = Reply(503, {"message": "still busy"})
    exhausted = await invoke(client, "flaky_capped", {})
    hits_exhausted = upstream.hits()
    await app.state.runtime.audit.flush()

    assert recovered.status_code == 200
    assert recovered.json()["output"] == {"available": 3}
    assert hits_recovered == 3  # 1 try + 2 retries, as max_retries says
    assert recovered.json()["latency_ms"] >= 1000  # Retry-After: 1 was honoured
    assert exhausted.status_code == 502
    assert exhausted.json()["error"]["reason"] == "tool_error"
    assert exhausted.json()["error"]["upstream_status"] == 503
    assert hits_exhausted == 2  # max_retries 1
    assert upstream.received[0].headers.get("idempotency-key") is None


async def test_connect_errors_are_retried_for_idempotent_tools(
    gateway: Any, backends: Backends
) -> None:
    app, client = gateway
    closed = f"http://127.0.0.1:{free_port()}/nothing"
    await client.post(
        "/tools/register",
        json=http_tool("down", closed, retry_policy={"max_retries": 2, "backoff_ms": 10}),
        headers=ADMIN,
    )
    answer = await invoke(client, "down", {})
    await app.state.runtime.audit.flush()
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        attempts = conn.execute(
            "SELECT attempts FROM gateway.invocation WHERE tool_id = 'down'"
        ).fetchone()
    assert answer.status_code == 502
    assert answer.json()["error"]["reason"] == "tool_error"
    assert "unreachable" in answer.json()["error"]["message"]
    assert attempts == (3,)


def _orders_of(backends: Backends, customer: str) -> list[tuple[str, int]]:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        return conn.execute(
            "SELECT order_id, quantity FROM shop.sales_order WHERE customer = %s", (customer,)
        ).fetchall()


async def test_order_create_is_never_retried_and_creates_exactly_once(
    gateway: Any, upstream: Upstream, backends: Backends
) -> None:
    _, client = gateway
    await client.post("/tools/register", json=shipped("order_create"), headers=ADMIN)
    # Even if a manifest asked for retries, a non-idempotent tool gets one attempt.
    behind_503 = shipped("order_create")
    behind_503.update(
        tool_id="order_create_flaky", retry_policy={"max_retries": 3, "backoff_ms": 10}
    )
    behind_503["endpoint"]["url"] = upstream.url + "/api/orders"
    await client.post("/tools/register", json=behind_503, headers=ADMIN)

    customer = f"Gateway Test {uuid.uuid4().hex[:8]}"
    order = {"sku": "SKU2024003", "quantity": 2, "customer": customer}
    created = await invoke(client, "order_create", order, headers={"Idempotency-Key": "order-1"})
    replayed = await invoke(client, "order_create", order, headers={"Idempotency-Key": "order-1"})

    upstream.default = Reply(503, {"message": "down for maintenance"})
    failed = await invoke(client, "order_create_flaky", order)

    assert created.status_code == 200
    assert created.json()["output"]["status"] == "pending"
    assert replayed.json()["output"]["order_id"] == created.json()["output"]["order_id"]
    assert _orders_of(backends, customer) == [(created.json()["output"]["order_id"], 2)]
    assert failed.status_code == 502
    assert failed.json()["error"]["upstream_status"] == 503
    assert upstream.hits("/api/orders") == 1  # never retried
    assert len(upstream.received[0].headers["idempotency-key"]) == 32


async def test_circuit_breaker_opens_and_recovers(gateway: Any, backends: Backends) -> None:
    app, client = gateway
    clock = Clock()
    app.state.runtime.executor.breakers.clock = clock
    probe = http_tool(
        "report_guarded",
        REPORT,
        input_schema=DELAY_SCHEMA,
        timeout_ms=500,
        circuit_breaker={"failure_threshold": 2, "reset_timeout_ms": 500},
    )
    await client.post("/tools/register", json=probe, headers=ADMIN)
    failures = [await invoke(client, "report_guarded", {"delay_ms": 3000}) for _ in range(2)]
    opened = await invoke(client, "report_guarded", {"delay_ms": 0})
    clock.now += 0.5  # reset_timeout_ms has passed: the next call is the probe
    probes = await asyncio.gather(
        *(invoke(client, "report_guarded", {"delay_ms": 100}) for _ in range(3))
    )
    closed = await invoke(client, "report_guarded", {"delay_ms": 0})
    await app.state.runtime.audit.flush()
    assert [f.json()["error"]["reason"] for f in failures] == ["tool_timeout", "tool_timeout"]
    assert opened.status_code == 503
    assert opened.json()["error"]["reason"] == "tool_unavailable"
    assert opened.headers["retry-after"] == "1"
    # Refused without calling the shop: no attempt was made.
    assert _audit_rows(backends, "report_guarded")[2] == ("tool_unavailable", 0)
    # Half-open: exactly one probe goes through, the others are refused meanwhile.
    assert sorted(p.status_code for p in probes) == [200, 503, 503]
    assert closed.status_code == 200
    assert app.state.runtime.executor.breakers.state("report_guarded") == "closed"


async def test_trace_of_an_invoke_shows_gateway_and_shop_spans(
    gateway: Any, backends: Backends
) -> None:
    _, client = gateway
    await client.post("/tools/register", json=shipped("inventory_query"), headers=ADMIN)
    answer = await invoke(client, "inventory_query", {"sku": "SKU2024001"})
    trace_id = answer.json()["trace_id"]
    for _ in range(50):
        trace = await client.get(f"/traces/{trace_id}", headers=ADMIN)
        # shop's server span can come in a later batch than its first span (under load
        # CI saw "shop" listed before its server span was written)
        if trace.status_code == 200 and _has_shop_server_span(trace.json()["spans"]):
            break
        await asyncio.sleep(0.1)
    assert answer.status_code == 200
    assert answer.json()["output"] == {
        "sku": "SKU2024001",
        "name": "Wireless Mouse",
        "available": 156,
        "locked": 12,
        "total": 168,
    }
    body = trace.json()
    assert body["services"] == ["gateway", "shop"]
    phases = body["phases"]
    for phase in ("auth", "validate", "execute", "connect", "response"):
        assert phases[phase] is not None, phase
    spans: dict[str, dict[str, Any]] = {}

    def index(nodes: list[dict[str, Any]]) -> None:
        for node in nodes:
            spans[node["span_id"]] = node
            index(node["children"])

    index(body["spans"])
    shop_server = next(
        s for s in spans.values() if s["service"] == "shop" and s["kind"] == "server"
    )
    parent = spans[shop_server["parent_span_id"]]
    assert (parent["service"], parent["kind"]) == ("gateway", "client")
    assert spans[parent["parent_span_id"]]["name"] == "gateway.execute"


def _has_shop_server_span(nodes: list[dict[str, Any]]) -> bool:
    return any(
        (node["service"] == "shop" and node["kind"] == "server")
        or _has_shop_server_span(node["children"])
        for node in nodes
    )
