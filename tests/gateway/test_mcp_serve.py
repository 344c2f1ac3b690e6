"""The gateway as an MCP server, in process: the official ``mcp`` client over Streamable
HTTP (an ASGI transport into the app, lifespan running) lists and calls tools through the
same permission decision and invoke pipeline as the REST API."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2
import jwt
import mcp_types as types
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp

from tests.conftest import assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool

OPS = {"X-User-Id": "olga", "X-User-Roles": "ops_admin"}
VIEWER = {"X-User-Id": "vic", "X-User-Roles": "viewer"}
SECRET = "s" * 32
ISSUER = "https://idp.test"
AUDIENCE = "https://gateway.test"


def tools() -> list[dict[str, Any]]:
    """Four python tools: public read, admin-only read (ops_admin), a write, a limited one."""
    return [
        python_tool(
            "add_numbers",
            "add",
            namespace="math",
            tags=["arith"],
            idempotent=True,
            input_schema={
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
        ),
        python_tool(
            "ops_echo",
            "echo",
            namespace="ops",
            permission="admin",
            scope=["ops_admin"],
            idempotent=True,
        ),
        python_tool("write_echo", "echo", namespace="ops", idempotent=False),
        python_tool("limited_echo", "echo", namespace="misc", rate_limit="2/minute"),
    ]


@asynccontextmanager
async def running(app: FastAPI, register: bool = True) -> AsyncIterator[Running]:
    """``app`` with its lifespan running, the sample tools registered; a REST client."""
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            for manifest in tools() if register else []:
                response = await client.post("/tools/register", json=manifest, headers=ADMIN)
                assert response.status_code == 201, response.text
            yield Running(client, manager.app)


@dataclass
class Running:
    client: httpx.AsyncClient
    asgi: ASGIApp


@asynccontextmanager
async def mcp_session(
    app: Running, headers: Mapping[str, str], path: str = "/mcp", *, discover: bool = False
) -> AsyncIterator[ClientSession]:
    """The official client, over Streamable HTTP, into ``app`` (its lifespan already running):
    opened with ``initialize()`` (handshake era) or ``discover()`` (2026-07-28, per request)."""
    http = httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app.asgi),
        base_url="http://localhost",
        headers=dict(headers),
    )
    async with (
        http,
        streamable_http_client(f"http://localhost{path}", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await (session.discover() if discover else session.initialize())
        yield session


def walk(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for node in nodes for n in (node, *walk(node["children"]))]


def payload(result: types.CallToolResult) -> dict[str, Any]:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    body: dict[str, Any] = json.loads(block.text)
    return body


async def test_list_shows_exactly_what_each_caller_may_use(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as app:
        client = app.client
        rest_ops = (await client.get("/tools/list", headers=OPS)).json()["tools"]
        rest_viewer = (await client.get("/tools/list", headers=VIEWER)).json()["tools"]
        async with mcp_session(app, OPS) as session:
            as_ops = (await session.list_tools()).tools
            capabilities = session.server_capabilities
        async with mcp_session(app, VIEWER) as session:
            as_viewer = (await session.list_tools()).tools
    assert {t.name for t in as_ops} == {t["tool_id"] for t in rest_ops}
    # Stateless: no standing stream to push list_changed on, and the handshake says so.
    assert capabilities is not None
    assert capabilities.tools is not None
    assert capabilities.tools.list_changed is False
    assert {t.name for t in as_viewer} == {t["tool_id"] for t in rest_viewer}
    assert "ops_echo" in {t.name for t in as_ops}
    assert "ops_echo" not in {t.name for t in as_viewer}
    by_name = {t.name: t for t in as_ops}
    add = by_name["add_numbers"]
    assert add.input_schema == tools()[0]["input_schema"]
    assert add.description == tools()[0]["description"]
    assert add.annotations is not None
    assert add.annotations.read_only_hint is True
    write = by_name["write_echo"].annotations
    assert write is not None
    assert write.read_only_hint is False
    assert write.destructive_hint is True


async def test_call_runs_the_invoke_pipeline(make_gateway: GatewayFactory) -> None:
    gateway = make_gateway()
    async with running(gateway) as app, mcp_session(app, OPS) as session:
        client = app.client
        ok = await session.call_tool("add_numbers", {"a": 2, "b": 3})
        invalid = await session.call_tool("add_numbers", {"a": "two", "b": 3})
        first = await session.call_tool("limited_echo", {})
        await session.call_tool("limited_echo", {})
        limited = await session.call_tool("limited_echo", {})
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("no_such_tool", {})
        async with mcp_session(app, VIEWER) as viewer:
            with pytest.raises(MCPError) as hidden:
                await viewer.call_tool("ops_echo", {})
        await gateway.state.runtime.audit.flush()
        audit = (await client.get("/audit", headers=OPS)).json()["invocations"]
        trace_id = ok.meta["reach/trace_id"] if ok.meta else None
        spans = (await client.get(f"/traces/{trace_id}", headers=OPS)).json()
    assert not ok.is_error
    assert payload(ok) == {"sum": 5}
    assert ok.structured_content == {"sum": 5}
    assert invalid.is_error
    assert payload(invalid)["reason"] == "invalid_arguments"
    assert "a" in payload(invalid)["message"]
    assert not first.is_error
    assert limited.is_error
    assert payload(limited)["reason"] == "rate_limited"
    assert "Unknown tool" in str(unknown.value)
    assert "Unknown tool" in str(hidden.value)  # someone else's tool: as if it did not exist
    mine = [row for row in audit if row["tool_id"] == "add_numbers"]
    assert mine
    assert {row["transport"] for row in mine} == {"mcp"}
    names = {span["name"] for span in walk(spans["spans"])}
    assert {"gateway.auth", "gateway.validate", "gateway.execute"} <= names


async def test_per_request_era_gets_the_same_answers(make_gateway: GatewayFactory) -> None:
    """A 2026-07-28 client (``discover()``, no handshake) is served on the SDK's per-request
    path: the same caller's tool set, pipeline and unknown-tool answer as a handshake-era one."""
    async with running(make_gateway()) as app:
        async with mcp_session(app, OPS, discover=True) as ops:
            version = ops.protocol_version
            as_ops = {t.name for t in (await ops.list_tools()).tools}
            ok = await ops.call_tool("add_numbers", {"a": 2, "b": 3})
            invalid = await ops.call_tool("add_numbers", {"a": "two", "b": 3})
        async with mcp_session(app, VIEWER, discover=True) as viewer:
            as_viewer = {t.name for t in (await viewer.list_tools()).tools}
            with pytest.raises(MCPError) as hidden:
                await viewer.call_tool("ops_echo", {})
    assert version == "2026-07-28"
    assert "ops_echo" in as_ops
    assert "ops_echo" not in as_viewer
    assert payload(ok) == {"sum": 5}
    assert invalid.is_error
    assert payload(invalid)["reason"] == "invalid_arguments"
    assert "Unknown tool" in str(hidden.value)


async def test_a_handshake_era_call_is_not_read_ahead(make_gateway: GatewayFactory) -> None:
    """``/mcp`` is the app's first route (found at once; ``/mcp/{server}`` stays after the
    API's ``/mcp/...`` paths), and the endpoint reads a body before the SDK only to send a
    2026-07-28 ``subscriptions/listen`` to the streaming manager: a handshake-era call is
    answered as JSON whatever its arguments say."""
    gateway = make_gateway()
    paths = [getattr(route, "path", None) for route in gateway.routes]
    assert paths[0] == "/mcp"
    assert paths[-1] == "/mcp/{server}"
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "write_echo", "arguments": {"note": "subscriptions/listen"}},
    }
    headers = {
        **OPS,
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    async with running(gateway) as app:
        response = await app.client.post("/mcp", json=call, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    result = response.json()["result"]
    assert result["structuredContent"] == {"echo": {"note": "subscriptions/listen"}}


async def test_approval_pending_is_not_an_error(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as app:
        client = app.client
        gated = python_tool("gated_echo", "echo", requires_approval=True)
        assert (await client.post("/tools/register", json=gated, headers=ADMIN)).status_code == 201
        async with mcp_session(app, OPS) as session:
            result = await session.call_tool("gated_echo", {"x": 1})
        assert not result.is_error
        body = payload(result)
        assert body["reason"] == "approval_pending"
        assert body["status_url"] == f"/approvals/{body['approval_id']}"
        # The same flow as over REST: an approver approves, the call runs once, and the
        # MCP caller reads its result at the status URL.
        approved = await client.post(f"{body['status_url']}/approve", json={}, headers=ADMIN)
        assert approved.status_code == 200, approved.text
        assert approved.json()["state"] == "succeeded"
        status = await client.get(body["status_url"], headers=OPS)
        assert status.json()["state"] == "succeeded"
        again = await client.post(f"{body['status_url']}/approve", json={}, headers=ADMIN)
        assert again.json()["reason"] == "approval_not_pending"  # it ran once


def token(audience: str, roles: list[str]) -> dict[str, str]:
    claims = {"sub": "jay", "roles": roles, "iss": ISSUER, "aud": audience}
    encoded = jwt.encode({**claims, "exp": int(time.time()) + 300}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {encoded}"}


async def test_strict_mode_needs_a_credential(make_gateway: GatewayFactory) -> None:
    gateway = make_gateway(
        auth_mode="strict",
        jwt_secret=SECRET,
        jwt_issuer=ISSUER,
        jwt_audience=AUDIENCE,
        mcp_resource_url=AUDIENCE,
        mcp_authorization_servers=[ISSUER],
        allow_anonymous_registry_writes=False,
    )
    admin = token(AUDIENCE, ["admin"])
    async with running(gateway, register=False) as app:
        client = app.client
        for manifest in tools():
            assert (await client.post("/tools/register", json=manifest, headers=admin)).is_success
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"accept": "application/json, text/event-stream"}
        anonymous = await client.post("/mcp", json=listing, headers=accept)
        claimed = await client.post("/mcp", json=listing, headers={**accept, **OPS})
        bad = await client.post(
            "/mcp", json=listing, headers={**accept, "authorization": "Bearer not-a-key"}
        )
        elsewhere = await client.post(
            "/mcp", json=listing, headers={**accept, **token("https://other.test", ["ops_admin"])}
        )
        metadata = await client.get("/.well-known/oauth-protected-resource")
        async with mcp_session(app, token(AUDIENCE, ["ops_admin"])) as session:
            as_ops = {t.name for t in (await session.list_tools()).tools}
        async with mcp_session(app, token(AUDIENCE, ["viewer"])) as session:
            as_viewer = {t.name for t in (await session.list_tools()).tools}
    for refused in (anonymous, claimed):
        assert_error(refused, 401, "unauthenticated")
        assert refused.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{AUDIENCE}/.well-known/oauth-protected-resource"'
        )
    assert_error(bad, 401, "invalid_credential")
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    assert_error(elsewhere, 401, "invalid_credential")  # a token for another audience
    assert metadata.json() == {
        "resource": AUDIENCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "resource_name": "Reach gateway",
        "resource_documentation": f"{AUDIENCE}/docs",
    }
    assert "ops_echo" in as_ops
    assert "ops_echo" not in as_viewer
    assert "add_numbers" in as_viewer


async def test_dns_rebinding_is_refused(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as app:
        client = app.client
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"accept": "application/json, text/event-stream"}
        evil = await client.post(
            "/mcp", json=request, headers={**accept, "origin": "http://evil.example"}
        )
        local = await client.post(
            "/mcp", json=request, headers={**accept, "origin": "http://localhost:3000"}
        )
    assert evil.status_code == 403
    assert local.status_code == 200


async def test_virtual_servers_serve_their_own_subsets(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as app:
        client = app.client
        math = {"name": "math", "namespaces": ["math"]}
        mixed = {"name": "mixed", "tags": ["arith"], "tool_ids": ["ops_echo", "write_echo"]}
        for body in (math, mixed):
            created = await client.post("/mcp/virtual-servers", json=body, headers=ADMIN)
            assert created.status_code == 201, created.text
        duplicate = await client.post("/mcp/virtual-servers", json=math, headers=ADMIN)
        reserved = await client.post(
            "/mcp/virtual-servers", json={"name": "servers"}, headers=ADMIN
        )
        not_admin = await client.post("/mcp/virtual-servers", json={"name": "x"}, headers=OPS)
        listed = (await client.get("/mcp/virtual-servers", headers=ADMIN)).json()["servers"]
        async with mcp_session(app, OPS, "/mcp/math") as session:
            on_math = {t.name for t in (await session.list_tools()).tools}
            with pytest.raises(MCPError):  # on the registry, not on this server
                await session.call_tool("write_echo", {})
            added = await session.call_tool("add_numbers", {"a": 1, "b": 1})
        async with mcp_session(app, OPS, "/mcp/mixed") as session:
            mixed_as_ops = {t.name for t in (await session.list_tools()).tools}
        async with mcp_session(app, VIEWER, "/mcp/mixed") as session:
            mixed_as_viewer = {t.name for t in (await session.list_tools()).tools}
        changed = await client.put(
            "/mcp/virtual-servers/math", json={"namespaces": ["misc"]}, headers=ADMIN
        )
        async with mcp_session(app, OPS, "/mcp/math") as session:
            math_after = {t.name for t in (await session.list_tools()).tools}
        deleted = await client.delete("/mcp/virtual-servers/math", headers=ADMIN)
        gone = await client.post(
            "/mcp/math",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"accept": "application/json, text/event-stream"},
        )
    assert_error(duplicate, 409, "virtual_server_exists")
    assert_error(reserved, 422, "invalid_request")
    assert_error(not_admin, 403, "insufficient_permission")
    assert [s["endpoint"] for s in listed] == ["/mcp/math", "/mcp/mixed"]
    assert on_math == {"add_numbers"}
    assert payload(added) == {"sum": 2}
    assert mixed_as_ops == {"add_numbers", "ops_echo", "write_echo"}
    assert mixed_as_viewer == {"add_numbers", "write_echo"}  # ops_echo is not theirs
    assert changed.json()["version"] == 2
    assert math_after == {"limited_echo"}
    assert deleted.status_code == 204
    assert_error(gone, 404, "virtual_server_not_found")


async def test_routed_server_finds_only_permitted_tools(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as app:
        client = app.client
        routed = {"name": "routed", "routed": True, "top_k": 3}
        assert (await client.post("/mcp/virtual-servers", json=routed, headers=ADMIN)).is_success
        async with mcp_session(app, VIEWER, "/mcp/routed") as session:
            meta = {t.name for t in (await session.list_tools()).tools}
            found = payload(await session.call_tool("find_tools", {"task": "echo back the text"}))
            nothing = payload(await session.call_tool("find_tools", {"task": "   "}))
            wide = payload(await session.call_tool("find_tools", {"task": "add", "k": 20}))
            called = await session.call_tool(
                "call_tool", {"tool_id": "add_numbers", "arguments": {"a": 4, "b": 5}}
            )
            refused = await session.call_tool("call_tool", {"tool_id": "ops_echo"})
            bad_k = await session.call_tool("find_tools", {"task": "add", "k": 0})
        async with mcp_session(app, OPS, "/mcp/routed") as session:
            as_ops = payload(await session.call_tool("find_tools", {"task": "echo", "k": 20}))
            ran = await session.call_tool("run", {"query": "add 2 and 3"})
        trace_id = called.meta["reach/trace_id"] if called.meta else None
        assert trace_id
    viewer_may = {"add_numbers", "write_echo", "limited_echo"}
    assert meta == {"find_tools", "run", "call_tool"}
    assert 0 < len(found["tools"]) <= 3
    assert {t["tool_id"] for t in found["tools"]} <= viewer_may
    assert all("input_schema" in t and "score" in t for t in found["tools"])
    assert nothing["fallback"] is True
    assert nothing["tools"]  # never empty: a default set
    assert {t["tool_id"] for t in wide["tools"]} == viewer_may  # never ops_echo
    assert "ops_echo" in {t["tool_id"] for t in as_ops["tools"]}
    assert payload(called) == {"sum": 9}
    assert refused.is_error
    assert payload(refused)["reason"] == "tool_not_found"
    assert bad_k.is_error
    assert payload(bad_k)["reason"] == "invalid_arguments"
    assert ran.is_error or payload(ran)["tool_id"]  # routed by /run's service either way
    if ran.is_error:
        assert payload(ran)["reason"] in {"no_matching_tool", "invalid_arguments"}


async def test_find_tools_counts_against_the_routing_limit(make_gateway: GatewayFactory) -> None:
    """find_tools embeds its task like POST /run: ROUTE_RATE_LIMIT counts it (a claimed
    identity has no bucket of its own: the client address is the key)."""
    async with running(make_gateway(route_rate_limit="2/minute")) as app:
        routed = {"name": "routed", "routed": True}
        assert (
            await app.client.post("/mcp/virtual-servers", json=routed, headers=ADMIN)
        ).is_success
        async with mcp_session(app, VIEWER, "/mcp/routed") as session:
            found = [await session.call_tool("find_tools", {"task": "add"}) for _ in range(3)]
    assert [f.is_error for f in found] == [False, False, True]
    assert payload(found[2])["reason"] == "rate_limited"
    assert "routing limit is 2 per minute" in payload(found[2])["message"]


async def test_find_tools_decision_is_in_the_trace(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as app:
        client = app.client
        routed = {"name": "routed", "routed": True}
        assert (await client.post("/mcp/virtual-servers", json=routed, headers=ADMIN)).is_success
        async with mcp_session(app, OPS, "/mcp/routed") as session:
            found = await session.call_tool("find_tools", {"task": "add two numbers"})
        trace_id = found.meta["reach/trace_id"] if found.meta else None
        trace = (await client.get(f"/traces/{trace_id}", headers=OPS)).json()
    route = next(s for s in walk(trace["spans"]) if s["name"] == "gateway.route")
    assert route["attributes"]["route.hint"] == "find_tools"
    candidates = route["attributes"]["route.candidates"]
    assert candidates[0].startswith(payload(found)["tools"][0]["tool_id"] + ":")


async def test_routed_run_stays_within_its_servers_tools(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as app:
        client = app.client
        for name, ids in (("echoes", ["write_echo", "limited_echo"]), ("sums", ["add_numbers"])):
            server = {"name": name, "routed": True, "tool_ids": ids}
            made = await client.post("/mcp/virtual-servers", json=server, headers=ADMIN)
            assert made.is_success, made.text
        async with mcp_session(app, VIEWER, "/mcp/echoes") as session:
            outside = await session.call_tool("run", {"query": "add numbers 2 and 3"})
        async with mcp_session(app, VIEWER, "/mcp/sums") as session:
            inside = await session.call_tool("run", {"query": "add numbers 2 and 3"})
    # add_numbers is the obvious tool, and the caller may use it, but not on "echoes".
    if outside.is_error:
        assert payload(outside)["reason"] in {"no_matching_tool", "invalid_arguments"}
        assert "add_numbers" not in json.dumps(payload(outside))
    else:
        assert payload(outside)["tool_id"] in {"write_echo", "limited_echo"}
    assert not inside.is_error, payload(inside)
    assert payload(inside)["tool_id"] == "add_numbers"
    assert payload(inside)["output"] == {"sum": 5}
