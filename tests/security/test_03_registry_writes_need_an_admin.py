"""Finding 3 (high, default config): in permissive mode an anonymous caller could register,
replace and delete tools, and no Host header was checked, so a web page could reach a
developer's gateway on localhost by DNS rebinding."""

from __future__ import annotations

from tests.conftest import app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool, shipped

VIEWER = {"X-User-Id": "u1", "X-User-Roles": "viewer"}


async def test_permissive_mode_refuses_anonymous_registry_changes(
    make_gateway: GatewayFactory,
) -> None:
    tool = python_tool("echo_tool", "echo")
    async with app_client(make_gateway()) as client:
        anonymous = await client.post("/tools/register", json=tool)
        viewer = await client.post("/tools/register", json=tool, headers=VIEWER)
        listed_before = await client.get("/tools/list")
        admin = await client.post("/tools/register", json=tool, headers=ADMIN)
        replace = await client.put("/tools/echo_tool", json=tool)
        delete = await client.delete("/tools/echo_tool")
        still_there = await client.get("/tools/echo_tool")
    assert anonymous.status_code == 401
    assert anonymous.json()["reason"] == "unauthenticated"
    assert viewer.status_code == 403
    assert viewer.json()["reason"] == "insufficient_permission"
    assert listed_before.json()["tools"] == []  # nothing half-written
    assert admin.status_code == 201
    assert replace.status_code == 401
    assert delete.status_code == 401
    assert still_there.status_code == 200
    assert still_there.json()["version"] == 1


async def test_the_development_flag_opens_anonymous_writes_in_permissive_mode_only(
    make_gateway: GatewayFactory,
) -> None:
    tool = python_tool("echo_tool", "echo")
    async with app_client(make_gateway(allow_anonymous_registry_writes=True)) as client:
        opened = await client.post("/tools/register", json=tool)
    strict = make_gateway(auth_mode="strict", allow_anonymous_registry_writes=True)
    async with app_client(strict) as client:
        refused = await client.post("/tools/register", json=shipped("inventory_query"))
    assert opened.status_code == 201
    assert refused.status_code == 401
    assert refused.json()["reason"] == "unauthenticated"


async def test_a_foreign_host_header_is_refused_before_anything_runs(
    make_gateway: GatewayFactory,
) -> None:
    tool = python_tool("echo_tool", "echo")
    async with app_client(make_gateway()) as client:
        rebound = await client.post(
            "/tools/register", json=tool, headers={**ADMIN, "Host": "attacker.example"}
        )
        rebound_read = await client.get("/tools/list", headers={"Host": "attacker.example:8080"})
        local = await client.get("/tools/list", headers={"Host": "localhost:8080"})
        loopback = await client.get("/healthz", headers={"Host": "127.0.0.1:8080"})
        ipv6 = await client.get("/healthz", headers={"Host": "[::1]:8080"})
        listed = await client.get("/tools/list")
    assert rebound.status_code == 400
    assert rebound.json()["reason"] == "invalid_host"
    assert rebound_read.status_code == 400
    assert rebound_read.json()["reason"] == "invalid_host"
    assert local.status_code == 200
    assert loopback.status_code == 200
    assert ipv6.status_code == 200
    assert listed.json()["tools"] == []
