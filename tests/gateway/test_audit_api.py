"""``GET /audit``: each caller reads their own calls; operators read everyone's."""

from __future__ import annotations

from tests.conftest import app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool

ALICE = {"X-User-Id": "alice"}
BOB = {"X-User-Id": "bob"}
OPS = {"X-User-Id": "oncall", "X-User-Roles": "ops"}


async def test_each_caller_reads_only_their_own_calls(make_gateway: GatewayFactory) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await client.post("/tools/register", json=python_tool("echo_tool", "echo"), headers=ADMIN)
        for who in ("alice", "alice", "bob"):
            body = {"arguments": {"secret_token": "s3cr3t"}, "user_context": {"user_id": who}}
            assert (await client.post("/tools/echo_tool/invoke", json=body)).status_code == 200
        await app.state.runtime.audit.flush()
        alice = await client.get("/audit", headers=ALICE)
        bob = await client.get("/audit", headers=BOB)
        ops = await client.get("/audit", headers=OPS)
        page = await client.get("/audit", params={"limit": 1}, headers=ALICE)
        older = await client.get(
            "/audit", params={"before_id": page.json()["invocations"][0]["id"]}, headers=ALICE
        )
        anonymous = await client.get("/audit")
        bad_limit = await client.get("/audit", params={"limit": 0}, headers=ALICE)
        bad_page = await client.get("/audit", params={"before_id": "-5"}, headers=ALICE)
    assert [r["caller"] for r in alice.json()["invocations"]] == ["alice", "alice"]
    assert [r["caller"] for r in bob.json()["invocations"]] == ["bob"]
    assert sorted(r["caller"] for r in ops.json()["invocations"]) == ["alice", "alice", "bob"]
    assert all(r["arguments"] == {"secret_token": "[REDACTED]"} for r in ops.json()["invocations"])
    assert len(page.json()["invocations"]) == 1
    assert [r["caller"] for r in older.json()["invocations"]] == ["alice"]
    assert_error(anonymous, 401, "unauthenticated")
    assert_error(bad_limit, 422, "invalid_request")
    assert_error(bad_page, 422, "invalid_request")
