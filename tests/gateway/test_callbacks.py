"""Async calls and result callbacks: 202 with a task id, the result POSTed to the caller,
signed, retried with backoff, every attempt logged; callback URLs obey the egress rules.

The receiver is a real loopback HTTP server; the test verifies each signature the way
docs/approvals.md tells a receiver to, without the gateway's code.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from typing import Any

from tests.conftest import app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool
from tests.gateway.upstream import Received, Reply, Upstream

SECRET = "test-callback-secret-0123456789"
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
BOSS = {"X-User-Id": "boss", "X-User-Roles": "admin"}
ALICE = {"user_id": "alice", "roles": ["clerk"]}


def verifies(received: Received, secret: str = SECRET) -> bool:
    """The receiver's check: HMAC-SHA256 over "<timestamp>." + raw body, compared in
    constant time."""
    timestamp = received.headers["x-reach-timestamp"]
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + received.body, hashlib.sha256)
    return hmac.compare_digest("sha256=" + mac.hexdigest(), received.headers["x-reach-signature"])


async def delivered(client: Any, path: str) -> dict[str, Any]:
    """The task or approval once a callback attempt succeeded (bounded polling, ~10 s)."""
    for _ in range(500):
        body: dict[str, Any] = (await client.get(path, headers=ADMIN)).json()
        if any(attempt["delivered"] for attempt in body.get("callbacks", [])):
            return body
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path}: no callback delivered")


async def test_a_result_callback_is_signed_retried_and_logged(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    upstream.script = [Reply(500, {"error": "busy"}), Reply(500, {"error": "busy"})]
    app = make_gateway(callback_secret=SECRET, callback_backoff_ms=10)
    hook = upstream.url + "/hooks/reach"
    async with app_client(app) as client:
        await client.post(
            "/tools/register", json=python_tool("adder", "add", input_schema=ADD_SCHEMA),
            headers=ADMIN,
        )  # fmt: skip
        accepted = await client.post(
            "/tools/adder/invoke",
            json={"arguments": {"a": 2, "b": 3}, "mode": "async", "callback_url": hook},
        )
        task = await delivered(client, f"/tasks/{accepted.json()['task_id']}")
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["output"]["status"] == "queued"
    assert task["status"] == "succeeded"
    assert task["result"]["output"] == {"sum": 5}
    # Three attempts logged: two refusals, then the delivery; delivered exactly once.
    attempts = [(a["attempt"], a["status_code"], a["delivered"]) for a in task["callbacks"]]
    assert attempts == [(1, 500, False), (2, 500, False), (3, 200, True)]
    assert len({a["delivery_id"] for a in task["callbacks"]}) == 1
    assert [r.path for r in upstream.received] == ["/hooks/reach"] * 3
    assert all(verifies(r) for r in upstream.received)
    final = upstream.received[-1]
    assert final.headers["x-reach-event"] == "task.finished"
    assert final.headers["x-reach-delivery"] == task["callbacks"][0]["delivery_id"]
    payload = final.json()
    assert (payload["task_id"], payload["status"]) == (task["task_id"], "succeeded")
    assert payload["result"]["output"] == {"sum": 5}
    # A tampered body, or another secret, fails verification.
    tampered = Received(final.method, final.target, final.headers, final.body.replace(b"5", b"6"))
    assert not verifies(tampered)
    assert not verifies(final, secret="another-secret")


async def test_a_finished_approval_calls_back_the_same_way(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    app = make_gateway(callback_secret=SECRET, callback_backoff_ms=10)
    manifest = python_tool("guarded_adder", "add", input_schema=ADD_SCHEMA, requires_approval=True)
    async with app_client(app) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        pending = await client.post(
            "/tools/guarded_adder/invoke",
            json={
                "arguments": {"a": 1, "b": 1},
                "user_context": ALICE,
                "callback_url": upstream.url + "/hooks/approvals",
            },
        )
        approval_id = pending.json()["approval_id"]
        await client.post(f"/approvals/{approval_id}/approve", headers=BOSS)
        approval = await delivered(client, f"/approvals/{approval_id}")
    assert pending.status_code == 202
    assert approval["state"] == "succeeded"
    (received,) = upstream.received
    assert verifies(received)
    assert received.headers["x-reach-event"] == "approval.finished"
    body = json.loads(received.body)
    assert (body["approval_id"], body["state"], body["decided_by"]) == (
        approval_id,
        "succeeded",
        "boss",
    )
    assert body["result"]["output"] == {"sum": 2}


async def test_callback_urls_are_checked_before_the_call_is_accepted(
    make_gateway: GatewayFactory,
) -> None:
    def call(url: str) -> dict[str, Any]:
        return {"arguments": {"a": 1, "b": 2}, "callback_url": url}

    manifest = python_tool("adder", "add", input_schema=ADD_SCHEMA)
    async with app_client(make_gateway(callback_secret=SECRET)) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        not_http = await client.post("/tools/adder/invoke", json=call("ftp://example.com/x"))
        relative = await client.post("/tools/adder/invoke", json=call("/hooks/reach"))
        too_long = await client.post(
            "/tools/adder/invoke", json=call("https://example.com/" + "a" * 3000)
        )
    async with app_client(make_gateway()) as client:
        unsigned = await client.post("/tools/adder/invoke", json=call("https://example.com/h"))
    strict = make_gateway(auth_mode="strict", callback_secret=SECRET)
    async with app_client(strict) as client:
        loopback = await client.post("/tools/adder/invoke", json=call("http://127.0.0.1:9/h"))
        metadata = await client.post(
            "/tools/adder/invoke", json=call("http://169.254.169.254/latest")
        )
    assert_error(not_http, 422, "invalid_callback_url")
    assert_error(relative, 422, "invalid_callback_url")
    assert_error(too_long, 422, "invalid_request")
    assert_error(unsigned, 503, "callbacks_not_configured")
    assert_error(loopback, 403, "egress_denied")
    assert_error(metadata, 403, "egress_denied")


async def test_any_call_can_be_made_async(make_gateway: GatewayFactory) -> None:
    manifest = python_tool("adder", "add", input_schema=ADD_SCHEMA)
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        sync = await client.post("/tools/adder/invoke", json={"arguments": {"a": 1, "b": 2}})
        accepted = await client.post(
            "/tools/adder/invoke", json={"arguments": {"a": 1, "b": 2}, "mode": "async"}
        )
        task_id = accepted.json()["task_id"]
        for _ in range(500):
            task = (await client.get(f"/tasks/{task_id}", headers=ADMIN)).json()
            if task["status"] == "succeeded":
                break
            await asyncio.sleep(0.02)
    assert (sync.status_code, sync.json()["output"]) == (200, {"sum": 3})
    assert accepted.status_code == 202
    assert accepted.json()["output"]["status_url"] == f"/tasks/{task_id}"
    assert task["result"] == {"success": True, "output": {"sum": 3}}
    assert task["callbacks"] == []


async def test_a_routed_call_can_be_async_with_a_callback(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    greeter = python_tool(
        "greeter",
        "echo",
        description="Say hello: greets the caller with a friendly hello message.",
        aliases=["say hello", "greet me"],
    )
    app = make_gateway(callback_secret=SECRET, callback_backoff_ms=10)
    async with app_client(app) as client:
        await client.post("/tools/register", json=greeter, headers=ADMIN)
        accepted = await client.post(
            "/run",
            json={"user_query": "say hello", "callback_url": upstream.url + "/hooks/run"},
        )
        task = await delivered(client, f"/tasks/{accepted.json()['task_id']}")
    assert accepted.status_code == 202, accepted.text
    assert (accepted.json()["tool_id"], accepted.json()["route"]["confidence"] > 0) == (
        "greeter",
        True,
    )
    assert task["result"] == {"success": True, "output": {"echo": {}}}
    (received,) = upstream.received
    assert verifies(received)
    assert received.json()["task_id"] == task["task_id"]
