"""Contract tests: the agent's gateway client against the real gateway.

The gateway serves the shipped manifests on a loopback port and its tools call
the real shop; every shape the agent relies on is checked against what the
gateway really answers, so the agent cannot drift from the contract unnoticed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from agent.clients.gateway import GatewayClient, GatewayUnavailable
from agent.clients.schemas import Caller
from tests.agent.tap import GatewayTap

ADMIN = Caller({"user_id": "u1", "roles": ["ops_admin"]})
STRANGER = Caller({"user_id": "u3", "roles": []})


@pytest.fixture
async def client(gateway: GatewayTap) -> AsyncIterator[GatewayClient]:
    async with httpx.AsyncClient() as http:
        yield GatewayClient(http, gateway.url, timeout_s=10)


async def test_listing_says_what_the_agent_needs_of_each_tool(client: GatewayClient) -> None:
    tools = {t.tool_id: t for t in await client.list_tools(ADMIN)}
    assert {"inventory_query", "sales_query", "order_query", "order_create"} <= set(tools)
    stock = tools["inventory_query"]
    assert stock.description
    assert stock.input_schema["required"] == ["sku"]
    # The write-tool policy reads these two fields of the listing.
    assert not stock.writes  # listed idempotent and without approval
    assert tools["order_create"].writes  # listed idempotent: false
    # The listing follows the caller: order_query needs ops_admin or order_manager.
    visible = {t.tool_id for t in await client.list_tools(STRANGER)}
    assert "order_query" not in visible
    assert "inventory_query" in visible
    anonymous = {t.tool_id for t in await client.list_tools(Caller())}
    assert anonymous == {"inventory_query"}  # the only public tool


async def test_invoke_outcomes(client: GatewayClient, gateway: GatewayTap) -> None:
    ok = await client.invoke("inventory_query", {"sku": "SKU2024001"}, ADMIN, idempotency_key="k1")
    assert ok.success
    assert ok.status_code == 200
    assert ok.error is None
    assert ok.tool_id == "inventory_query"
    assert (ok.output["available"], ok.output["locked"]) == (156, 12)
    assert ok.trace_id is not None
    assert len(ok.trace_id) == 32
    (sent,) = gateway.invoked("inventory_query")
    assert sent["body"] == {"arguments": {"sku": "SKU2024001"}, "user_context": ADMIN.user_context}
    assert sent["headers"]["idempotency-key"] == "k1"

    bad = await client.invoke("inventory_query", {"sku": "2024001"}, ADMIN)
    assert not bad.success
    assert bad.status_code == 422
    assert bad.error is not None
    assert bad.error.reason == "invalid_arguments"
    assert bad.error.message

    # A tool the caller may not use answers exactly like one that does not exist.
    refused = await client.invoke("order_query", {"order_id": "SO20240715001"}, STRANGER)
    assert not refused.success
    assert refused.status_code == 404
    assert refused.error is not None
    assert refused.error.reason == "tool_not_found"
    assert "ops_admin" not in refused.error.message

    failed = await client.invoke("inventory_query", {"sku": "SKU9999999"}, ADMIN)
    assert not failed.success
    assert failed.status_code == 502
    assert failed.error is not None
    assert failed.error.reason == "tool_error"

    missing = await client.invoke("no_such_tool", {}, ADMIN)
    assert not missing.success
    assert missing.status_code == 404
    assert missing.error is not None
    assert missing.error.reason == "tool_not_found"
    assert missing.error.message.replace("no_such_tool", "order_query") == refused.error.message


async def test_run_routes_and_answers_in_the_same_envelope(client: GatewayClient) -> None:
    routed = await client.run("s-contract", "SKU2024001 还有多少库存", ADMIN)
    assert routed.success
    assert routed.status_code == 200
    assert routed.tool_id == "inventory_query"
    assert routed.arguments == {"sku": "SKU2024001"}
    assert routed.output["available"] == 156

    unmatched = await client.run("s-contract", "tell me a joke", ADMIN)
    assert not unmatched.success
    assert unmatched.status_code == 404
    assert unmatched.error is not None
    assert unmatched.error.reason == "no_matching_tool"


async def test_unreachable_gateway() -> None:
    async with httpx.AsyncClient() as http:
        client = GatewayClient(http, "http://127.0.0.1:9", timeout_s=2)
        with pytest.raises(GatewayUnavailable) as caught:
            await client.list_tools(ADMIN)
        assert caught.value.reason == "gateway_unavailable"
        assert caught.value.status_code == 503
        outcome = await client.invoke("inventory_query", {"sku": "SKU2024001"}, ADMIN)
    assert not outcome.success
    assert outcome.status_code == 503
    assert outcome.error is not None
    assert outcome.error.reason == "gateway_unavailable"
