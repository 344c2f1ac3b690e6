"""The executor through POST /tools/{id}/invoke: http requests as sent on the wire,
outbound auth, size cap, upstream errors, python tools, queue tasks, validation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import app_client
from tests.gateway import sample_tools
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool, python_tool
from tests.gateway.upstream import Received, Reply, Upstream

ITEM_SCHEMA = {
    "type": "object",
    "properties": {
        "item": {"type": "string", "description": "Item name."},
        "colour": {"enum": ["red", "green"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "count": {"type": "integer"},
    },
    "required": ["item"],
}


async def invoke(client: Any, tool_id: str, arguments: dict[str, Any], **kw: Any) -> Any:
    return await client.post(f"/tools/{tool_id}/invoke", json={"arguments": arguments}, **kw)


async def test_path_parameters_stay_percent_encoded(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    """Security: ``../admin`` cannot climb out of its path segment."""
    manifest = http_tool("item_get", upstream.url + "/api/items/{item}", input_schema=ITEM_SCHEMA)
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        traversal = await invoke(client, "item_get", {"item": "../admin"})
        await invoke(client, "item_get", {"item": "a/../../b?x=1#frag"})
        await invoke(client, "item_get", {"item": "two words", "colour": "red"})
    assert traversal.status_code == 200
    assert traversal.json()["success"] is True
    assert [r.path for r in upstream.received] == [
        "/api/items/..%2Fadmin",
        "/api/items/a%2F..%2F..%2Fb%3Fx%3D1%23frag",
        "/api/items/two%20words",
    ]
    assert upstream.received[1].query == ""
    assert upstream.received[2].query == "colour=red"


async def test_arguments_go_to_query_for_get_and_json_body_for_post(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    get = http_tool("search_get", upstream.url + "/search", input_schema=ITEM_SCHEMA)
    post = http_tool("search_post", upstream.url + "/search", input_schema=ITEM_SCHEMA)
    post["endpoint"]["method"] = "POST"
    arguments = {"item": "mouse", "tags": ["a", "b"], "count": 3}
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=get, headers=ADMIN)
        await client.post("/tools/register", json=post, headers=ADMIN)
        await invoke(client, "search_get", arguments)
        await invoke(client, "search_post", arguments, headers={"Idempotency-Key": "call-1"})
        await invoke(client, "search_post", arguments)
    as_get, as_post, generated = upstream.received
    assert (as_get.method, as_get.query, as_get.body) == (
        "GET",
        "item=mouse&tags=a&tags=b&count=3",
        b"",
    )
    assert "idempotency-key" not in as_get.headers  # idempotent: no key needed
    assert (as_post.method, as_post.query, as_post.json()) == ("POST", "", arguments)
    assert as_post.headers["idempotency-key"] == "call-1"  # the caller's key is passed on
    assert len(generated.headers["idempotency-key"]) == 32
    assert as_get.headers["traceparent"].startswith("00-")


async def test_outbound_api_key_and_bearer_come_from_the_environment(
    make_gateway: GatewayFactory, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REACH_SECRET_INTERNAL_ORDER_READ", "order-key-value-123")
    monkeypatch.setenv("REACH_SECRET_SHOP_TOKEN", "bearer-value-456")
    keyed = http_tool("keyed", upstream.url + "/k")
    keyed["endpoint"]["auth"] = {"type": "api_key", "key": "internal.order.read", "header": "X-Key"}
    bearer = http_tool("bearer", upstream.url + "/b")
    bearer["endpoint"]["auth"] = {"type": "bearer", "key": "SHOP_TOKEN"}
    unset = http_tool("unset", upstream.url + "/u")
    unset["endpoint"]["auth"] = {"type": "bearer", "key": "NOT_SET_ANYWHERE"}
    bound = {"internal.order.read": ["127.0.0.1"], "SHOP_TOKEN": ["127.0.0.1"]}
    async with app_client(make_gateway(tool_secret_hosts=bound)) as client:
        for manifest in (keyed, bearer, unset):
            await client.post("/tools/register", json=manifest, headers=ADMIN)
        with_key = await invoke(client, "keyed", {})
        with_bearer = await invoke(client, "bearer", {})
        missing = await invoke(client, "unset", {})
    assert with_key.status_code == with_bearer.status_code == 200
    assert upstream.received[0].headers["x-key"] == "order-key-value-123"
    assert upstream.received[1].headers["authorization"] == "Bearer bearer-value-456"
    assert len(upstream.received) == 2  # nothing sent without its secret
    assert missing.status_code == 503
    assert missing.json()["error"]["reason"] == "secret_unavailable"
    assert "NOT_SET_ANYWHERE" in missing.json()["error"]["message"]


async def test_oauth2_client_credentials_token_is_cached_in_redis(
    make_gateway: GatewayFactory, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REACH_SECRET_BILLING_CLIENT_SECRET", "client-secret-789")

    def answer(request: Received) -> Reply:
        if request.path == "/oauth/token":
            return Reply(
                200, {"access_token": "tok-abc", "token_type": "bearer", "expires_in": 600}
            )
        return Reply(200, {"billed": True})

    upstream.default = answer
    manifest = http_tool("billing", upstream.url + "/bill")
    manifest["endpoint"]["auth"] = {
        "type": "oauth2",
        "token_endpoint": upstream.url + "/oauth/token",
        "client_id": "reach-gateway",
        "key": "BILLING_CLIENT_SECRET",
        "scope": "billing.read",
    }
    app = make_gateway(tool_secret_hosts={"BILLING_CLIENT_SECRET": ["127.0.0.1"]})
    async with app_client(app) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        answers = [await invoke(client, "billing", {}) for _ in range(3)]
        redis = app.state.runtime.limiter._redis
        keys = await redis.keys("reach:gateway:oauth2:*")
        ttl = await redis.ttl(keys[0])
    assert [a.status_code for a in answers] == [200, 200, 200]
    token_calls = [r for r in upstream.received if r.path == "/oauth/token"]
    assert len(token_calls) == 1
    assert token_calls[0].body == b"grant_type=client_credentials&scope=billing.read"
    assert token_calls[0].headers["authorization"].startswith("Basic ")
    assert token_calls[0].headers["host"] == f"127.0.0.1:{upstream.port}"
    calls = [r for r in upstream.received if r.path == "/bill"]
    assert [c.headers["authorization"] for c in calls] == ["Bearer tok-abc"] * 3
    assert 500 < ttl <= 570  # cached until shortly before it expires


async def test_response_size_is_capped(make_gateway: GatewayFactory, upstream: Upstream) -> None:
    upstream.default = Reply(200, b"x" * 5000)
    async with app_client(make_gateway(max_response_bytes=4096)) as client:
        await client.post(
            "/tools/register",
            json=http_tool("big", upstream.url + "/big", max_response_bytes=100000),
            headers=ADMIN,
        )
        await client.post(
            "/tools/register",
            json=http_tool("small", upstream.url + "/s", max_response_bytes=1000),
            headers=ADMIN,
        )
        big = await invoke(client, "big", {})
        small = await invoke(client, "small", {})
    assert big.status_code == small.status_code == 502
    assert big.json()["error"]["reason"] == "tool_error"
    assert "4096-byte limit" in big.json()["error"]["message"]  # the gateway cap wins
    assert "1000-byte limit" in small.json()["error"]["message"]


async def test_upstream_4xx_is_a_tool_error_with_the_upstream_answer(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    upstream.default = Reply(404, {"reason": "sku_not_found", "message": "No SKU SKU9999999."})
    async with app_client(make_gateway()) as client:
        await client.post(
            "/tools/register", json=http_tool("lookup", upstream.url + "/x"), headers=ADMIN
        )
        answer = await invoke(client, "lookup", {})
    assert answer.status_code == 502
    body = answer.json()
    assert body["success"] is False
    assert body["error"]["reason"] == "tool_error"
    assert body["error"]["upstream_status"] == 404
    assert body["error"]["upstream"]["reason"] == "sku_not_found"
    assert "No SKU SKU9999999." in body["error"]["message"]
    assert len(body["trace_id"]) == 32


async def test_invalid_arguments_get_a_message_a_model_can_act_on(
    make_gateway: GatewayFactory,
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "pattern": "^SKU\\d{7}$", "description": "e.g. SKU2024001"},
            "mode": {"enum": ["fast", "full"]},
        },
        "required": ["sku"],
        "additionalProperties": False,
    }
    async with app_client(make_gateway()) as client:
        await client.post(
            "/tools/register",
            json=python_tool("checked", "echo", input_schema=schema),
            headers=ADMIN,
        )
        bad_pattern = await invoke(client, "checked", {"sku": "ABC", "mode": "slow"})
        missing = await invoke(client, "checked", {})
        extra = await invoke(client, "checked", {"sku": "SKU2024001", "surprise": 1})
        good = await invoke(client, "checked", {"sku": "SKU2024001", "mode": "fast"})
    assert bad_pattern.status_code == 422
    body = bad_pattern.json()
    assert body["reason"] == body["error"]["reason"] == "invalid_arguments"
    message = body["error"]["message"]
    assert "'ABC' does not match '^SKU\\\\d{7}$' (e.g. SKU2024001)" in message
    assert "'slow' is not one of ['fast', 'full']" in message
    assert "Accepted arguments: mode, sku" in message
    assert {e["field"] for e in body["error"]["errors"]} == {"sku", "mode"}
    assert missing.json()["error"]["errors"] == [
        {"field": "sku", "problem": "'sku' is a required property (e.g. SKU2024001)"}
    ]
    assert "surprise" in extra.json()["error"]["message"]
    assert good.status_code == 200


async def test_python_tools(make_gateway: GatewayFactory) -> None:
    numbers = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    seconds = {"type": "object", "properties": {"seconds": {"type": "number"}}}
    tools = [
        python_tool("adder", "add", input_schema=numbers),
        python_tool("sleeper", "slow", input_schema=seconds, timeout_ms=100),
        python_tool("blocker", "blocking", input_schema=seconds, timeout_ms=100),
        python_tool("exploder", "explode", input_schema={"type": "object"}),
        python_tool("weird", "not_json"),
    ]
    async with app_client(make_gateway()) as client:
        for manifest in tools:
            assert (
                await client.post("/tools/register", json=manifest, headers=ADMIN)
            ).status_code == 201
        added = await invoke(client, "adder", {"a": 2, "b": 40})
        slept = await invoke(client, "sleeper", {"seconds": 0.01})
        sample_tools.SLOW_CANCELLED.clear()
        too_slow = await invoke(client, "sleeper", {"seconds": 5})
        slow_cancelled = sample_tools.SLOW_CANCELLED.is_set()
        sample_tools.RELEASE_BLOCKED.clear()
        sample_tools.BLOCKED_RETURNED.clear()
        try:
            blocked = await invoke(client, "blocker", {"seconds": 30})
            blocker_still_running = not sample_tools.BLOCKED_RETURNED.is_set()
        finally:
            sample_tools.RELEASE_BLOCKED.set()
        exploded = await invoke(client, "exploder", {"message": "boom"})
        weird = await invoke(client, "weird", {})
        outside = await client.post(
            "/tools/register",
            json=python_tool("sys", "x", endpoint={"type": "python", "function": "os:system"}),
            headers=ADMIN,
        )
    assert added.json()["output"] == {"sum": 42}
    assert slept.json()["output"] == {"slept": 0.01}
    assert too_slow.status_code == blocked.status_code == 504
    assert too_slow.json()["error"]["reason"] == "tool_timeout"
    assert blocked.json()["error"]["reason"] == "tool_timeout"
    assert slow_cancelled  # cancelled at its timeout, not awaited for its 5 s
    assert blocker_still_running  # answered at the timeout, while the function still blocked
    assert exploded.status_code == 502
    assert exploded.json()["error"]["message"].endswith("raised ValueError: boom")
    assert weird.json()["error"]["reason"] == "tool_error"
    assert outside.status_code == 422
    assert outside.json()["reason"] == "invalid_manifest"


async def test_queue_tool_answers_202_and_the_worker_runs_it(
    make_gateway: GatewayFactory,
) -> None:
    manifest = python_tool(
        "queued_add",
        "add",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        },
        endpoint={
            "type": "queue",
            "target": {"type": "python", "function": "tests.gateway.sample_tools:add"},
        },
    )
    failing = python_tool(
        "queued_boom",
        "explode",
        endpoint={
            "type": "queue",
            "stream": "other-stream",
            "target": {"type": "python", "function": "tests.gateway.sample_tools:explode"},
        },
    )
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        await client.post("/tools/register", json=failing, headers=ADMIN)
        accepted = await invoke(client, "queued_add", {"a": 1, "b": 2})
        doomed = await invoke(client, "queued_boom", {"message": "task failed"})
        task_id = accepted.json()["task_id"]

        async def finished(task: str) -> dict[str, Any]:
            for _ in range(200):
                body: dict[str, Any] = (await client.get(f"/tasks/{task}")).json()
                if body["status"] in ("succeeded", "failed"):
                    return body
                await asyncio.sleep(0.02)
            raise AssertionError("task did not finish")

        done = await finished(task_id)
        failed = await finished(doomed.json()["task_id"])
        unknown = await client.get("/tasks/nope")
    assert accepted.status_code == 202
    body = accepted.json()
    assert body["success"] is True
    assert body["output"] == {
        "task_id": task_id,
        "status": "queued",
        "status_url": f"/tasks/{task_id}",
    }
    assert done["result"] == {"success": True, "output": {"sum": 3}}
    assert done["trace_id"] == body["trace_id"]
    assert done["latency_ms"] is not None
    assert failed["status"] == "failed"
    assert failed["result"]["error"]["reason"] == "tool_error"
    assert unknown.status_code == 404
    assert unknown.json()["reason"] == "task_not_found"


async def test_requires_approval_is_refused(make_gateway: GatewayFactory) -> None:
    async with app_client(make_gateway()) as client:
        await client.post(
            "/tools/register",
            json=python_tool("guarded", "echo", requires_approval=True),
            headers=ADMIN,
        )
        answer = await invoke(client, "guarded", {})
        unknown = await invoke(client, "no_such_tool", {})
    assert answer.status_code == 403
    assert answer.json()["error"]["reason"] == "approval_required"
    assert unknown.status_code == 404
    assert unknown.json()["error"]["reason"] == "tool_not_found"
