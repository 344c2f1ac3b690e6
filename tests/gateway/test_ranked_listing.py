"""``GET /tools/list?q=``: the caller's tools ranked for one request, a shortlist for a
client whose model cannot be sent the whole catalogue (the agent past its tools' share)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from tests.conftest import KeyMaker, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool

VIEWER = {"X-User-Id": "vic", "X-User-Roles": "viewer"}
OPS = {"X-User-Id": "olga", "X-User-Roles": "ops_admin"}

TOOLS = {
    "weather_forecast": "The weather forecast for a city: temperature, rain and wind.",
    "invoice_lookup": "Look up an invoice by its number: amount, due date, status.",
    "flight_search": "Search flights between two airports on a date.",
    "translate_text": "Translate a text into another language.",
    "currency_convert": "Convert an amount of money from one currency to another.",
}

TRAVEL = {"weather_forecast", "flight_search"}


def manifests() -> list[dict[str, Any]]:
    listed = [
        python_tool(
            tool_id, "echo", description=text, namespace="travel" if tool_id in TRAVEL else "office"
        )
        for tool_id, text in TOOLS.items()
    ]
    # The best match for a weather request, but only an ops admin may use it.
    listed.append(
        python_tool(
            "weather_admin",
            "echo",
            description="The weather forecast for a city, with the raw station feed.",
            permission="admin",
            scope=["ops_admin"],
        )
    )
    return listed


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            for manifest in manifests():
                response = await client.post("/tools/register", json=manifest, headers=ADMIN)
                assert response.status_code == 201, response.text
            yield client


def ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [tool["tool_id"] for tool in response.json()["tools"]]


async def test_a_ranked_listing_puts_the_tool_for_the_request_first(
    make_gateway: GatewayFactory,
) -> None:
    async with running(make_gateway()) as client:
        weather = await client.get(
            "/tools/list", params={"q": "will it rain in Paris tomorrow"}, headers=VIEWER
        )
        money = await client.get(
            "/tools/list",
            params={"q": "how much is 40 euros in dollars", "limit": 1},
            headers=VIEWER,
        )
        plain = await client.get("/tools/list", headers=VIEWER)
        travel = await client.get(
            "/tools/list",
            params={"q": "convert 40 euros to dollars", "namespace": "travel"},
            headers=VIEWER,
        )
    assert ids(weather)[0] == "weather_forecast"
    assert len(set(ids(weather))) == len(ids(weather))
    assert set(ids(weather)) <= set(ids(plain))  # the viewer's own tools, nothing else
    assert ids(money) == ["currency_convert"]
    assert ids(travel)
    assert set(ids(travel)) <= TRAVEL
    # A ranked listing is for one request: it is not a version of the catalogue.
    assert "etag" not in weather.headers
    assert "etag" in plain.headers
    assert weather.json()["revision"] == plain.json()["revision"]


async def test_a_ranked_listing_ranks_only_what_the_caller_may_use(
    make_gateway: GatewayFactory,
) -> None:
    query = {"q": "weather forecast for a city with the raw station feed", "limit": 100}
    async with running(make_gateway()) as client:
        viewer = await client.get("/tools/list", params=query, headers=VIEWER)
        ops = await client.get("/tools/list", params=query, headers=OPS)
    assert "weather_admin" not in ids(viewer)
    assert ids(viewer)[0] == "weather_forecast"
    assert ids(ops)[0] == "weather_admin"


async def test_bad_ranked_listings_get_clear_errors(make_gateway: GatewayFactory) -> None:
    async with running(make_gateway()) as client:
        lone_limit = await client.get("/tools/list", params={"limit": 5}, headers=VIEWER)
        zero = await client.get("/tools/list", params={"q": "rain", "limit": 0}, headers=VIEWER)
        many = await client.get("/tools/list", params={"q": "rain", "limit": 101}, headers=VIEWER)
        long = await client.get("/tools/list", params={"q": "rain " * 401}, headers=VIEWER)
        blank = await client.get("/tools/list", params={"q": "   "}, headers=VIEWER)
        # Percent-encoded bytes that are no UTF-8 (a lone surrogate), control text; a NUL.
        odd = await client.get("/tools/list?q=%ED%A0%80rain%01%7F", headers=VIEWER)
        nul = await client.get("/tools/list?q=rain%00", headers=VIEWER)
        emoji = await client.get("/tools/list", params={"q": "🌧" * 2000}, headers=VIEWER)
    body = assert_error(lone_limit, 422, "invalid_request")
    assert "q" in body["message"]
    assert_error(zero, 422, "invalid_request")
    assert_error(many, 422, "invalid_request")
    assert_error(long, 422, "invalid_request")
    assert ids(blank) == []
    assert odd.status_code == 200, odd.text
    assert_error(nul, 400, "invalid_request")
    assert emoji.status_code == 200, emoji.text


async def test_in_strict_mode_a_ranked_listing_is_the_verified_callers(
    make_gateway: GatewayFactory, make_key: KeyMaker
) -> None:
    """Strict mode: claimed roles rank nothing extra; a verified key ranks its own tools."""
    ops_key = await make_key("olga", ["ops_admin"])
    query = {"q": "weather forecast for a city with the raw station feed", "limit": 100}
    app = make_gateway(auth_mode="strict")
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            store = app.state.runtime.registry_service
            for manifest in manifests():
                await store.register(manifest)
            claimed = await client.get("/tools/list", params=query, headers=OPS)
            verified = await client.get("/tools/list", params=query, headers={"X-API-Key": ops_key})
            forged = await client.get(
                "/tools/list", params=query, headers={"X-API-Key": ops_key + "x"}
            )
    assert "weather_admin" not in ids(claimed)
    assert ids(verified)[0] == "weather_admin"
    assert_error(forged, 401, "invalid_credential")
