"""Hostile or odd inputs the gateway must answer with a JSON error, not a 500, a leak or a
privilege: callback and tool host names IDNA cannot encode, a resolver cache of host names
of the caller's choosing, an over-long ``find_tools`` task, session context keys that could
be spelled by two callers, keys minted with roles the minter lacks, dangling ``$ref``s and
odd ``If-Match`` values."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from opentelemetry import trace
from redis.asyncio import Redis

from gateway.catalog.egress import EgressPolicy, IPAddress
from gateway.executor.errors import ToolFailed
from gateway.executor.resolver import HostResolver, system_lookup
from gateway.mcp.routed import MAX_TASK_CHARS
from gateway.routing.context import SessionContext
from reach_common.auth.keys import create_key
from tests.conftest import Backends, app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool, python_tool
from tests.gateway.test_mcp_serve import VIEWER, mcp_session, payload, running
from tests.gateway.upstream import Upstream

BAD_HOSTS = ["a..b", "a" * 64 + ".example"]
SECRET = "s" * 40
PUBLIC = ipaddress.ip_address("93.184.215.14")


# --- host names IDNA cannot encode --------------------------------------------------------------


@pytest.mark.parametrize("host", BAD_HOSTS)
@pytest.mark.parametrize("mode", ["permissive", "strict"])
async def test_a_callback_url_with_an_unencodable_host_is_a_422(
    make_gateway: GatewayFactory, host: str, mode: str
) -> None:
    app = make_gateway(auth_mode=mode, callback_secret=SECRET)
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(python_tool("adder", "add"))
        response = await client.post(
            "/tools/adder/invoke",
            json={"arguments": {"a": 1, "b": 2}, "callback_url": f"http://{host}/hook"},
        )
    assert_error(response, 422, "invalid_callback_url")


@pytest.mark.parametrize("host", BAD_HOSTS)
async def test_the_system_lookup_turns_an_unencodable_host_into_a_tool_failure(host: str) -> None:
    with pytest.raises(ToolFailed, match="not a valid host name"):
        await system_lookup(host)


async def test_an_openapi_url_with_an_unencodable_host_is_a_fetch_failure(
    make_gateway: GatewayFactory,
) -> None:
    async with app_client(make_gateway()) as client:
        response = await client.post(
            "/tools/import/openapi", json={"url": "http://a..b/openapi.json"}, headers=ADMIN
        )
    assert_error(response, 502, "openapi_fetch_failed")


@pytest.mark.parametrize("host", BAD_HOSTS)
async def test_a_tool_url_with_an_unencodable_host_is_refused_at_registration(
    make_gateway: GatewayFactory, host: str
) -> None:
    async with app_client(make_gateway()) as client:
        response = await client.post(
            "/tools/register", json=http_tool("t1", f"http://{host}/x"), headers=ADMIN
        )
        templated = await client.post(
            "/tools/register",
            json=http_tool(
                "t2",
                "http://{region}.example/x",
                input_schema={"type": "object", "properties": {"region": {"type": "string"}}},
            ),
            headers=ADMIN,
        )
    body = assert_error(response, 422, "invalid_manifest")
    assert "endpoint/url" in body["message"]
    assert templated.status_code == 201, templated.text


# --- the resolver's cache -----------------------------------------------------------------------


async def _public(host: str) -> list[IPAddress]:
    return [PUBLIC]


async def test_the_resolver_cache_is_bounded_and_least_recently_used_goes_first() -> None:
    resolver = HostResolver(
        EgressPolicy(enforce=True, allowlist=[]), ttl_s=30, lookup=_public, max_hosts=100
    )
    tracer = trace.get_tracer(__name__)
    await resolver.resolve("keep.example", tracer)
    for i in range(1000):
        await resolver.resolve(f"h{i}.attacker.example", tracer)
        if i % 50 == 0:
            await resolver.resolve("keep.example", tracer)  # used lately: stays
    assert len(resolver._cache) == 100
    assert "keep.example" in resolver._cache
    assert "h0.attacker.example" not in resolver._cache


async def test_the_resolver_drops_expired_answers() -> None:
    lookups: list[str] = []

    async def counting(host: str) -> list[IPAddress]:
        lookups.append(host)
        return [PUBLIC]

    resolver = HostResolver(EgressPolicy(enforce=True, allowlist=[]), ttl_s=0.0, lookup=counting)
    tracer = trace.get_tracer(__name__)
    for _ in range(3):
        assert await resolver.resolve("once.example", tracer) == [PUBLIC]
    assert lookups == ["once.example"] * 3
    assert len(resolver._cache) == 0


# --- find_tools and the router's vector cache ---------------------------------------------------


async def test_find_tools_refuses_a_task_over_its_declared_length(
    make_gateway: GatewayFactory,
) -> None:
    gateway = make_gateway()
    async with running(gateway) as app:
        made = await app.client.post(
            "/mcp/virtual-servers", json={"name": "routed", "routed": True}, headers=ADMIN
        )
        assert made.is_success, made.text
        async with mcp_session(app, VIEWER, "/mcp/routed") as session:
            fits = await session.call_tool("find_tools", {"task": "a" * MAX_TASK_CHARS})
            too_long = await session.call_tool("find_tools", {"task": "add numbers " * 70_000})
    assert not fits.is_error
    assert too_long.is_error
    body = payload(too_long)
    assert body["reason"] == "invalid_arguments"
    assert str(MAX_TASK_CHARS) in body["message"]
    recent = gateway.state.runtime.router._recent_vectors
    assert all(len(text) < 100_000 for text in recent)


async def test_the_router_keeps_no_vector_of_a_long_text(make_gateway: GatewayFactory) -> None:
    gateway = make_gateway()
    async with running(gateway):
        router = gateway.state.runtime.router
        allowed = frozenset({"add_numbers"})
        await router.rank("add the numbers 2 and 3", allowed, 3, owner="test")
        await router.rank("add numbers " * 5000, allowed, 3, owner="test")
        held = list(router._recent_vectors)
    assert held, "a short query's vector is kept"
    assert max(len(text) for text in held) <= 4096


# --- session context keys -----------------------------------------------------------------------


async def test_a_caller_cannot_spell_another_callers_session_key(clean_state: Backends) -> None:
    redis = Redis.from_url(clean_state.redis_url, decode_responses=True)
    try:
        context = SessionContext(redis)
        await context.remember("acme:alice", "s1", "inventory_query", {"sku": "SKU1"}, "ok")
        assert await context.recent("acme", "alice:s1") == []
        assert [c.tool_id for c in await context.recent("acme:alice", "s1")] == ["inventory_query"]
    finally:
        await redis.aclose()
    assert SessionContext.key("acme", "alice:s1") != SessionContext.key("acme:alice", "s1")


# --- minting keys -------------------------------------------------------------------------------


async def _keys(app: Any, **users: list[str]) -> dict[str, dict[str, str]]:
    async with app.state.runtime.registry_service._sessionmaker.begin() as session:
        return {
            user: {"X-API-Key": (await create_key(session, user, roles)).key}
            for user, roles in users.items()
        }


async def test_only_an_admin_mints_roles_it_does_not_hold(make_gateway: GatewayFactory) -> None:
    app = make_gateway(auth_mode="strict")
    async with app_client(app) as client:
        keys = await _keys(app, tam=["tool_admin", "viewer"], root=["admin"])
        escalated = await client.post(
            "/keys",
            json={"user_id": "tam-2", "roles": ["admin", "ops", "retriever_writer"]},
            headers=keys["tam"],
        )
        one_more = await client.post(
            "/keys", json={"user_id": "tam-2", "roles": ["viewer", "ops"]}, headers=keys["tam"]
        )
        own = await client.post(
            "/keys",
            json={"user_id": "tam-2", "roles": ["viewer", "tool_admin"]},
            headers=keys["tam"],
        )
        by_admin = await client.post(
            "/keys",
            json={"user_id": "ops-1", "roles": ["ops", "retriever_writer"]},
            headers=keys["root"],
        )
    body = assert_error(escalated, 403, "insufficient_permission")
    assert "admin, ops, retriever_writer" in body["message"]
    assert_error(one_more, 403, "insufficient_permission")
    assert own.status_code == 201, own.text
    assert own.json()["roles"] == ["viewer", "tool_admin"]
    assert by_admin.status_code == 201, by_admin.text


# --- schemas and If-Match -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "schema"),
    [
        ("input_schema", {"type": "object", "properties": {"a": {"$ref": "#/$defs/nowhere"}}}),
        ("input_schema", {"type": "object", "properties": {"a": {"$ref": "#no-anchor"}}}),
        ("output_schema", {"type": "object", "properties": {"a": {"$ref": "#/$defs/x/y"}}}),
    ],
)
async def test_a_dangling_local_ref_is_refused_at_registration(
    make_gateway: GatewayFactory, upstream: Upstream, where: str, schema: dict[str, Any]
) -> None:
    async with app_client(make_gateway()) as client:
        response = await client.post(
            "/tools/register",
            json=http_tool("t1", upstream.url + "/x", **{where: schema}),
            headers=ADMIN,
        )
    body = assert_error(response, 422, "invalid_manifest")
    assert f"{where}/properties/a/$ref" in body["message"]
    assert "points nowhere" in body["message"]


async def test_local_refs_that_resolve_still_register(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    schema = {
        "type": "object",
        "$defs": {
            "n": {"$anchor": "num", "type": "integer"},
            "nested": {
                "$id": "https://schemas.example/nested",
                "$defs": {"s": {}},
                "$ref": "#/$defs/s",
            },
            "tree": {"properties": {"kids": {"items": {"$ref": "#/$defs/tree"}}}},
        },
        "properties": {
            "a": {"$ref": "#/$defs/n"},
            "b": {"$ref": "#num"},
            "c": {"$ref": "#/$defs/nested"},
            "d": {"$ref": "#/$defs/tree"},
            "e": {"enum": [{"$ref": "#/not/a/schema"}]},
        },
    }
    async with app_client(make_gateway(egress_allowlist=["127.0.0.1"])) as client:
        registered = await client.post(
            "/tools/register",
            json=http_tool("t1", upstream.url + "/x", input_schema=schema),
            headers=ADMIN,
        )
        wrong = await client.post("/tools/t1/invoke", json={"arguments": {"a": "x"}})
    assert registered.status_code == 201, registered.text
    assert wrong.status_code == 422, wrong.text


@pytest.mark.parametrize(
    "if_match",
    ['"\u00b2"', '"' + "9" * 5000 + '"', '"' + "9" * 19 + '"'],
    ids=["superscript-two", "5000-digits", "19-digits"],
)
async def test_an_odd_if_match_is_a_400(
    make_gateway: GatewayFactory, upstream: Upstream, if_match: str
) -> None:
    tool = http_tool("t1", upstream.url + "/x")
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=tool, headers=ADMIN)
        response = await client.put(
            "/tools/t1", json=tool, headers={**ADMIN, "If-Match": if_match.encode("latin-1")}
        )
        fits = await client.put("/tools/t1", json=tool, headers={**ADMIN, "If-Match": '"1"'})
    assert_error(response, 400, "invalid_if_match")
    assert fits.status_code == 200, fits.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/mcp/servers",
            '{"server_id": "ok", "transport": "http", "url": "http://127.0.0.1:9/m\\u0000"}',
        ),
        ("/mcp/virtual-servers", '{"name": "sales", "description": "x\\u0000"}'),
        ("/mcp/virtual-servers", '{"name": "sales", "tags": ["a\\ud800"]}'),
        ("/tools/import/openapi", '{"document": "openapi: 3.0.0\\ud800"}'),
    ],
)
async def test_registrations_postgres_cannot_store_are_refused_with_422(
    make_gateway: GatewayFactory, path: str, body: str
) -> None:
    """A NUL or half a surrogate pair in a federated server, a virtual server or an
    OpenAPI document reached the INSERT or the encoder: 500."""
    headers = {"Content-Type": "application/json", **ADMIN}
    async with app_client(make_gateway()) as client:
        answer = await client.post(path, content=body, headers=headers)
    assert_error(answer, 422, "invalid_request")
