"""Every service: health, readiness, OpenAPI, and JSON errors for bad requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from pydantic import BaseModel, Field

from reach_common.errors import NotFound
from reach_common.service import build_app, service_resources
from reach_common.settings import CommonSettings
from tests.conftest import app_client

SERVICES = ["gateway", "agent", "retriever", "shop"]


def service_factory(name: str) -> Callable[..., FastAPI]:
    module = __import__(f"{name}.app", fromlist=["create_app"])
    settings_module = __import__(f"{name}.settings", fromlist=["Settings"])

    def factory(**overrides: Any) -> FastAPI:
        app: FastAPI = module.create_app(settings_module.Settings(**overrides))
        return app

    return factory


@pytest.mark.parametrize("name", SERVICES)
async def test_healthz_readyz_and_docs(name: str, service_env: dict[str, Any]) -> None:
    async with app_client(service_factory(name)(**service_env)) as client:
        health = await client.get("/healthz")
        ready = await client.get("/readyz")
        docs = await client.get("/openapi.json")
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}
    assert docs.status_code == 200
    assert "/healthz" in docs.json()["paths"]


@pytest.mark.parametrize("name", SERVICES)
async def test_readyz_is_503_when_redis_is_down(name: str, service_env: dict[str, Any]) -> None:
    env = {**service_env, "redis_url": "redis://127.0.0.1:1/0"}
    async with app_client(service_factory(name)(**env)) as client:
        ready = await client.get("/readyz")
    assert ready.status_code == 503
    body = ready.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["postgres"] == "ok"
    assert body["checks"]["redis"].startswith("error")


@pytest.mark.parametrize("name", SERVICES)
async def test_unknown_path_and_wrong_method_are_json(
    name: str, service_env: dict[str, Any]
) -> None:
    async with app_client(service_factory(name)(**service_env)) as client:
        missing = await client.get("/no/such/path")
        wrong_method = await client.delete("/healthz")
    assert missing.status_code == 404
    assert missing.json()["reason"] == "not_found"
    assert "/no/such/path" in missing.json()["message"]
    assert wrong_method.status_code == 405
    assert wrong_method.json()["reason"] == "method_not_allowed"
    assert "trace_id" in wrong_method.json()


def test_service_refuses_to_start_without_urls() -> None:
    settings = CommonSettings(database_url=None, redis_url=None)
    with pytest.raises(RuntimeError, match="DATABASE_URL and REDIS_URL"):
        build_app(settings, title="t", description="d", lifespan=service_resources)


class Widget(BaseModel):
    name: str = Field(min_length=1)
    count: int


def probe_app(env: dict[str, Any]) -> FastAPI:
    """A service built from the shared shell with routes that exercise each error path."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        async with service_resources(app) as resources:
            yield resources.state()

    app = build_app(
        CommonSettings(service_name="probe", **env),
        title="probe",
        description="",
        lifespan=lifespan,
    )

    @app.post("/widgets")
    async def create_widget(widget: Widget) -> Widget:
        return widget

    @app.get("/widgets/{name}")
    async def read_widget(name: str) -> Widget:
        raise NotFound(f"No widget named {name!r}.", reason="widget_not_found", name=name)

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret internals: password=hunter2")

    return app


async def test_shared_error_handlers(service_env: dict[str, Any]) -> None:
    async with app_client(probe_app(service_env)) as client:
        malformed = await client.post(
            "/widgets", content=b'{"name": "a", ', headers={"content-type": "application/json"}
        )
        wrong_types = await client.post("/widgets", json={"name": "", "count": "many"})
        domain = await client.get("/widgets/nope")
        ok = await client.post("/widgets", json={"name": "w", "count": 2})
        crash = await client.get("/boom")

    assert malformed.status_code == 400
    assert malformed.json()["reason"] == "malformed_json"
    assert wrong_types.status_code == 422
    body = wrong_types.json()
    assert body["reason"] == "invalid_request"
    assert {e["field"] for e in body["errors"]} == {"name", "count"}
    assert "count" in body["message"]
    assert domain.status_code == 404
    assert domain.json()["reason"] == "widget_not_found"
    assert domain.json()["name"] == "nope"
    assert ok.status_code == 200
    assert len(ok.headers["x-trace-id"]) == 32
    assert crash.status_code == 500
    assert crash.json()["reason"] == "internal_error"
    assert "hunter2" not in crash.text
    assert "Traceback" not in crash.text
