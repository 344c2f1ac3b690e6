"""Routing fixtures: a real Redis client on the test server, and a gateway on the shipped
manifests (one per module; a module may define its own)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from redis.asyncio import Redis

from gateway.app import create_app
from reach_common.embeddings import Embedder
from tests.conftest import Backends, app_client
from tests.gateway.routing.test_run import settings_for


@pytest.fixture
async def redis_client(clean_state: Backends) -> AsyncIterator[Redis]:
    client = Redis.from_url(clean_state.redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture(scope="module")
def app(backends: Backends, shop_url: str, embedder: Embedder) -> FastAPI:
    return create_app(settings_for(backends, shop_url), embedder=embedder)


@pytest.fixture(scope="module")
async def gateway(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(app) as client:
        yield client
