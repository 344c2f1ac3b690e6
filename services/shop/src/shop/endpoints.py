"""The shop's HTTP API: inventory, orders, sales and a (deliberately slow) report."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncSession

from reach_common.db import SessionDep
from reach_common.errors import Unprocessable
from shop import repository
from shop.errors import (
    IdempotencyKeyPending,
    IdempotencyKeyReused,
    InsufficientStock,
    OrderCapacityReached,
    OrderNotFound,
    SkuNotFound,
)
from shop.models import IdempotencyKey, SalesOrder
from shop.schemas import (
    MONTH_PATTERN,
    ORDER_ID_PATTERN,
    SKU_PATTERN,
    InventoryRead,
    MonthlyReport,
    OrderCreate,
    OrderRead,
    SaleRead,
    SalesRead,
    TopSku,
)
from shop.settings import Settings

router = APIRouter(prefix="/api")

Sku = Annotated[
    str, Path(pattern=SKU_PATTERN, description="SKU + 7 digits.", examples=["SKU2024001"])
]
OrderId = Annotated[
    str, Path(pattern=ORDER_ID_PATTERN, description="SO + 11 digits.", examples=["SO20240715001"])
]


@router.get("/inventory/{sku}", response_model=InventoryRead, tags=["inventory"])
async def get_inventory(sku: Sku, session: SessionDep) -> InventoryRead:
    """Stock of one product.

    `available` can be ordered now, `locked` is held for orders not yet shipped
    and `total` is their sum. Unknown SKU: 404 with reason `sku_not_found`.
    """
    item = await repository.get_item(session, sku)
    if item is None:
        raise SkuNotFound(sku)
    return InventoryRead(
        sku=item.sku,
        name=item.name,
        available=item.available,
        locked=item.locked,
        total=item.available + item.locked,
    )


@router.get("/orders/{order_id}", response_model=OrderRead, tags=["orders"])
async def get_order(order_id: OrderId, session: SessionDep) -> OrderRead:
    """One order: what was ordered, by whom, its status and, once shipped, its tracking.

    Unknown order: 404 with reason `order_not_found`.
    """
    order = await repository.get_order(session, order_id)
    if order is None:
        raise OrderNotFound(order_id)
    return OrderRead.model_validate(order)


@router.post(
    "/orders",
    response_model=OrderRead,
    status_code=201,
    tags=["orders"],
    responses={
        404: {"description": "`sku_not_found`."},
        409: {
            "description": "`insufficient_stock`, `order_capacity_reached`, "
            "`idempotency_key_reused` or `idempotency_key_pending`."
        },
    },
)
async def create_order(
    body: OrderCreate,
    session: SessionDep,
    idempotency_key: Annotated[
        str | None,
        Header(
            min_length=1,
            max_length=255,
            description=(
                "Makes retries safe: a repeat with the same key and body returns the first "
                "response and creates nothing; the same key with another body is rejected."
            ),
        ),
    ] = None,
) -> OrderRead | JSONResponse:
    """Place an order; the units are taken from `available` at once.

    Not idempotent by itself: every call creates a new order. Send an
    `Idempotency-Key` header to retry safely; a replay answers with the first
    response and the header `Idempotent-Replayed: true`.

    Errors (409): `insufficient_stock` when fewer units are available than
    requested; `idempotency_key_reused` when the key was used with another body.
    Unknown SKU: 404 `sku_not_found`.
    """
    request_hash = hashlib.sha256(body.model_dump_json().encode()).hexdigest()
    if idempotency_key is not None:
        record = await repository.claim_idempotency_key(session, idempotency_key, request_hash)
        if record is not None:
            return _replay(record, request_hash)

    order = OrderRead.model_validate(await _place_order(session, body))
    if idempotency_key is not None:
        await repository.store_idempotent_response(
            session, idempotency_key, 201, order.model_dump(mode="json")
        )
    return order


async def _place_order(session: AsyncSession, body: OrderCreate) -> SalesOrder:
    if not await repository.take_stock(session, body.sku, body.quantity):
        item = await repository.get_item(session, body.sku)
        if item is None:
            raise SkuNotFound(body.sku)
        raise InsufficientStock(body.sku, body.quantity, item.available)
    now = datetime.now(UTC)
    order_id = await repository.next_order_id(session, now)
    if order_id is None:
        raise OrderCapacityReached()
    order = SalesOrder(
        order_id=order_id,
        sku=body.sku,
        quantity=body.quantity,
        status="pending",
        tracking=None,
        carrier=None,
        customer=body.customer,
        created_at=now,
    )
    return await repository.add_order(session, order)


def _replay(record: IdempotencyKey, request_hash: str) -> JSONResponse:
    if record.request_hash != request_hash:
        raise IdempotencyKeyReused()
    if record.response is None or record.status_code is None:
        raise IdempotencyKeyPending()
    return JSONResponse(
        record.response, status_code=record.status_code, headers={"Idempotent-Replayed": "true"}
    )


@router.get("/sales/{sku}", response_model=SalesRead, tags=["sales"])
async def get_sales(
    sku: Sku,
    session: SessionDep,
    days: Annotated[int, Query(ge=1, le=365, description="Look back this many days.")] = 30,
) -> SalesRead:
    """Sales of one product in the last `days` days (default 30), newest first, with totals.

    Prices are decimal strings. Unknown SKU: 404 with reason `sku_not_found`.
    """
    if await repository.get_item(session, sku) is None:
        raise SkuNotFound(sku)
    sales = await repository.recent_sales(session, sku, datetime.now(UTC) - timedelta(days=days))
    return SalesRead(
        sku=sku,
        days=days,
        total_quantity=sum(s.quantity for s in sales),
        total_revenue=sum((s.quantity * s.unit_price for s in sales), Decimal("0.00")),
        sales=[SaleRead.model_validate(s) for s in sales],
    )


@router.get("/reports/monthly", response_model=MonthlyReport, tags=["reports"])
async def monthly_report(
    request: Request,
    session: SessionDep,
    month: Annotated[
        str | None,
        Query(pattern=MONTH_PATTERN, description="YYYY-MM; the current month (UTC) if omitted."),
    ] = None,
    delay_ms: Annotated[
        int | None,
        Query(ge=0, le=30000, description="Override the server's report delay, in ms."),
    ] = None,
) -> MonthlyReport:
    """Orders placed, units sold, revenue and the top five SKUs of one month.

    Deliberately slow: it takes the server's REPORT_DELAY_MS (1.5 s by default),
    or `delay_ms` if given, before answering. Use it to try out timeouts.
    """
    settings: Settings = request.state.settings
    await asyncio.sleep((settings.report_delay_ms if delay_ms is None else delay_ms) / 1000)
    start = _month_start(month)
    end = (start + timedelta(days=32)).replace(day=1)
    by_sku = await repository.sales_by_sku(session, start, end)
    return MonthlyReport(
        month=f"{start:%Y-%m}",
        orders=await repository.count_orders(session, start, end),
        units_sold=sum(units for _, _, units, _ in by_sku),
        revenue=sum((revenue for *_, revenue in by_sku), Decimal("0.00")),
        top_skus=[
            TopSku(sku=sku, name=name, units=units, revenue=revenue)
            for sku, name, units, revenue in by_sku[:5]
        ],
    )


def _month_start(month: str | None) -> datetime:
    if month is None:
        return datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    # The pattern admits 0000-01 (no such year) and 9999-12 (whose end is past the
    # calendar): both are a clear 422, not a ValueError or an OverflowError.
    if not "0001-01" <= month <= "9999-11":
        raise Unprocessable(
            f"month {month!r} is outside the calendar the report covers (0001-01 to 9999-11).",
            reason="invalid_month",
        )
    return datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC)
