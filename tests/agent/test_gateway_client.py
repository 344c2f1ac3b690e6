"""Contract tests: the agent's gateway client against the real gateway, and the stub against both.

The gateway runs in process with the shipped manifests; its tools call the
real shop on a loopback port. The same calls go to the test stub, and the
replies must have the same shape, so the stub other agent tests rely on
cannot drift from the real contract.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from agent.clients.gateway import GatewayClient, GatewayUnavailable
from agent.clients.schemas import Caller
from shop.app import create_app as create_shop_app
from shop.settings import Settings as ShopSettings
from tests.agent.gateway_stub import GatewayStub
from tests.agent.servers import ServerThread
from tests.conftest import REPO_ROOT, Backends, app_client

ADMIN = Caller({"user_id": "u1", "roles": ["ops_admin"]})


@pytest.fixture
def shop_url(clean_state: Backends) -> Iterator[str]:
    shop = create_shop_app(
        ShopSettings(
            database_url=clean_state.database_url,
            redis_url=clean_state.redis_url,
            log_level="WARNING",
            otel_span_store=False,
        )
    )
    with ServerThread(shop) as server:
        yield server.url


@pytest.fixture
async def real_gateway(service_env: dict[str, Any], shop_url: str) -> AsyncIterator[GatewayClient]:
    from gateway.app import create_app
    from gateway.settings import Settings

    app = create_app(
        Settings(
            **service_env,
            shop_url=shop_url,
            tool_auto_discovery=True,
            manifests_dir=str(REPO_ROOT / "manifests"),
            otel_span_store=False,
        )
    )
    paths = set(app.openapi()["paths"])
    if not {"/tools/list", "/tools/{tool_id}/invoke"} <= paths:
        pytest.skip("the gateway does not serve /tools/list and /tools/{id}/invoke yet")
    async with app_client(app) as http:
        yield GatewayClient(http, "http://localhost", timeout_s=10)


@pytest.fixture
def stub_gateway(gateway: GatewayStub, gateway_url: str) -> Iterator[GatewayClient]:
    client = httpx.AsyncClient()
    return GatewayClient(client, gateway_url, timeout_s=10)


async def check_contract(client: GatewayClient) -> dict[str, Any]:
    """The calls the agent makes, with what it relies on in each reply."""
    tools = {t.tool_id: t for t in await client.list_tools(ADMIN)}
    assert {"inventory_query", "sales_query"} <= set(tools)
    stock = tools["inventory_query"]
    assert stock.description
    assert stock.input_schema["required"] == ["sku"]
    # The write-tool policy reads these two fields of the listing.
    assert not stock.writes  # listed idempotent and without approval
    assert tools["order_create"].writes  # listed idempotent: false

    ok = await client.invoke("inventory_query", {"sku": "SKU2024001"}, ADMIN, idempotency_key="k1")
    assert ok.success
    assert ok.status_code == 200
    assert ok.error is None
    assert ok.tool_id == "inventory_query"
    assert (ok.output["available"], ok.output["locked"]) == (156, 12)

    bad = await client.invoke("inventory_query", {"sku": "2024001"}, ADMIN)
    assert not bad.success
    assert bad.status_code == 422
    assert bad.error is not None
    assert bad.error.reason == "invalid_arguments"
    assert bad.error.message

    missing = await client.invoke("no_such_tool", {}, ADMIN)
    assert not missing.success
    assert missing.status_code == 404
    assert missing.error is not None
    assert missing.error.reason == "tool_not_found"
    return {"ok": ok.model_dump(), "bad": bad.model_dump()}


async def test_client_against_the_real_gateway(real_gateway: GatewayClient) -> None:
    await check_contract(real_gateway)


async def test_stub_speaks_the_same_contract(
    real_gateway: GatewayClient, stub_gateway: GatewayClient
) -> None:
    real = await check_contract(real_gateway)
    stub = await check_contract(stub_gateway)
    for case in ("ok", "bad"):
        filled = {k for k, v in real[case].items() if v is not None}
        assert {k for k, v in stub[case].items() if v is not None} - {"latency_ms"} <= filled | {
            "latency_ms"
        }


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
