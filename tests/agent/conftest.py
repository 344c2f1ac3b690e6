"""Agent test fixtures: a loopback gateway (contract stub over the real shop), the agent
app in process, and recorded model answers served to the real SDKs through respx."""

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
from reach_common.db import create_engine, create_sessionmaker
from shop.app import create_app as create_shop_app
from shop.seed import seed_if_empty
from shop.settings import Settings as ShopSettings
from tests.agent.gateway_stub import GatewayStub
from tests.agent.servers import ServerThread
from tests.agent.wire import ModelScript
from tests.conftest import Backends, app_client
from tests.fixtures.llm import HTTPCore2Mocker

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
def gateway_server(backends: Backends) -> Iterator[tuple[GatewayStub, str]]:
    stub = GatewayStub()
    shop = create_shop_app(
        ShopSettings(
            database_url=backends.database_url,
            redis_url=backends.redis_url,
            log_level="WARNING",
            otel_span_store=False,
        )
    )
    with ServerThread(stub.app(shop)) as server:
        yield stub, server.url


@pytest.fixture
async def gateway(
    gateway_server: tuple[GatewayStub, str], clean_state: Backends
) -> AsyncIterator[GatewayStub]:
    """The stub gateway, reset, with the shop's demo data in place."""
    stub, _ = gateway_server
    stub.reset()
    engine = create_engine(clean_state.database_url, pool_size=1)
    try:
        await seed_if_empty(create_sessionmaker(engine))
    finally:
        await engine.dispose()
    return stub


@pytest.fixture
def gateway_url(gateway_server: tuple[GatewayStub, str]) -> str:
    return gateway_server[1]


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
def agent(agent_settings: Callable[..., Settings]) -> AgentClient:
    """``async with agent(**settings) as client``: the agent app in process."""

    @asynccontextmanager
    async def open_client(**overrides: Any) -> AsyncIterator[httpx.AsyncClient]:
        app: FastAPI = create_app(agent_settings(**overrides))
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
