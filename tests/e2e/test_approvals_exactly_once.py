"""An approved order is placed exactly once: against concurrent approvals on two gateway
replicas, and across a gateway killed (SIGKILL) between the approval and the tool's answer.

The shop runs as a real process. The race runs two gateway apps in process on the same
Postgres and Redis; the crash runs the gateway as a process, in front of a tap that lets
the order reach the shop and then holds the shop's answer until the kill has landed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.db import libpq_url
from reach_common.embeddings import Embedder
from reach_common.processes import free_port, running_service
from tests.agent.servers import ServerThread
from tests.conftest import Backends, app_client
from tests.gateway.conftest import ADMIN, shipped

pytestmark = pytest.mark.slow
U1 = {"user_id": "u1", "roles": ["ops_admin"]}


@pytest.fixture(scope="module")
def model() -> Embedder:
    return Embedder()


def clean_gateway(backends: Backends) -> None:
    """Empty the gateway's tables and Redis, keeping the shop's seeded data."""
    with psycopg.connect(libpq_url(backends.database_url), autocommit=True) as conn:
        conn.execute(
            "TRUNCATE gateway.tool, gateway.registry_state, auth.api_key, gateway.invocation, "
            "gateway.approval, gateway.approval_event, gateway.callback_delivery"
        )
    client = redis.Redis.from_url(backends.redis_url)
    client.flushdb()
    client.close()


def orders_of(backends: Backends, customer: str) -> list[str]:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        rows = conn.execute(
            "SELECT order_id FROM shop.sales_order WHERE customer = %s", (customer,)
        ).fetchall()
    return [row[0] for row in rows]


def order_for(customer: str) -> dict[str, Any]:
    return {"sku": "SKU2024003", "quantity": 1, "customer": customer}


def approver(n: int) -> dict[str, str]:
    return {"X-User-Id": f"approver{n}", "X-User-Roles": "admin"}


async def test_twenty_concurrent_approvals_on_two_replicas_place_one_order(
    backends: Backends, shop_url: str, model: Embedder
) -> None:
    clean_gateway(backends)
    settings = Settings(
        database_url=backends.database_url, redis_url=backends.redis_url, shop_url=shop_url,
        log_level="WARNING", caller_rate_limit=None, route_rate_limit=None, audit_flush_ms=20,
        gc_freeze=False,
    )  # fmt: skip
    customer = f"Race {uuid.uuid4().hex[:8]}"
    async with AsyncExitStack() as stack:
        apps = [create_app(settings, embedder=model) for _ in range(2)]
        first, second = [await stack.enter_async_context(app_client(app)) for app in apps]
        manifest = {**shipped("order_create"), "requires_approval": True}
        assert (await first.post("/tools/register", json=manifest, headers=ADMIN)).is_success
        await apps[1].state.runtime.registry.refresh()
        pending = await first.post(
            "/tools/order_create/invoke",
            json={"arguments": order_for(customer), "user_context": U1},
        )
        approval_id = pending.json()["approval_id"]
        answers = await asyncio.gather(
            *(
                (first, second)[n % 2].post(
                    f"/approvals/{approval_id}/approve", headers=approver(n)
                )
                for n in range(20)
            )
        )
        final = (await second.get(f"/approvals/{approval_id}", headers=ADMIN)).json()
    assert pending.status_code == 202, pending.text
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200] + [409] * 19, [a.text for a in answers if a.status_code != 409]
    assert {a.json()["reason"] for a in answers if a.status_code == 409} == {"approval_not_pending"}
    winner = next(a.json() for a in answers if a.status_code == 200)
    assert winner["state"] == "succeeded"
    order_id = winner["result"]["output"]["order_id"]
    assert orders_of(backends, customer) == [order_id]  # one execution, one order
    assert [e["to_state"] for e in final["events"]] == [
        "pending",
        "approved",
        "running",
        "succeeded",
    ]
    assert final["attempts"] == 1


class HoldingTap:
    """Forwards every request to the shop, then, until :meth:`release`, holds the shop's
    answer (so an order exists and the gateway has not heard back)."""

    def __init__(self, shop_url: str) -> None:
        self.shop_url = shop_url
        self.url = ""
        self.forwarded = threading.Semaphore(0)
        self.released = threading.Event()
        methods = ["GET", "POST"]
        self.app = Starlette(routes=[Route("/{path:path}", self._forward, methods=methods)])

    async def _forward(self, request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
        async with httpx.AsyncClient() as client:
            answer = await client.request(
                request.method,
                self.shop_url + request.url.path,
                params=request.query_params,
                content=await request.body(),
                headers=headers,
            )
        if not self.released.is_set():
            self.forwarded.release()
            await asyncio.to_thread(self.released.wait, 60)
        return Response(answer.content, answer.status_code, media_type="application/json")

    def release(self) -> None:
        self.released.set()


def gateway_env(backends: Backends) -> dict[str, str]:
    return {
        "DATABASE_URL": backends.database_url,
        "REDIS_URL": backends.redis_url,
        "LOG_LEVEL": "WARNING",
        "CALLER_RATE_LIMIT": "",
        "ROUTE_RATE_LIMIT": "",
        "APPROVAL_SWEEP_S": "0.2",
        "APPROVAL_RECOVERY_GRACE_MS": "200",
    }


def approve_in_background(url: str, approval_id: str) -> threading.Thread:
    def approve() -> None:
        with contextlib.suppress(httpx.HTTPError):  # the gateway dies under it
            httpx.post(f"{url}/approvals/{approval_id}/approve", headers=approver(0), timeout=60)

    thread = threading.Thread(target=approve, daemon=True)
    thread.start()
    return thread


def settled(url: str, approval_id: str, timeout_s: float = 30) -> dict[str, Any]:
    """The request once it left ``running`` (bounded polling)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        body: dict[str, Any] = httpx.get(f"{url}/approvals/{approval_id}", headers=ADMIN).json()
        if body["state"] not in ("approved", "running"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"approval {approval_id} still running after {timeout_s}s")


@pytest.fixture
def tap(shop_url: str) -> Iterator[HoldingTap]:
    holding = HoldingTap(shop_url)
    with ServerThread(holding.app) as server:
        holding.url = server.url
        try:
            yield holding
        finally:
            holding.release()


def register_behind(url: str, tap: HoldingTap, tool_id: str, path: str) -> None:
    """A shipped shop tool that needs approval, its calls going through ``tap``."""
    manifest = {**shipped(tool_id), "requires_approval": True, "timeout_ms": 3000}
    manifest["endpoint"] = {**manifest["endpoint"], "url": tap.url + path}
    registered = httpx.post(f"{url}/tools/register", json=manifest, headers=ADMIN)
    assert registered.status_code == 201, registered.text


def test_a_gateway_killed_mid_call_resolves_each_approval_by_the_rules(
    backends: Backends, tap: HoldingTap, tmp_path: Path
) -> None:
    clean_gateway(backends)
    env = gateway_env(backends)
    customer = f"Crash {uuid.uuid4().hex[:8]}"
    calls = {
        "order_create": order_for(customer),  # not idempotent
        "inventory_query": {"sku": "SKU2024003"},  # idempotent (GET)
    }
    with running_service("gateway", free_port(), env, tmp_path) as gateway:
        register_behind(gateway.url, tap, "order_create", "/api/orders")
        register_behind(gateway.url, tap, "inventory_query", "/api/inventory/{sku}")
        ids = {}
        for tool_id, arguments in calls.items():
            pending = httpx.post(
                f"{gateway.url}/tools/{tool_id}/invoke",
                json={"arguments": arguments, "user_context": U1},
            )
            assert pending.status_code == 202, pending.text
            ids[tool_id] = pending.json()["approval_id"]
            approve_in_background(gateway.url, ids[tool_id])
            assert tap.forwarded.acquire(timeout=30)  # the shop acted; the answer is held
        os.kill(gateway.pid, signal.SIGKILL)  # after approval, before the tool answered
    tap.release()
    with running_service("gateway", free_port(), env, tmp_path) as restarted:
        order = settled(restarted.url, ids["order_create"])
        stock = settled(restarted.url, ids["inventory_query"])
    # Not idempotent: never run again, marked failed with outcome_unknown.
    assert (order["state"], order["result"]["reason"]) == ("failed", "outcome_unknown")
    assert order["attempts"] == 1
    assert [(e["to_state"], e["actor"]) for e in order["events"]][-2:] == [
        ("running", "gateway"),
        ("failed", "gateway"),
    ]
    assert len(orders_of(backends, customer)) == 1  # the one the dead gateway placed
    # Idempotent: resumed after the restart and finished.
    assert (stock["state"], stock["attempts"]) == ("succeeded", 2)
    assert stock["result"]["output"]["sku"] == "SKU2024003"
