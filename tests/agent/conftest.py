"""Agent test fixtures: the real gateway on a loopback port (shipped manifests, real shop)
behind a recording tap, the agent app in process, and recorded model answers served to the
real SDKs through respx."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import respx
from fastapi import FastAPI

from agent.app import create_app
from agent.settings import Settings
from gateway.app import create_app as create_gateway_app
from gateway.settings import Settings as GatewaySettings
from reach_common.embeddings import Embedder
from shop.app import create_app as create_shop_app
from shop.settings import Settings as ShopSettings
from tests.agent.servers import ServerThread
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript
from tests.conftest import REPO_ROOT, Backends, app_client, seed_shop
from tests.fixtures.llm import HTTPCore2Mocker

MANIFESTS = REPO_ROOT / "manifests"
VENDOR_URLS = {
    "anthropic": "https://api.anthropic.com/v1/messages",
    "openai": "https://api.openai.com/v1/chat/completions",
}
VENDOR_SETTINGS: dict[str, dict[str, Any]] = {
    "anthropic": {"llm_provider": "anthropic", "anthropic_api_key": "sk-ant-test-key"},
    "openai": {"llm_provider": "openai", "openai_api_key": "sk-test-key"},
}
assert HTTPCore2Mocker.name == "httpcore2"  # registers respx's httpcore2 mocker


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """One model for every gateway (and retriever) app of the session."""
    return Embedder()


@pytest.fixture(scope="session")
def shop_server(backends: Backends) -> Iterator[str]:
    """The real shop app on a loopback port, for the whole session (re-seeded per test)."""
    shop = create_shop_app(
        ShopSettings(
            database_url=backends.database_url,
            redis_url=backends.redis_url,
            log_level="WARNING",
            otel_span_store=False,
        )
    )
    with ServerThread(shop) as server:
        yield server.url


@pytest.fixture
def gateway_overrides() -> dict[str, Any]:
    """Extra gateway settings; a module overrides this fixture to change them."""
    return {}


def gateway_settings(backends: Backends, shop_url: str, **overrides: Any) -> GatewaySettings:
    """The real gateway serving the shipped manifests, its shop tools calling ``shop_url``."""
    values: dict[str, Any] = {
        "database_url": backends.database_url,
        "redis_url": backends.redis_url,
        "log_level": "WARNING",
        "shop_url": shop_url,
        "tool_auto_discovery": True,
        "manifests_dir": str(MANIFESTS),
        "caller_rate_limit": None,
        "route_rate_limit": None,
        "audit_flush_ms": 20,
        "gc_freeze": False,
        "otel_span_store": False,
        # order_create needs approval by default; these tests place orders directly.
        "approvals_enabled": False,
        **overrides,
    }
    return GatewaySettings(**values)


@pytest.fixture
async def gateway(
    clean_state: Backends,
    shop_server: str,
    embedder: Embedder,
    gateway_overrides: dict[str, Any],
) -> AsyncIterator[GatewayTap]:
    """The real gateway (fresh for each test, after the state was cleaned) behind a tap that
    records what the agent sent; the shop's demo data in place."""
    await seed_shop(clean_state)
    settings = gateway_settings(clean_state, shop_server, **gateway_overrides)
    tap = GatewayTap(create_gateway_app(settings, embedder=embedder))
    with ServerThread(tap) as server:
        tap.url = server.url
        try:
            yield tap
        finally:
            tap.release()


@pytest.fixture
def gateway_url(gateway: GatewayTap) -> str:
    return gateway.url


@pytest.fixture
def agent_settings(service_env: dict[str, Any], gateway_url: str) -> Callable[..., Settings]:
    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            **service_env,
            "gateway_url": gateway_url,
            "llm_provider": "offline",
            "llm_max_retries": 0,
            "otel_span_store": False,
            **overrides,
        }
        return Settings(**values)

    return make


AgentClient = Callable[..., Any]


@pytest.fixture
def agent(agent_settings: Callable[..., Settings], embedder: Embedder) -> AgentClient:
    """``async with agent(**settings) as client``: the agent app in process."""

    @asynccontextmanager
    async def open_client(**overrides: Any) -> AsyncIterator[httpx.AsyncClient]:
        app: FastAPI = create_app(agent_settings(**overrides), embedder=embedder)
        async with app_client(app) as client:
            yield client

    return open_client


@pytest.fixture(params=["anthropic", "openai"])
def vendor(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def model(vendor: str) -> Iterator[ModelScript]:
    """The recorded model of ``vendor``, answering through respx; edit it to change the plot."""
    script = ModelScript(vendor)
    with respx.mock(using="httpcore2", assert_all_called=False) as router:
        router.post(VENDOR_URLS[vendor]).mock(side_effect=script.respx_side_effect)
        yield script


@pytest.fixture
def llm_settings(vendor: str) -> dict[str, Any]:
    return dict(VENDOR_SETTINGS[vendor])
