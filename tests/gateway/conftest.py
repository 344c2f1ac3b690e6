"""Gateway fixtures: settings for the test backends, a shared embedder, app factories,
a loopback upstream and manifest builders."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.embeddings import Embedder
from tests.conftest import REPO_ROOT, Backends
from tests.gateway.upstream import Upstream

MANIFESTS = REPO_ROOT / "manifests"
SAMPLE_TOOLS = "tests.gateway.sample_tools"
# Registry writes need a registry admin; permissive mode believes a claimed one.
ADMIN = {"X-User-Id": "test-admin", "X-User-Roles": "admin"}


def shipped(tool_id: str) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((MANIFESTS / f"{tool_id}.json").read_text("utf-8"))
    return manifest


def original(name: str) -> dict[str, Any]:
    path = MANIFESTS / "examples" / f"original_{name}.json"
    manifest: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return manifest


def http_tool(tool_id: str, url: str, **overrides: Any) -> dict[str, Any]:
    """A small, valid http manifest; ``overrides`` replace top-level fields."""
    manifest: dict[str, Any] = {
        "tool_id": tool_id,
        "name": tool_id.replace("_", " "),
        "description": f"Test tool {tool_id}: calls a loopback upstream.",
        "input_schema": {"type": "object", "properties": {}},
        "endpoint": {"type": "http", "method": "GET", "url": url, "auth": {"type": "none"}},
        "permission": "public",
    }
    manifest.update(copy.deepcopy(overrides))
    return manifest


def python_tool(tool_id: str, function: str, **overrides: Any) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "tool_id": tool_id,
        "name": tool_id.replace("_", " "),
        "description": f"Test tool {tool_id}: runs {function}.",
        "input_schema": {"type": "object", "properties": {}},
        "endpoint": {"type": "python", "function": f"{SAMPLE_TOOLS}:{function}"},
        "permission": "public",
    }
    manifest.update(copy.deepcopy(overrides))
    return manifest


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """One model for every gateway app of the session (loading it takes a moment), with
    int8 products as the gateway serves by default (``EMBEDDER_INT8``)."""
    return Embedder(int8=True, threads=1)


@pytest.fixture
def gateway_env(clean_state: Backends) -> dict[str, Any]:
    return {
        "database_url": clean_state.database_url,
        "redis_url": clean_state.redis_url,
        "log_level": "WARNING",
        "python_tool_packages": [SAMPLE_TOOLS, "gateway.pytools"],
        "caller_rate_limit": None,
        "route_rate_limit": None,
        "audit_flush_ms": 20,
        "gc_freeze": False,
    }


GatewayFactory = Callable[..., FastAPI]


@pytest.fixture
def make_gateway(gateway_env: dict[str, Any], embedder: Embedder) -> GatewayFactory:
    def factory(**overrides: Any) -> FastAPI:
        return create_app(Settings(**{**gateway_env, **overrides}), embedder=embedder)

    return factory


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    server = await Upstream().start()
    try:
        yield server
    finally:
        await server.stop()


def write_manifest(folder: Path, manifest: dict[str, Any], name: str | None = None) -> Path:
    path = folder / (name or f"{manifest['tool_id']}.json")
    path.write_text(json.dumps(manifest), "utf-8")
    return path


async def task_finished(client: httpx.AsyncClient, task_id: str) -> dict[str, Any]:
    """A queued task's record once it succeeded or failed (bounded polling, ~10 s)."""
    for _ in range(500):
        body: dict[str, Any] = (await client.get(f"/tasks/{task_id}", headers=ADMIN)).json()
        if body.get("status") in ("succeeded", "failed"):
            return body
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} did not finish")
