"""Finding 12: in strict mode every anonymous ``/run`` caller shared session context under
the same client-chosen ``session_id``, so one stranger's SKU filled another's follow-up."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.auth.keys import create_key
from reach_common.embeddings import Embedder
from tests.conftest import REPO_ROOT, Backends, app_client
from tests.gateway.conftest import shipped

SEED = "SKU2024001 还有多少库存"
FOLLOW_UP = "那这个 SKU 最近卖得怎么样"


@pytest.fixture
async def strict_gateway(
    backends: Backends, shop_url: str, embedder: Embedder
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, str], dict[str, str]]]:
    settings = Settings(
        database_url=backends.database_url,
        redis_url=backends.redis_url,
        log_level="WARNING",
        shop_url=shop_url,
        auth_mode="strict",
        egress_allowlist=["127.0.0.1"],
        tool_auto_discovery=True,
        manifests_dir=str(REPO_ROOT / "manifests"),
        caller_rate_limit=None,
        route_rate_limit=None,
        gc_freeze=False,
    )
    app = create_app(settings, embedder=embedder)
    async with app_client(app) as client:
        # The shipped sales tool needs a caller; a public twin lets anonymous callers
        # reach a tool whose argument session context can fill.
        public_sales = {**shipped("sales_query"), "tool_id": "public_sales", "permission": "public"}
        await app.state.runtime.registry_service.register(public_sales)
        async with app.state.runtime.registry_service._sessionmaker.begin() as session:
            alice = {"X-API-Key": (await create_key(session, "alice", [])).key}
            bob = {"X-API-Key": (await create_key(session, "bob", [])).key}
        yield client, alice, bob


async def test_anonymous_callers_get_no_shared_session_context(
    strict_gateway: tuple[httpx.AsyncClient, dict[str, str], dict[str, str]],
) -> None:
    client, alice, bob = strict_gateway
    first = await client.post("/run", json={"session_id": "shared", "user_query": SEED})
    stranger = await client.post("/run", json={"session_id": "shared", "user_query": FOLLOW_UP})
    assert first.status_code == 200, first.text
    assert first.json()["arguments"] == {"sku": "SKU2024001"}
    # The stranger reaches the same tool but not the first caller's SKU.
    assert stranger.json()["tool_id"] == "public_sales"
    assert stranger.status_code == 422
    assert stranger.json()["error"]["reason"] == "invalid_arguments"
    assert stranger.json()["route"]["route_hint"] != "context"

    # Verified callers keep their own context, and only their own.
    seeded = await client.post(
        "/run", json={"session_id": "s-alice", "user_query": SEED}, headers=alice
    )
    own = await client.post(
        "/run", json={"session_id": "s-alice", "user_query": FOLLOW_UP}, headers=alice
    )
    other = await client.post(
        "/run", json={"session_id": "s-alice", "user_query": FOLLOW_UP}, headers=bob
    )
    assert seeded.status_code == 200, seeded.text
    assert own.status_code == 200, own.text
    assert own.json()["route"]["route_hint"] == "context"
    assert own.json()["arguments"]["sku"] == "SKU2024001"
    assert other.status_code == 422
    assert other.json()["error"]["reason"] == "invalid_arguments"
