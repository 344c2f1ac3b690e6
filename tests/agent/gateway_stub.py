"""The gateway's contract, served by a small real HTTP app, for agent tests.

It speaks what the agent uses of the gateway (``GET /tools/list`` with
``X-User-Id``/``X-User-Roles``, ``POST /tools/{id}/invoke`` and ``POST /run``,
answering with the ``/run`` envelope) and runs the shop tools against the real
shop app, so outputs are real data. It records every request (headers
included) so tests can check what the agent forwarded, and it can slow a tool
down or count how many calls run at once.

``tests/agent/test_gateway_client.py`` checks that the real gateway answers
with the same shapes, so this stub cannot drift from the contract unnoticed.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import jsonschema
from asgi_lifespan import LifespanManager
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

SKU = {"type": "string", "pattern": "^SKU\\d{7}$", "description": "SKU code, e.g. SKU2024001"}

TOOLS: dict[str, dict[str, Any]] = {
    "inventory_query": {
        "name": "Inventory lookup",
        "description": "Current stock, available and locked quantity of ONE SKU.",
        "input_schema": {"type": "object", "properties": {"sku": SKU}, "required": ["sku"]},
        "scope": [],
        "idempotent": True,
        "requires_approval": False,
    },
    "sales_query": {
        "name": "Recent sales",
        "description": "Sales of ONE SKU over the last `days` days, with totals.",
        "input_schema": {
            "type": "object",
            "properties": {"sku": SKU, "days": {"type": "integer", "minimum": 1, "maximum": 365}},
            "required": ["sku"],
        },
        "scope": [],
        "idempotent": True,
        "requires_approval": False,
    },
    "order_query": {
        "name": "Order lookup",
        "description": "Status and tracking of one order.",
        "input_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "string", "pattern": "^SO\\d{11}$"}},
            "required": ["order_id"],
        },
        "scope": ["ops_admin"],
        "idempotent": True,
        "requires_approval": False,
    },
    "rag_retrieve": {
        "name": "Search documents",
        "description": "Passages of the knowledge base that match a query.",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 1}},
            "required": ["query"],
        },
        "scope": [],
        "idempotent": True,
        "requires_approval": False,
    },
    "order_create": {
        "name": "Place an order",
        "description": "Places a NEW order for one SKU. Not idempotent.",
        "input_schema": {
            "type": "object",
            "properties": {
                "sku": SKU,
                "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
                "customer": {"type": "string", "minLength": 1, "maxLength": 200},
            },
            "required": ["sku", "quantity", "customer"],
            "additionalProperties": False,
        },
        "scope": [],
        "idempotent": False,
        "requires_approval": False,
    },
    "echo": {
        "name": "Echo",
        "description": "Returns its arguments (benchmarks).",
        "input_schema": {"type": "object"},
        "scope": [],
        "idempotent": True,
        "requires_approval": False,
    },
}


@dataclass
class GatewayStub:
    shop: httpx.AsyncClient | None = None
    delays: dict[str, float] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    last_sku: dict[str, str] = field(default_factory=dict)
    echo_all: bool = False  # benchmarks: every tool answers at once with its arguments
    busy_s: float = 0.0  # time spent inside tool calls, for benchmarks to subtract
    credentials: dict[str, set[str]] = field(default_factory=dict)  # credential → roles
    documents: list[dict[str, Any]] = field(default_factory=list)  # what rag_retrieve finds

    def reset(self) -> None:
        self.busy_s = 0.0
        self.delays.clear()
        self.requests.clear()
        self.in_flight = self.max_in_flight = 0
        self.last_sku.clear()
        self.credentials.clear()
        self.documents.clear()

    def invoked(self, tool_id: str) -> list[dict[str, Any]]:
        """The ``/tools/{tool_id}/invoke`` requests received."""
        return [r for r in self.requests if r["path"] == f"/tools/{tool_id}/invoke"]

    def _record(self, request: Request, body: Any) -> None:
        if self.echo_all:  # benchmarks: keep memory flat
            return
        self.requests.append(
            {
                "method": request.method,
                "path": request.url.path,
                "headers": dict(request.headers),
                "body": body,
            }
        )

    def _roles(self, request: Request, body_context: dict[str, Any] | None) -> set[str]:
        authorization = request.headers.get("authorization", "")
        credential = authorization.removeprefix("Bearer ") or request.headers.get("x-api-key")
        if credential:
            return set(self.credentials.get(credential, set()))
        if body_context is not None:
            return set(body_context.get("roles") or [])
        return {r for r in request.headers.get("x-user-roles", "").split(",") if r}

    def visible(self, roles: set[str]) -> list[str]:
        return [t for t, spec in TOOLS.items() if not spec["scope"] or roles & set(spec["scope"])]

    async def execute(
        self, tool_id: str, arguments: dict[str, Any], idempotency_key: str | None = None
    ) -> tuple[int, Any]:
        if tool_id == "echo" or self.echo_all:
            return 200, {"echo": arguments}
        if tool_id == "rag_retrieve":
            return 200, {"query": arguments["query"], "chunks": list(self.documents)}
        assert self.shop is not None, "shop tools need the shop app"
        if tool_id == "order_create":
            headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
            response = await self.shop.post("/api/orders", json=arguments, headers=headers)
        elif tool_id == "inventory_query":
            response = await self.shop.get(f"/api/inventory/{arguments['sku']}")
        elif tool_id == "sales_query":
            days = arguments.get("days", 30)
            response = await self.shop.get(f"/api/sales/{arguments['sku']}", params={"days": days})
        else:
            response = await self.shop.get(f"/api/orders/{arguments['order_id']}")
        return response.status_code, response.json()

    async def invoke(
        self,
        tool_id: str,
        arguments: dict[str, Any],
        roles: set[str],
        idempotency_key: str | None = None,
    ) -> tuple[int, dict[str, Any]]:
        started = time.perf_counter()

        def envelope(status: int, **extra: Any) -> tuple[int, dict[str, Any]]:
            body = {
                "success": status < 400,
                "tool_id": tool_id,
                "arguments": arguments,
                "latency_ms": round((time.perf_counter() - started) * 1000, 2),
                "trace_id": None,
                **extra,
            }
            return status, body

        spec = TOOLS.get(tool_id)
        if spec is None:
            return envelope(
                404, error={"reason": "tool_not_found", "message": f"No tool {tool_id}."}
            )
        if spec["scope"] and not roles & set(spec["scope"]):
            return envelope(
                403,
                error={
                    "reason": "insufficient_permission",
                    "message": f"{tool_id} needs one of the roles {spec['scope']}.",
                },
            )
        try:
            jsonschema.validate(arguments, spec["input_schema"])
        except jsonschema.ValidationError as exc:
            return envelope(422, error={"reason": "invalid_arguments", "message": exc.message})
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delays.get(tool_id, 0))
            status, output = await self.execute(tool_id, arguments, idempotency_key)
        finally:
            self.in_flight -= 1
            self.busy_s += time.perf_counter() - started
        if status >= 400:
            return envelope(502, error={"reason": "tool_error", "message": str(output)})
        return envelope(200, output=output)

    def route(self, session_id: str, query: str) -> tuple[str, dict[str, Any]] | None:
        """Offline routing, just enough for the agent's offline tests."""
        order = re.search(r"SO\d{11}", query)
        if order:
            return "order_query", {"order_id": order.group(0)}
        match = re.search(r"SKU\d{7}", query)
        sku = match.group(0) if match else self.last_sku.get(session_id)
        if sku is None:
            return None
        self.last_sku[session_id] = sku
        if re.search(r"库存|stock|left", query, re.IGNORECASE):
            return "inventory_query", {"sku": sku}
        if re.search(r"卖|销|sales|selling", query, re.IGNORECASE):
            return "sales_query", {"sku": sku}
        return None

    def app(self, shop_app: FastAPI | None = None) -> FastAPI:
        @asynccontextmanager
        async def lifespan(_: FastAPI) -> AsyncIterator[None]:
            async with AsyncExitStack() as stack:
                if shop_app is not None:
                    manager = await stack.enter_async_context(LifespanManager(shop_app))
                    self.shop = await stack.enter_async_context(
                        httpx.AsyncClient(
                            transport=httpx.ASGITransport(app=manager.app),
                            base_url="http://localhost",
                        )
                    )
                yield

        app = FastAPI(lifespan=lifespan)

        @app.get("/healthz")
        async def healthz() -> dict[str, str]:
            return {"status": "ok"}

        @app.get("/tools/list")
        async def list_tools(request: Request) -> dict[str, Any]:
            self._record(request, None)
            tools = [
                {
                    "tool_id": t,
                    "namespace": "shop",
                    **{k: v for k, v in TOOLS[t].items() if k != "scope"},
                }
                for t in self.visible(self._roles(request, None))
            ]
            return {"revision": 1, "tools": tools}

        @app.post("/tools/{tool_id}/invoke")
        async def invoke(tool_id: str, request: Request) -> JSONResponse:
            body = await request.json()
            self._record(request, body)
            roles = self._roles(request, body.get("user_context"))
            status, envelope = await self.invoke(
                tool_id, body.get("arguments", {}), roles, request.headers.get("idempotency-key")
            )
            return JSONResponse(envelope, status_code=status)

        @app.post("/run")
        async def run(request: Request) -> JSONResponse:
            body = await request.json()
            self._record(request, body)
            routed = self.route(body["session_id"], body["user_query"])
            if routed is None:
                return JSONResponse(
                    {
                        "success": False,
                        "error": {
                            "reason": "no_matching_tool",
                            "message": "No tool scored above the threshold.",
                        },
                    },
                    status_code=404,
                )
            tool_id, arguments = routed
            roles = self._roles(request, body.get("user_context"))
            status, envelope = await self.invoke(tool_id, arguments, roles)
            envelope["route"] = {"confidence": 0.9, "route_hint": "semantic_match"}
            return JSONResponse(envelope, status_code=status)

        return app
