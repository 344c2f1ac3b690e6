"""Strict mode never reads claimed identity headers; a NUL in a path or query is a JSON
error before any handler runs (it would fail in Postgres as a 500)."""

from __future__ import annotations

from typing import Any

import pytest

from reach_common.auth.keys import create_key
from tests.conftest import app_client
from tests.gateway.conftest import http_tool


async def test_strict_mode_ignores_claim_headers_beside_a_credential(
    make_gateway: Any, upstream: Any
) -> None:
    app = make_gateway(auth_mode="strict", egress_allowlist=["127.0.0.1"])
    async with app_client(app) as client:
        runtime = app.state.runtime
        await runtime.registry_service.register(http_tool("t1", upstream.url + "/x"))
        async with runtime.registry_service._sessionmaker.begin() as session:
            alice = {"X-API-Key": (await create_key(session, "alice", [])).key}
        roles = ",".join(f"r{i}" for i in range(101))  # more than a claim may carry
        listed = await client.get("/tools/list", headers={**alice, "X-User-Roles": roles})
        claimed_only = await client.get("/tools/list", headers={"X-User-Roles": roles})
    assert listed.status_code == 200, listed.text
    assert [t["tool_id"] for t in listed.json()["tools"]] == ["t1"]
    assert claimed_only.status_code == 200  # read as anonymous, not 400 over a header it ignores


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/approvals/a%00b"),
        ("GET", "/approvals?tool_id=a%00b"),
        ("GET", "/audit?tool_id=a%00b"),
        ("GET", "/traces?caller=a%00b"),
        ("POST", "/mcp/a%00b"),
        ("POST", "/tools/t%00/invoke"),
    ],
)
async def test_a_nul_in_a_path_or_query_is_refused_as_json(
    make_gateway: Any, method: str, path: str
) -> None:
    app = make_gateway()
    headers = {"X-User-Id": "alice", "X-User-Roles": "clerk", "Content-Type": "application/json"}
    async with app_client(app) as client:
        response = await client.request(method, path, headers=headers, content=b"{}")
    assert response.status_code == 400, response.text
    assert response.json()["reason"] == "invalid_request"
