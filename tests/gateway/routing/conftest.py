"""Routing fixtures: a real Redis client on the test server, and a gateway on the shipped
manifests (one per module; a module may define its own, or a catalogue of its own tools
with ``catalogue_app`` and ``registered``)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from redis.asyncio import Redis

from gateway.app import create_app
from gateway.routing.extract import ArgumentExtractor
from gateway.routing.gloss import dictionary
from reach_common.embeddings import Embedder
from tests.conftest import Backends, app_client, reset_state
from tests.gateway.conftest import ADMIN
from tests.gateway.routing.test_run import settings_for


@pytest.fixture
async def redis_client(clean_state: Backends) -> AsyncIterator[Redis]:
    client = Redis.from_url(clean_state.redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture(scope="module")
def app(
    request: pytest.FixtureRequest, backends: Backends, shop_url: str, embedder: Embedder
) -> FastAPI:
    """The shipped manifests' gateway; for a module with a ``CATALOGUE`` of its own, a
    gateway with only those tools (``catalogue_app``)."""
    if getattr(request.module, "CATALOGUE", None) is not None:
        return catalogue_app(backends, shop_url, embedder)
    return create_app(settings_for(backends, shop_url), embedder=embedder)


@pytest.fixture(scope="module")
async def gateway(request: pytest.FixtureRequest, app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    catalogue = getattr(request.module, "CATALOGUE", None)
    async with registered(app, catalogue or ()) as client:
        yield client


_DATA = Path(__file__).resolve().parents[2] / "data"  # the request sets (``tests/data``)


def blind_set(name: str) -> list[dict[str, Any]]:
    """The manifests of a request set under ``tests/data`` (written blind to the router):
    a module's ``CATALOGUE``."""
    folder = _DATA / name / "manifests"
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))]


def manifest_of(folder: str, tool_id: str) -> dict[str, Any]:
    """One tool's manifest of a request set under ``tests/data``."""
    path = _DATA / folder / "manifests" / f"{tool_id}.json"
    found: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return found


def schema_of(folder: str, tool_id: str) -> dict[str, Any]:
    """One tool's input schema of a request set under ``tests/data``."""
    schema: dict[str, Any] = manifest_of(folder, tool_id)["input_schema"]
    return schema


def manifest(
    tool_id: str,
    method: str,
    description: str,
    properties: dict[str, Any],
    required: list[str] | None = None,
    *,
    name: str = "",
) -> dict[str, Any]:
    """A public tool's manifest for a module's ``CATALOGUE`` (every property required
    unless ``required`` says otherwise)."""
    return {
        "tool_id": tool_id,
        "name": name or tool_id.replace("_", " "),
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties) if required is None else required,
        },
        "endpoint": {"type": "http", "method": method, "url": f"http://127.0.0.1:9/{tool_id}"},
        "permission": "public",
    }


def catalogue_app(backends: Backends, shop_url: str, embedder: Embedder) -> FastAPI:
    """A gateway with no tools of its own, on emptied backends: a module's catalogue."""
    reset_state(backends)
    settings = settings_for(backends, shop_url)
    settings.tool_auto_discovery = False  # only the tools the module registers
    return create_app(settings, embedder=embedder)


@asynccontextmanager
async def registered(
    app: FastAPI, manifests: Iterable[dict[str, Any]]
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of ``app`` once each of ``manifests`` is registered through the API."""
    async with app_client(app) as client:
        for manifest in manifests:
            response = await client.post("/tools/register", json=manifest, headers=ADMIN)
            assert response.status_code in (200, 201), response.text
        yield client


async def dry_run(
    client: httpx.AsyncClient, query: str, user_id: str, session: str | None = None
) -> httpx.Response:
    """``POST /run`` with ``dry_run`` for a user with no roles (in ``session``, if given).
    A dry run executes nothing, so it leaves nothing in the session."""
    body: dict[str, Any] = {"user_query": query, "user_context": {"user_id": user_id}}
    if session is not None:
        body["session_id"] = session
    return await client.post("/run", json={**body, "dry_run": True})


def best_tool(body: dict[str, Any]) -> str | None:
    """The tool a dry run found best: the one it routed to, or, when the request gave that
    tool too little to run at a weak confidence (``ROUTE_UNFILLED_THRESHOLD``), the closest
    one its ``no_matching_tool`` names."""
    if body.get("tool_id"):
        return str(body["tool_id"])
    named = re.search(r"The closest, (\w+) \(", str(body.get("message") or ""))
    return named[1] if named else None


def object_schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """An input schema of ``properties`` (none required unless ``required`` says so)."""
    return {"type": "object", "properties": properties, "required": required or []}


def extracted(
    query: str, schema: dict[str, Any], today: date = date(2026, 12, 7)
) -> dict[str, Any]:
    """The arguments the extractor reads from ``query`` for ``schema`` on ``today`` (a
    Monday by default, as the sets written on 2026-12-05 are read), the dictionary loaded."""
    dictionary()
    return ArgumentExtractor(lambda: today).extract(query, schema).arguments
