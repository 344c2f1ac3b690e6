"""The original design's manifests, registered exactly as written, answer the original requests.

``original_inventory_query`` gives its ``sku`` no ``pattern`` (only "例如 SKU2024001" in the
description) and names the shop as ``mock-svc:9000``: offline argument filling infers the
identifier's shape from the example, and ``upstream_hosts`` sends ``mock-svc:9000`` to the
real shop (``internal-order-svc`` too). ``original_order_query`` needs the secret
``internal.order.read``, which is not configured here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.embeddings import Embedder
from tests.conftest import REPO_ROOT, Backends, app_client
from tests.gateway.conftest import ADMIN, original, shipped

OPS = {"user_id": "user_123", "roles": ["ops_admin"]}


@pytest.fixture(scope="module")
async def gateway(
    backends: Backends, shop_url: str, embedder: Embedder
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        database_url=backends.database_url,
        redis_url=backends.redis_url,
        log_level="WARNING",
        shop_url=shop_url,
        # The original manifests' hosts. `internal-order-svc` only needs to resolve: the call
        # stops at the missing secret before any request is sent.
        upstream_hosts={"mock-svc:9000": shop_url, "internal-order-svc": shop_url},
        tool_auto_discovery=False,  # only the tools registered below
        manifests_dir=str(REPO_ROOT / "manifests"),
        caller_rate_limit=None,
        route_rate_limit=None,
    )
    async with app_client(create_app(settings, embedder=embedder)) as client:
        for manifest in (
            original("inventory_query"),
            original("order_query"),
            shipped("sales_query"),
        ):
            response = await client.post("/tools/register", json=manifest, headers=ADMIN)
            assert response.status_code in (200, 201), response.text
        yield client


async def run(client: httpx.AsyncClient, query: str, **extra: object) -> httpx.Response:
    return await client.post("/run", json={"user_query": query, "user_context": OPS, **extra})


async def test_the_original_request_fills_the_sku_without_a_pattern(
    gateway: httpx.AsyncClient,
) -> None:
    first = await run(gateway, "SKU2024001 还有多少库存", session_id="sess_original_001")
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["tool_id"] == "inventory_query"
    assert body["arguments"] == {"sku": "SKU2024001"}
    assert body["output"]["sku"] == "SKU2024001"
    assert body["output"]["available"] == 156

    follow_up = await run(gateway, "那这个 SKU 最近卖得怎么样", session_id="sess_original_001")
    assert follow_up.status_code == 200, follow_up.text
    body = follow_up.json()
    assert body["tool_id"] == "sales_query"
    assert body["arguments"]["sku"] == "SKU2024001"
    assert body["route"]["route_hint"] == "context"
    assert body["output"]["sku"] == "SKU2024001"


async def test_a_stock_request_without_an_sku_names_what_is_missing(
    gateway: httpx.AsyncClient,
) -> None:
    response = await run(gateway, "SKU12 还有多少库存", session_id="sess_original_002")
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["reason"] == "invalid_arguments"
    assert body["tool_id"] == "inventory_query"
    message = body["error"]["message"]
    assert "'sku'" in message
    assert "SKU2024001" in message
    assert "SKU\\d{7}" in message  # the shape inferred from the description's example


@pytest.mark.parametrize(
    "query",
    ["帮我查一下订单 SO20240715001 到哪了", "Where is my order SO20240715001? Track the parcel."],
)
async def test_an_order_request_fills_the_order_id(gateway: httpx.AsyncClient, query: str) -> None:
    response = await run(gateway, query, dry_run=True)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "order_query"
    assert body["arguments"] == {"order_id": "SO20240715001"}
    assert body["output"] is None


async def test_calling_the_order_tool_without_its_secret_says_how_to_provide_it(
    gateway: httpx.AsyncClient,
) -> None:
    response = await run(gateway, "帮我查一下订单 SO20240715001 到哪了")
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["tool_id"] == "order_query"
    assert body["arguments"] == {"order_id": "SO20240715001"}
    assert body["reason"] == body["error"]["reason"] == "secret_unavailable"
    message = body["error"]["message"]
    assert "internal.order.read" in message
    assert "TOOL_SECRETS_DIR" in message
