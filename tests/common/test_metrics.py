"""The shared metrics: route-template labels, bounded cardinality, and who may scrape."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import ConnectionError as RedisConnectionError

from reach_common.errors import ReachError
from reach_common.metrics import Metrics, MetricsAccess, MetricsMiddleware, family
from reach_common.middleware import UnhandledErrorMiddleware
from reach_common.service import build_app
from reach_common.settings import CommonSettings
from tests.conftest import app_client, assert_error

TOKEN = "scrape-token-7f3a9c1e5b"


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """``labels → value`` of every sample called ``name`` in an exposition text."""
    found: dict[tuple[tuple[str, str], ...], float] = {}
    for metric in text_string_to_metric_families(text):
        for sample in metric.samples:
            if sample.name == name:
                found[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def small_app() -> tuple[FastAPI, Metrics]:
    """An app with only the metrics middleware (inside the 500 boundary, as in build_app)."""
    metrics = Metrics(MetricsAccess(strict=False, token=None))
    app = FastAPI()

    @app.get("/items/{item_id}")
    async def item(item_id: str) -> dict[str, str]:
        return {"id": item_id}

    @app.post("/items")
    async def create() -> dict[str, str]:
        return {"ok": "yes"}

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("unexpected")

    @app.get("/redis-down")
    async def redis_down() -> None:
        raise RedisConnectionError("Connection refused")

    @app.get("/family")
    async def family_seen() -> dict[str, bool]:
        return {"current": family(Counting) is not None}

    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(UnhandledErrorMiddleware)
    return app, metrics


class Counting:
    def __init__(self, registry: Any) -> None:
        self.registry = registry


def render(metrics: Metrics) -> str:
    from prometheus_client import generate_latest

    return generate_latest(metrics.registry).decode()


async def call(app: FastAPI, method: str, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        return await client.request(method, path)


async def test_a_thousand_ids_make_one_series_labelled_by_the_route_template() -> None:
    app, metrics = small_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        for i in range(1000):
            assert (await client.get(f"/items/SKU{i:07d}")).status_code == 200
        for i in range(50):  # unknown paths: one series too
            assert (await client.get(f"/nothing/here/{i}")).status_code == 404
    text = render(metrics)
    requests = samples(text, "reach_http_requests_total")
    assert requests == {
        (("method", "GET"), ("route", "/items/{item_id}"), ("status", "200")): 1000.0,
        (("method", "GET"), ("route", "unmatched"), ("status", "404")): 50.0,
    }
    counts = samples(text, "reach_http_request_duration_seconds_count")
    assert counts[(("method", "GET"), ("route", "/items/{item_id}"))] == 1000.0
    assert "SKU0000999" not in text
    assert "/nothing/here" not in text


async def test_methods_statuses_and_exceptions_are_labelled_boundedly() -> None:
    app, metrics = small_app()
    assert (await call(app, "POST", "/items")).status_code == 200
    assert (await call(app, "BREW", "/items")).status_code == 405
    assert (await call(app, "GET", "/boom")).status_code == 500
    assert (await call(app, "GET", "/redis-down")).status_code == 503  # dependency_unavailable
    text = render(metrics)
    requests = samples(text, "reach_http_requests_total")
    assert requests[(("method", "POST"), ("route", "/items"), ("status", "200"))] == 1.0
    # An invented method is "other", and the 405 still names the route it was sent to.
    assert requests[(("method", "other"), ("route", "/items"), ("status", "405"))] == 1.0
    assert requests[(("method", "GET"), ("route", "/boom"), ("status", "500"))] == 1.0
    assert samples(text, "reach_http_unhandled_errors_total") == {
        (("error", "RuntimeError"),): 1.0,
        (("error", "ConnectionError"),): 1.0,
    }
    assert samples(text, "reach_redis_errors_total") == {(): 1.0}
    assert samples(text, "reach_http_requests_in_progress") == {(): 0.0}


async def test_hooks_find_their_app_during_a_request_and_nothing_outside() -> None:
    app, metrics = small_app()
    assert (await call(app, "GET", "/family")).json() == {"current": True}
    assert family(Counting) is None  # outside any request: hooks record nothing
    assert metrics.family(Counting).registry is metrics.registry


def test_access_rule() -> None:
    open_access = MetricsAccess(strict=False, token=None)
    open_access.check(None, "203.0.113.9")
    strict = MetricsAccess(strict=True, token=None)
    with pytest.raises(ReachError) as refused:
        strict.check(None, "127.0.0.1")
    assert refused.value.reason == "insufficient_permission"
    tokened = MetricsAccess(strict=False, token=TOKEN, allow_from=["10.0.0.0/8"])
    tokened.check(f"Bearer {TOKEN}", "203.0.113.9")
    tokened.check(None, "10.1.2.3")  # an allowed address needs no token
    for header, reason in (
        (None, "unauthenticated"),
        ("Bearer wrong", "invalid_credential"),
        (f"Basic {TOKEN}", "invalid_credential"),
        (f"Bearer {TOKEN}x", "invalid_credential"),
    ):
        with pytest.raises(ReachError) as caught:
            tokened.check(header, "203.0.113.9")
        assert caught.value.reason == reason, header
    with pytest.raises(ReachError):  # no address (a unix socket) is not an allowed one
        tokened.check(None, None)


def shell(env: dict[str, Any], **overrides: Any) -> FastAPI:
    from contextlib import asynccontextmanager

    from reach_common.service import service_resources

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        async with service_resources(app) as resources:
            yield resources.state()

    settings = CommonSettings(**{**env, **overrides})
    return build_app(settings, title="t", description="d", lifespan=lifespan)


async def test_strict_mode_refuses_an_anonymous_scrape_and_never_logs_the_token(
    service_env: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    app = shell(service_env, auth_mode="strict", metrics_token=TOKEN, log_level="DEBUG")
    async with app_client(app) as client:
        anonymous = await client.get("/metrics")
        wrong = await client.get("/metrics", headers={"Authorization": "Bearer guess"})
        claimed = await client.get("/metrics", headers={"X-User-Id": "ops", "X-User-Roles": "ops"})
        scraped = await client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert_error(anonymous, 401, "unauthenticated")
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert_error(wrong, 401, "invalid_credential")
    assert_error(claimed, 401, "unauthenticated")
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert "reach_http_requests_total" in scraped.text
    assert "reach_db_pool_connections" in scraped.text
    # The three refusals are counted by route, status and nothing else.
    refused = samples(scraped.text, "reach_http_requests_total")
    assert refused[(("method", "GET"), ("route", "/metrics"), ("status", "401"))] == 3.0
    out = capsys.readouterr()
    everything = out.out + out.err + caplog.text + scraped.text + anonymous.text + wrong.text
    assert TOKEN not in everything
    assert TOKEN not in repr(app.state.settings)


async def test_strict_mode_without_token_refuses_all_but_allowed_addresses(
    service_env: dict[str, Any],
) -> None:
    closed = shell(service_env, auth_mode="strict")
    async with app_client(closed) as client:
        assert_error(await client.get("/metrics"), 403, "insufficient_permission")
    # httpx's in-process transport calls from 127.0.0.1.
    allowed = shell(service_env, auth_mode="strict", metrics_allow_from="127.0.0.0/8")
    async with app_client(allowed) as client:
        assert (await client.get("/metrics")).status_code == 200


async def test_permissive_mode_is_open_and_each_app_has_its_own_registry(
    service_env: dict[str, Any],
) -> None:
    first, second = shell(service_env), shell(service_env)
    async with app_client(first) as one, app_client(second) as two:
        for _ in range(3):
            assert (await one.get("/healthz")).status_code == 200
        text_one = (await one.get("/metrics")).text
        text_two = (await two.get("/metrics")).text
    health = (("method", "GET"), ("route", "/healthz"), ("status", "200"))
    assert samples(text_one, "reach_http_requests_total")[health] == 3.0
    assert health not in samples(text_two, "reach_http_requests_total")
