"""SIGKILL the gateway while orders are in flight: after the restart, no order is placed
twice and none that a caller was told about is missing.

Three callers place orders one after another through a non-idempotent ``order_create``
tool, each order with an ``Idempotency-Key`` of its own that the caller repeats until it
gets an answer (what a careful client does); a fourth caller reads stock all along. The
order tool reaches the shop through a proxy that, once armed, lets the orders reach the
shop and holds the shop's answers: the kill lands after the shop acted and before the
gateway answered. The gateway is restarted; the callers' retries reach the shop with the
same keys and get the orders that were already placed. The shop's own table is the truth.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
import pytest

from tests.faults.conftest import FaultStack
from tests.faults.matrix import Row, record
from tests.faults.stack_procs import holding_proxy, wait_for
from tests.faults.traffic import Traffic
from tests.gateway.conftest import ADMIN, shipped

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
ORDER_CALLERS = 3
SKU = "SKU2024003"  # the most stock: every order of this test takes one unit


class OrderCaller:
    """Places orders one at a time, repeating each with its key until it is answered."""

    def __init__(self, client: httpx.AsyncClient, tool_id: str, prefix: str, n: int) -> None:
        self.client = client
        self.tool_id = tool_id
        self.user = {"user_id": f"{prefix}-caller{n}", "roles": ["ops_admin"]}
        self.prefix = f"{prefix}-{n}"
        self.placed: dict[str, str] = {}  # customer -> order id the caller was told
        self.count = 0
        self._next()

    def _next(self) -> None:
        self.count += 1
        self.customer = f"{self.prefix}-{self.count}"
        self.key = uuid.uuid4().hex

    async def send(self) -> httpx.Response:
        response = await self.client.post(
            f"/tools/{self.tool_id}/invoke",
            json={
                "arguments": {"sku": SKU, "quantity": 1, "customer": self.customer},
                "user_context": self.user,
            },
            headers={"Idempotency-Key": self.key},
        )
        if response.status_code == 200 and response.json()["success"]:
            self.placed[self.customer] = response.json()["output"]["order_id"]
            self._next()
        return response

    async def finish(self) -> None:
        """The order the traffic stopped in the middle of, repeated until answered."""
        for _ in range(50):
            customer = self.customer
            if (await self.send()).status_code == 200 and customer in self.placed:
                return
            await asyncio.sleep(0.2)
        raise AssertionError(f"{self.customer}'s order never got an answer")


def register_order_tool(url: str, proxy_url: str) -> str:
    tool_id = f"order_kill_{uuid.uuid4().hex[:8]}"
    manifest: dict[str, Any] = {
        **shipped("order_create"),
        "tool_id": tool_id,
        "requires_approval": False,
        "timeout_ms": 20000,
    }
    manifest.pop("rate_limit")  # 60/minute: this test places orders faster
    manifest["endpoint"] = {**manifest["endpoint"], "url": proxy_url + "/api/orders"}
    answer = httpx.post(f"{url}/tools/register", json=manifest, headers=ADMIN, timeout=30)
    assert answer.status_code == 201, answer.text
    return tool_id


async def test_sigkill_of_the_gateway_mid_order_places_each_order_exactly_once(
    stack: FaultStack,
) -> None:
    gateway = stack.url("gateway")
    prefix = f"gwkill-{uuid.uuid4().hex[:8]}"
    row = Row(
        fault="SIGKILL mid-request",
        service="gateway",
        promise="a caller repeating its Idempotency-Key after the restart gets the order the "
        "dead gateway placed: none placed twice, none lost",
    )
    with holding_proxy(stack.url("shop"), "/api/orders") as proxy:
        tool_id = register_order_tool(gateway, proxy.url)
        async with httpx.AsyncClient(base_url=gateway, timeout=30) as client:
            callers = [OrderCaller(client, tool_id, prefix, n) for n in range(ORDER_CALLERS)]
            traffic = Traffic(pause=0.2)
            for n, caller in enumerate(callers):
                traffic.add(f"order{n}", caller.send)
            stock = {"arguments": {"sku": SKU}, "user_context": {"user_id": f"{prefix}-reader"}}
            traffic.add("stock", lambda: client.post("/tools/inventory_query/invoke", json=stock))
            async with traffic.running():
                await wait_for(
                    lambda: sum(map(len, (c.placed for c in callers))) >= 3, 30, "orders"
                )
                proxy.arm()  # the next orders reach the shop; their answers wait here
                await wait_for(lambda: proxy.held >= ORDER_CALLERS, 30, "orders in flight")
                held = proxy.held
                marks = stack.log_marks()
                killed_at = time.monotonic()
                await asyncio.to_thread(stack.kill, "gateway")
                proxy.release()  # the shop's answers now go to a dead gateway
                await asyncio.to_thread(stack.start, "gateway")
                await wait_for(lambda: traffic.recovered_at(killed_at) is not None, 30, "recovery")
                recovered_at = traffic.recovered_at(killed_at)
            for caller in callers:
                await caller.finish()
    assert recovered_at is not None
    during = traffic.between(killed_at, recovered_at)
    for outcome in during:
        row.count(outcome.reason)
    row.recover_s = round(recovered_at - killed_at, 3)
    stored: dict[str, list[str]] = {}
    for customer, order_id in stack.sql(
        "SELECT customer, order_id FROM shop.sales_order WHERE customer LIKE %s", prefix + "-%"
    ):
        stored.setdefault(str(customer), []).append(str(order_id))
    told = {k: v for caller in callers for k, v in caller.placed.items()}
    row.lost = sum(
        1 for customer, order_id in told.items() if order_id not in stored.get(customer, [])
    )
    row.duplicates = sum(len(ids) - 1 for ids in stored.values())
    record(row)

    assert held >= ORDER_CALLERS  # the kill landed with orders placed and unanswered
    assert row.errors["connection_error"] >= ORDER_CALLERS, row.errors
    assert row.lost == 0, (told, stored)
    assert stack.tracebacks_since(marks) == {}  # the restart logged no error
    assert row.duplicates == 0, stored
    assert set(stored) == set(told)  # every order placed was one a caller asked for and got
