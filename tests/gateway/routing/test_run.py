"""POST /run end to end: the gateway (in process) routes and calls the real shop (a process)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import respx

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.db import libpq_url
from reach_common.embeddings import Embedder
from tests.conftest import REPO_ROOT, Backends, app_client
from tests.fixtures.llm import HTTPCore2Mocker  # noqa: F401 - registers respx's httpcore2 mocker
from tests.gateway.conftest import ADMIN

SEED = {
    "session_id": "sess_test_001",
    "user_query": "SKU2024001 还有多少库存",
    "user_context": {"user_id": "user_123", "roles": ["ops_admin"]},
}
PAYLOADS = Path(__file__).parent / "payloads"


def settings_for(backends: Backends, shop_url: str, **overrides: Any) -> Settings:
    return Settings(
        database_url=backends.database_url,
        redis_url=backends.redis_url,
        log_level="WARNING",
        shop_url=shop_url,
        tool_auto_discovery=True,
        manifests_dir=str(REPO_ROOT / "manifests"),
        caller_rate_limit=None,
        route_rate_limit=None,
        **overrides,
    )


@pytest.fixture(scope="module")
async def gateway(
    backends: Backends, shop_url: str, embedder: Embedder
) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(create_app(settings_for(backends, shop_url), embedder=embedder)) as c:
        yield c


def order_count(backends: Backends) -> int:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        row = conn.execute("SELECT count(*) FROM shop.sales_order").fetchone()
    assert row is not None
    return int(row[0])


async def test_the_seed_request_returns_the_shops_real_stock(gateway: httpx.AsyncClient) -> None:
    response = await gateway.post("/run", json=SEED)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["success"] is True
    assert body["tool_id"] == "inventory_query"
    assert body["arguments"] == {"sku": "SKU2024001"}
    assert body["output"]["available"] == 156
    assert body["output"]["total"] == 168
    assert len(body["trace_id"]) == 32
    assert body["route"]["route_hint"] in ("semantic_match", "route_cache")
    assert body["route"]["candidates"][0]["tool_id"] == "inventory_query"


async def test_the_follow_up_takes_the_sku_from_the_session(gateway: httpx.AsyncClient) -> None:
    first = await gateway.post("/run", json={**SEED, "session_id": "sess_follow_up"})
    assert first.status_code == 200, first.text
    follow_up = {**SEED, "session_id": "sess_follow_up", "user_query": "那这个 SKU 最近卖得怎么样"}
    response = await gateway.post("/run", json=follow_up)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "sales_query"
    assert body["arguments"]["sku"] == "SKU2024001"
    assert body["route"]["route_hint"] == "context"
    assert body["output"]["sku"] == "SKU2024001"


@pytest.mark.parametrize("follow_up", ["how much stock is left now?", "库存还剩多少"])
async def test_a_short_follow_up_to_a_read_tool_keeps_the_session_s_sku(
    gateway: httpx.AsyncClient, follow_up: str
) -> None:
    """No "it" or "这个": a short request naming no id is about the previous call's SKU,
    for a tool that only reads."""
    session = f"sess_elliptical_{len(follow_up)}"
    first = {**SEED, "session_id": session, "user_query": "how is SKU2024003 selling"}
    assert (await gateway.post("/run", json=first)).status_code == 200
    response = await gateway.post(
        "/run", json={**SEED, "session_id": session, "user_query": follow_up}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["tool_id"], body["arguments"]) == ("inventory_query", {"sku": "SKU2024003"})
    assert body["route"]["route_hint"] == "context"


async def test_a_write_tool_takes_the_session_s_sku_only_when_referred_to(
    gateway: httpx.AsyncClient,
) -> None:
    """Placing an order on a SKU the request never names needs "it" / "这个": a short
    request alone is not enough to act on."""
    session = "sess_elliptical_write"
    first = {**SEED, "session_id": session, "user_query": "how many SKU2024003 do we have"}
    assert (await gateway.post("/run", json=first)).status_code == 200
    admin = {**SEED, "session_id": session, "dry_run": True}
    vague = await gateway.post("/run", json={**admin, "user_query": "order 5 for Acme Ltd"})
    assert vague.status_code == 422, vague.text
    assert (vague.json()["tool_id"], vague.json()["reason"]) == (
        "order_create",
        "invalid_arguments",
    )
    explicit = await gateway.post(
        "/run", json={**admin, "user_query": "order 5 of it for Acme Ltd"}
    )
    assert explicit.status_code == 200, explicit.text
    assert explicit.json()["arguments"]["sku"] == "SKU2024003"


async def test_a_month_named_in_words_reaches_the_report(gateway: httpx.AsyncClient) -> None:
    """ "last month" is the month before the gateway's date, in the form the schema asks."""
    query = {**SEED, "session_id": "sess_month", "user_query": "monthly report for last month"}
    response = await gateway.post("/run", json={**query, "dry_run": True})
    assert response.status_code == 200, response.text
    body = response.json()
    today = datetime.now(UTC).date()
    last = (today.replace(day=1) - timedelta(days=1)).strftime("%Y-%m")
    assert (body["tool_id"], body["arguments"]) == ("report_monthly", {"month": last})


async def test_a_remembered_fact_names_the_sku_a_new_session_refers_to(
    gateway: httpx.AsyncClient,
) -> None:
    query = {
        **SEED,
        "session_id": "sess_memory_only",
        "user_query": "how is my usual product selling?",
        "memories": ["My usual SKU is SKU2024003"],
    }
    response = await gateway.post("/run", json=query)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "sales_query"
    assert body["arguments"]["sku"] == "SKU2024003"
    assert body["output"]["sku"] == "SKU2024003"
    assert "told the agent before" in body["route"]["why"]
    # Memories are bounded like every other field.
    too_many = await gateway.post("/run", json={**query, "memories": ["x"] * 6})
    assert too_many.status_code == 422
    assert too_many.json()["reason"] == "invalid_request"


async def test_without_session_the_follow_up_names_the_missing_parameter(
    gateway: httpx.AsyncClient,
) -> None:
    lonely = {
        **SEED,
        "session_id": "sess_without_history",
        "user_query": "那这个 SKU 最近卖得怎么样",
    }
    response = await gateway.post("/run", json=lonely)
    assert response.status_code == 422
    body = response.json()
    assert body["success"] is False
    assert body["reason"] == body["error"]["reason"] == "invalid_arguments"
    assert "'sku'" in body["error"]["message"]
    assert "SKU" in body["error"]["message"]
    # The route the router got to comes back with the failure: the tool, and why.
    assert body["tool_id"] == "sales_query"
    assert body["route"]["candidates"][0]["tool_id"] == "sales_query"
    assert len(body["trace_id"]) == 32


async def test_a_cached_route_is_not_served_to_a_caller_with_fewer_rights(
    gateway: httpx.AsyncClient,
) -> None:
    admin = {"user_id": "ops1", "roles": ["ops_admin"]}
    query = "where is my order SO20240715001, track parcel"
    first = await gateway.post("/run", json={"user_query": query, "user_context": admin})
    again = await gateway.post("/run", json={"user_query": query, "user_context": admin})
    assert first.json()["tool_id"] == "order_query", first.text
    assert again.json()["route"]["route_hint"] == "route_cache"
    assert again.json()["output"]["order_id"] == "SO20240715001"

    nobody = {"user_id": "guest", "roles": []}
    response = await gateway.post("/run", json={"user_query": query, "user_context": nobody})
    body = response.json()
    assert body["tool_id"] != "order_query"
    assert body["route"]["route_hint"] != "route_cache"
    assert all(c["tool_id"] != "order_query" for c in body["route"]["candidates"])


async def test_a_registry_change_retires_cached_routes(
    gateway: httpx.AsyncClient, shop_url: str
) -> None:
    query = {"user_query": "stock level of SKU2024002", "user_context": {"user_id": "u7"}}
    await gateway.post("/run", json=query)
    cached = await gateway.post("/run", json=query)
    assert cached.json()["route"]["route_hint"] == "route_cache"
    extra = {
        "tool_id": "weather_now",
        "name": "Weather now",
        "description": "Current weather of a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "endpoint": {"type": "http", "method": "GET", "url": f"{shop_url}/healthz"},
        "permission": "public",
    }
    registered = await gateway.post("/tools/register", json=extra, headers=ADMIN)
    assert registered.status_code in (200, 201), registered.text
    after = await gateway.post("/run", json=query)
    assert after.status_code == 200
    assert after.json()["tool_id"] == "inventory_query"
    assert after.json()["route"]["route_hint"] != "route_cache"
    deleted = await gateway.delete("/tools/weather_now", headers=ADMIN)
    assert deleted.status_code in (200, 204)


async def test_dry_run_returns_the_route_and_executes_nothing(
    gateway: httpx.AsyncClient, backends: Backends
) -> None:
    before = order_count(backends)
    response = await gateway.post(
        "/run",
        json={
            "user_query": 'place an order: buy 2 of SKU2024003 for "Ada"',
            "user_context": {"user_id": "buyer1"},
            "dry_run": True,
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["dry_run"] is True
    assert body["tool_id"] == "order_create"
    assert body["arguments"]["sku"] == "SKU2024003"
    assert body["arguments"]["quantity"] == 2
    assert body["output"] is None
    assert body["route"]["candidates"]
    assert order_count(backends) == before


async def test_nothing_fits_answers_no_matching_tool(gateway: httpx.AsyncClient) -> None:
    response = await gateway.post(
        "/run",
        json={"user_query": "play some relaxing jazz music", "user_context": {"user_id": "u"}},
    )
    assert response.status_code == 404
    body = response.json()
    assert body["success"] is False
    assert body["reason"] == body["error"]["reason"] == "no_matching_tool"
    assert "Best candidates" in body["error"]["message"]
    # Listed surest first: the confidence is what the threshold compared.
    listed = re.findall(r"\(([0-9.]+)\)", body["error"]["message"].split("Best candidates")[1])
    assert listed == sorted(listed, reverse=True)
    assert len(listed) == 3
    assert body["tool_id"] is None
    assert body["route"]["why"].startswith("below threshold: top-1 confidence")
    assert body["route"]["candidates"]


@pytest.mark.parametrize(
    ("payload", "status", "reason"),
    [
        ({"user_query": ""}, 422, "invalid_request"),
        ({"session_id": "s"}, 422, "invalid_request"),
        ({"user_query": "x" * 5000}, 422, "invalid_request"),
        ({"user_query": "stock", "dry_run": "maybe"}, 422, "invalid_request"),
    ],
)
async def test_bad_requests_get_clear_errors(
    gateway: httpx.AsyncClient, payload: dict[str, Any], status: int, reason: str
) -> None:
    response = await gateway.post("/run", json=payload)
    assert response.status_code == status
    assert response.json()["reason"] == reason


async def test_malformed_json_is_a_400(gateway: httpx.AsyncClient) -> None:
    response = await gateway.post(
        "/run", content=b'{"user_query": ', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["reason"] == "malformed_json"


async def test_llm_rerank_picks_and_fixes_arguments(
    backends: Backends, shop_url: str, embedder: Embedder
) -> None:
    """Anthropic through /run: an invalid first answer, the validation error sent back, a fix."""
    settings = settings_for(
        backends, shop_url, llm_provider="anthropic", anthropic_api_key="sk-ant-test"
    )
    responses = [
        httpx.Response(200, json=json.loads((PAYLOADS / name).read_text()))
        for name in ("anthropic_route_invalid.json", "anthropic_route_fixed.json")
    ]
    with respx.mock(using="httpcore2") as mock:
        model = mock.post("https://api.anthropic.com/v1/messages").mock(side_effect=responses)
        async with app_client(create_app(settings, embedder=embedder)) as client:
            response = await client.post(
                "/run",
                json={
                    "session_id": "llm1",
                    "user_query": "how did SKU2024001 sell this month?",
                    "user_context": {"user_id": "u1"},
                },
            )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "sales_query"
    assert body["arguments"] == {"sku": "SKU2024001", "days": 30}
    assert body["route"]["route_hint"] == "llm_rerank"
    assert "validation retry" in body["route"]["why"]
    assert body["output"]["sku"] == "SKU2024001"
    assert model.call_count == 2
    offered = {t["name"] for t in json.loads(model.calls[0].request.content)["tools"]}
    assert "sales_query" in offered
