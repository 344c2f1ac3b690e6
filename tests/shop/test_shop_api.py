"""The shop API against real Postgres: seed data, orders, idempotency, errors."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest

from reach_common.db import libpq_url
from shop.app import create_app
from shop.settings import Settings
from tests.conftest import assert_error

SEEDED_ORDERS = 5
NEW_ORDER = {"sku": "SKU2024001", "quantity": 3, "customer": "Ada Lovelace"}


@pytest.fixture
async def client(service_env: dict[str, Any], make_client: Any) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(Settings(**service_env, report_delay_ms=200))
    async with make_client(app) as client:
        yield client


@pytest.fixture
def count(service_env: dict[str, Any]) -> Any:
    """``count("sales_order")``: rows in a shop table right now."""

    def _count(table: str) -> int:
        with psycopg.connect(libpq_url(service_env["database_url"])) as conn:
            row = conn.execute(f"SELECT count(*) FROM shop.{table}").fetchone()
        assert row is not None
        return int(row[0])

    return _count


async def available(client: httpx.AsyncClient, sku: str = "SKU2024001") -> int:
    response = await client.get(f"/api/inventory/{sku}")
    assert response.status_code == 200
    return int(response.json()["available"])


# --- inventory -----------------------------------------------------------------


async def test_seeded_inventory(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/inventory/SKU2024001")
    assert response.status_code == 200
    assert response.json() == {
        "sku": "SKU2024001",
        "name": "Wireless Mouse",
        "available": 156,
        "locked": 12,
        "total": 168,
    }


async def test_unknown_sku_is_404(client: httpx.AsyncClient) -> None:
    body = assert_error(await client.get("/api/inventory/SKU9999999"), 404, "sku_not_found")
    assert body["sku"] == "SKU9999999"


@pytest.mark.parametrize("sku", ["ABC", "SKU123", "sku2024001", "SKU20240011"])
async def test_bad_sku_format_is_422(client: httpx.AsyncClient, sku: str) -> None:
    body = assert_error(await client.get(f"/api/inventory/{sku}"), 422, "invalid_request")
    assert body["errors"][0]["field"] == "path.sku"


# --- orders --------------------------------------------------------------------


async def test_order_lookup(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/orders/SO20240715001")
    assert response.status_code == 200
    assert response.json() == {
        "order_id": "SO20240715001",
        "sku": "SKU2024001",
        "quantity": 2,
        "status": "shipped",
        "tracking": "SF1234567890",
        "carrier": "SF Express",
        "customer": "Li Na",
        "created_at": "2024-07-15T09:30:00Z",
    }


async def test_unknown_order_is_404(client: httpx.AsyncClient) -> None:
    body = assert_error(await client.get("/api/orders/SO99999999999"), 404, "order_not_found")
    assert body["order_id"] == "SO99999999999"


async def test_bad_order_id_is_422(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/api/orders/SO123"), 422, "invalid_request")


async def test_create_order_takes_stock(client: httpx.AsyncClient, count: Any) -> None:
    response = await client.post("/api/orders", json=NEW_ORDER)

    assert response.status_code == 201, response.text
    order = response.json()
    assert re.fullmatch(rf"SO{datetime.now(UTC):%Y%m%d}\d{{3}}", order["order_id"])
    assert order | {"order_id": None, "created_at": None} == {
        "order_id": None,
        "sku": "SKU2024001",
        "quantity": 3,
        "status": "pending",
        "tracking": None,
        "carrier": None,
        "customer": "Ada Lovelace",
        "created_at": None,
    }
    assert "idempotent-replayed" not in response.headers
    inventory = (await client.get("/api/inventory/SKU2024001")).json()
    assert (inventory["available"], inventory["locked"], inventory["total"]) == (153, 12, 165)
    fetched = await client.get(f"/api/orders/{order['order_id']}")
    assert fetched.status_code == 200
    assert fetched.json() == order
    assert count("sales_order") == SEEDED_ORDERS + 1


async def test_create_order_without_key_is_not_idempotent(
    client: httpx.AsyncClient, count: Any
) -> None:
    first = await client.post("/api/orders", json=NEW_ORDER)
    second = await client.post("/api/orders", json=NEW_ORDER)

    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json()["order_id"] != second.json()["order_id"]
    assert count("sales_order") == SEEDED_ORDERS + 2
    assert await available(client) == 150


async def test_insufficient_stock_is_409(client: httpx.AsyncClient, count: Any) -> None:
    order = {"sku": "SKU2024004", "quantity": 4, "customer": "Grace Hopper"}
    body = assert_error(await client.post("/api/orders", json=order), 409, "insufficient_stock")
    assert (body["sku"], body["requested"], body["available"]) == ("SKU2024004", 4, 3)
    assert await available(client, "SKU2024004") == 3
    assert count("sales_order") == SEEDED_ORDERS


async def test_order_for_unknown_sku_is_404(client: httpx.AsyncClient, count: Any) -> None:
    order = {"sku": "SKU9999999", "quantity": 1, "customer": "Grace Hopper"}
    assert_error(await client.post("/api/orders", json=order), 404, "sku_not_found")
    assert count("sales_order") == SEEDED_ORDERS


# --- idempotency -----------------------------------------------------------------


async def test_idempotency_key_replay_returns_first_response(
    client: httpx.AsyncClient, count: Any
) -> None:
    headers = {"Idempotency-Key": "order-7f3a"}
    first = await client.post("/api/orders", json=NEW_ORDER, headers=headers)
    replay = await client.post("/api/orders", json=NEW_ORDER, headers=headers)

    assert first.status_code == 201, first.text
    assert replay.status_code == 201, replay.text
    assert replay.json() == first.json()
    assert replay.headers["idempotent-replayed"] == "true"
    assert count("sales_order") == SEEDED_ORDERS + 1
    assert count("idempotency_key") == 1
    assert await available(client) == 153


async def test_idempotency_key_with_other_body_is_409(
    client: httpx.AsyncClient, count: Any
) -> None:
    headers = {"Idempotency-Key": "order-7f3a"}
    first = await client.post("/api/orders", json=NEW_ORDER, headers=headers)
    other = await client.post("/api/orders", json=NEW_ORDER | {"quantity": 4}, headers=headers)

    assert first.status_code == 201
    assert_error(other, 409, "idempotency_key_reused")
    assert count("sales_order") == SEEDED_ORDERS + 1
    assert await available(client) == 153


async def test_concurrent_requests_with_one_key_create_one_order(
    client: httpx.AsyncClient, count: Any
) -> None:
    headers = {"Idempotency-Key": "burst-1"}
    responses = await asyncio.gather(
        *(client.post("/api/orders", json=NEW_ORDER, headers=headers) for _ in range(10))
    )

    assert [r.status_code for r in responses] == [201] * 10, [r.text for r in responses]
    assert len({r.json()["order_id"] for r in responses}) == 1
    assert sum(r.headers.get("idempotent-replayed") == "true" for r in responses) == 9
    assert count("sales_order") == SEEDED_ORDERS + 1
    assert await available(client) == 153


async def test_failed_request_does_not_burn_its_key(client: httpx.AsyncClient) -> None:
    headers = {"Idempotency-Key": "retry-me"}
    order = {"sku": "SKU2024004", "quantity": 4, "customer": "Grace Hopper"}
    assert_error(
        await client.post("/api/orders", json=order, headers=headers), 409, "insufficient_stock"
    )

    smaller = await client.post("/api/orders", json=order | {"quantity": 1}, headers=headers)
    assert smaller.status_code == 201, smaller.text
    assert smaller.json()["quantity"] == 1


# --- sales and reports ------------------------------------------------------------


async def test_sales_of_last_30_days(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/sales/SKU2024001")

    assert response.status_code == 200
    body = response.json()
    assert (body["sku"], body["days"]) == ("SKU2024001", 30)
    assert body["total_quantity"] == 35
    assert body["total_revenue"] == "4515.00"
    assert [s["quantity"] for s in body["sales"]] == [3, 5, 2, 4, 6, 1, 3, 2, 5, 4]
    assert {s["unit_price"] for s in body["sales"]} == {"129.00"}
    sold_at = [s["sold_at"] for s in body["sales"]]
    assert sold_at == sorted(sold_at, reverse=True)


async def test_sales_window_follows_days(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/sales/SKU2024001", params={"days": 60})
    assert response.status_code == 200
    assert (response.json()["days"], response.json()["total_quantity"]) == (60, 44)


async def test_sales_errors(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/api/sales/SKU9999999"), 404, "sku_not_found")
    for days in (0, 366, "week"):
        response = await client.get("/api/sales/SKU2024001", params={"days": days})
        assert_error(response, 422, "invalid_request")


async def test_monthly_report(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/reports/monthly", params={"month": "2024-07", "delay_ms": 0})

    assert response.status_code == 200, response.text
    assert response.json() == {
        "month": "2024-07",
        "orders": 5,
        "units_sold": 11,
        "revenue": "1959.00",
        "top_skus": [
            {"sku": "SKU2024001", "name": "Wireless Mouse", "units": 7, "revenue": "903.00"},
            {"sku": "SKU2024003", "name": "USB-C Hub", "units": 3, "revenue": "597.00"},
            {"sku": "SKU2024002", "name": "Mechanical Keyboard", "units": 1, "revenue": "459.00"},
        ],
    }


async def test_monthly_report_defaults_to_this_month(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/reports/monthly", params={"delay_ms": 0})
    assert response.status_code == 200
    assert response.json()["month"] == f"{datetime.now(UTC):%Y-%m}"


async def test_monthly_report_honours_the_configured_delay(client: httpx.AsyncClient) -> None:
    started = time.perf_counter()
    response = await client.get("/api/reports/monthly", params={"month": "2024-07"})
    elapsed = time.perf_counter() - started

    assert response.status_code == 200
    assert response.json()["orders"] == 5
    assert elapsed >= 0.2


@pytest.mark.parametrize(
    "params", [{"month": "2024-13"}, {"month": "July"}, {"delay_ms": -1}, {"delay_ms": 30001}]
)
async def test_monthly_report_rejects_bad_params(
    client: httpx.AsyncClient, params: dict[str, Any]
) -> None:
    assert_error(await client.get("/api/reports/monthly", params=params), 422, "invalid_request")


@pytest.mark.parametrize("month", ["0000-01", "9999-12"])
async def test_a_month_outside_the_calendar_is_a_clear_422(
    client: httpx.AsyncClient, month: str
) -> None:
    # Found by schemathesis: both answered 500 (no year 0; the end of 9999-12 overflows).
    params = {"month": month, "delay_ms": 0}
    assert_error(await client.get("/api/reports/monthly", params=params), 422, "invalid_month")


# --- request errors ---------------------------------------------------------------


async def test_malformed_json_is_400(client: httpx.AsyncClient, count: Any) -> None:
    response = await client.post(
        "/api/orders",
        content=b'{"sku": "SKU2024001",',
        headers={"content-type": "application/json"},
    )
    assert_error(response, 400, "malformed_json")
    assert count("sales_order") == SEEDED_ORDERS


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sku": "SKU2024001", "quantity": "many", "customer": "Ada"}, "quantity"),
        ({"sku": "SKU2024001", "quantity": 0, "customer": "Ada"}, "quantity"),
        ({"sku": "SKU2024001", "quantity": 1001, "customer": "Ada"}, "quantity"),
        ({"sku": "PEN-1", "quantity": 1, "customer": "Ada"}, "sku"),
        ({"sku": "SKU2024001", "quantity": 1, "customer": ""}, "customer"),
        ({"sku": "SKU2024001", "quantity": 1}, "customer"),
    ],
)
async def test_invalid_order_is_422(
    client: httpx.AsyncClient, count: Any, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/api/orders", json=body)
    errors = assert_error(response, 422, "invalid_request")["errors"]
    assert [e["field"] for e in errors] == [field]
    assert count("sales_order") == SEEDED_ORDERS


async def test_unknown_path_is_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/nothing-here")
    body = assert_error(response, 404, "not_found")
    assert body["message"] == "No route for GET /api/nothing-here."


async def test_openapi_documents_the_api(client: httpx.AsyncClient) -> None:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert {
        "/api/inventory/{sku}",
        "/api/orders/{order_id}",
        "/api/orders",
        "/api/sales/{sku}",
        "/api/reports/monthly",
    } <= set(paths)
    assert "Idempotency-Key" in paths["/api/orders"]["post"]["description"]
