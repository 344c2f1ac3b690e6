"""The shop's domain errors; each carries the ``reason`` clients branch on."""

from __future__ import annotations

from reach_common.errors import Conflict, NotFound


class SkuNotFound(NotFound):
    reason = "sku_not_found"

    def __init__(self, sku: str) -> None:
        super().__init__(f"No inventory item has SKU {sku}.", sku=sku)


class OrderNotFound(NotFound):
    reason = "order_not_found"

    def __init__(self, order_id: str) -> None:
        super().__init__(f"No order has id {order_id}.", order_id=order_id)


class InsufficientStock(Conflict):
    reason = "insufficient_stock"

    def __init__(self, sku: str, requested: int, available: int) -> None:
        super().__init__(
            f"Only {available} of {sku} available; {requested} requested.",
            sku=sku,
            requested=requested,
            available=available,
        )


class IdempotencyKeyReused(Conflict):
    reason = "idempotency_key_reused"

    def __init__(self) -> None:
        super().__init__(
            "This Idempotency-Key was already used with a different request body; "
            "use a new key for a new request."
        )


class IdempotencyKeyPending(Conflict):
    reason = "idempotency_key_pending"

    def __init__(self) -> None:
        super().__init__("A request with this Idempotency-Key is still running; retry shortly.")


class OrderCapacityReached(Conflict):
    reason = "order_capacity_reached"

    def __init__(self) -> None:
        super().__init__("The shop has taken its 999 orders for today; retry tomorrow.")
