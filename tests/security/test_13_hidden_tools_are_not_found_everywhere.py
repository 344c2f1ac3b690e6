"""Finding 13: invoke answered 401/403 naming roles for tools that ``GET /tools/{id}`` hid
as 404 (enumeration), and ``GET /tools/{id}`` returned the raw manifest (internal URLs,
secret names) to anyone allowed to call the tool."""

from __future__ import annotations

from tests.conftest import app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool, python_tool

OPS = {"X-User-Id": "u1", "X-User-Roles": "ops_admin"}
VIEWER = {"X-User-Id": "u2", "X-User-Roles": "viewer"}


async def test_a_tool_the_caller_may_not_use_is_not_found_on_every_endpoint(
    make_gateway: GatewayFactory,
) -> None:
    secret_tool = python_tool("payroll_export", "echo", permission="admin", scope=["ops_admin"])
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=secret_tool, headers=ADMIN)
        read = await client.get("/tools/payroll_export", headers=VIEWER)
        invoked = await client.post(
            "/tools/payroll_export/invoke",
            json={"arguments": {}, "user_context": {"user_id": "u2", "roles": ["viewer"]}},
        )
        anonymous = await client.post("/tools/payroll_export/invoke", json={"arguments": {}})
        missing = await client.post("/tools/no_such_tool/invoke", json={"arguments": {}})
        allowed = await client.post(
            "/tools/payroll_export/invoke",
            json={"arguments": {}, "user_context": {"user_id": "u1", "roles": ["ops_admin"]}},
        )
    assert allowed.status_code == 200
    for refused in (read, invoked, anonymous, missing):
        assert refused.status_code == 404
        assert refused.json()["reason"] == "tool_not_found"
        assert "ops_admin" not in refused.text
        assert "required_roles" not in refused.text
    # Same words as for a tool that does not exist, but for the name.
    assert invoked.json()["message"].replace("payroll_export", "X") == missing.json()[
        "message"
    ].replace("no_such_tool", "X")


async def test_the_raw_manifest_is_for_registry_admins(make_gateway: GatewayFactory) -> None:
    internal = http_tool(
        "order_lookup",
        "http://internal-order-svc.corp:8443/api/orders",
        permission="user",
    )
    internal["endpoint"]["auth"] = {"type": "bearer", "key": "internal.order.read"}
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=internal, headers=ADMIN)
        as_user = await client.get("/tools/order_lookup", headers=OPS)
        as_admin = await client.get("/tools/order_lookup", headers=ADMIN)
        listed = await client.get("/tools/list", headers=OPS)
    assert as_user.status_code == 200
    assert as_user.json()["manifest"] is None
    for leaky in (as_user.text, listed.text):
        assert "internal-order-svc" not in leaky
        assert "internal.order.read" not in leaky
    assert as_admin.json()["manifest"]["endpoint"]["auth"]["key"] == "internal.order.read"
