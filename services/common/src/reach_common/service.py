"""What every service's ``create_app`` shares: resources, app shell and a runner.

``service_resources`` is the only place engines, Redis clients and HTTP clients
are created, inside the app's lifespan, never at import time. Each service's
``app.py`` adds its own state on top and yields it to FastAPI, which exposes it
as ``request.state``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import structlog
import uvicorn
from fastapi import FastAPI
from redis.asyncio import BlockingConnectionPool, Redis
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from starlette.middleware import Middleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from reach_common import health
from reach_common.auth.authenticator import Authenticator
from reach_common.db import create_engine, create_sessionmaker
from reach_common.embedded import ensure_urls
from reach_common.error_docs import document_errors
from reach_common.errors import install_error_handlers
from reach_common.logs import configure_logging
from reach_common.metrics import Metrics, MetricsAccess, MetricsMiddleware, bind_lifespan
from reach_common.metrics import router as metrics_router
from reach_common.middleware import (
    BodyLimitMiddleware,
    TraceIdHeaderMiddleware,
    TrustedHostMiddleware,
    UnhandledErrorMiddleware,
)
from reach_common.settings import CommonSettings
from reach_common.telemetry import Telemetry, setup_telemetry

log = structlog.get_logger(__name__)


@dataclass
class ServiceResources:
    """Connections a service holds for its lifetime."""

    settings: CommonSettings
    telemetry: Telemetry
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    redis: Redis
    http: httpx.AsyncClient
    authenticator: Authenticator

    def state(self) -> dict[str, Any]:
        """The lifespan state FastAPI hands to every request as ``request.state``."""
        return {
            "settings": self.settings,
            "telemetry": self.telemetry,
            "engine": self.engine,
            "sessionmaker": self.sessionmaker,
            "redis": self.redis,
            "http": self.http,
            "authenticator": self.authenticator,
        }


@contextlib.asynccontextmanager
async def service_resources(app: FastAPI) -> AsyncIterator[ServiceResources]:
    """Open Postgres, Redis and an outbound HTTP client; close them and flush spans on exit."""
    settings: CommonSettings = app.state.settings
    telemetry: Telemetry = app.state.telemetry
    assert settings.database_url  # build_app refuses settings without URLs
    assert settings.redis_url
    engine = create_engine(settings.database_url, pool_size=settings.database_pool_size)
    telemetry.instrument_engine(engine)
    # A blocking pool waits for a free connection under bursts instead of
    # failing with MaxConnectionsError, the default pool's behaviour.
    redis = Redis(
        connection_pool=BlockingConnectionPool.from_url(
            settings.redis_url, decode_responses=True, max_connections=64, timeout=5
        )
    )
    telemetry.instrument_redis(redis)
    http = httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0))
    telemetry.instrument_httpx(http)
    sessionmaker = create_sessionmaker(engine)
    authenticator = Authenticator.from_settings(settings, sessionmaker)
    if not authenticator.strict:
        log.warning(
            "auth_mode_permissive",
            note="claimed identities (user_context, X-User-Id/X-User-Roles) are trusted; "
            "set AUTH_MODE=strict anywhere others can reach this service",
        )
    try:
        yield ServiceResources(
            settings, telemetry, engine, sessionmaker, redis, http, authenticator
        )
    finally:
        await http.aclose()
        await redis.aclose()
        await engine.dispose()
        telemetry.shutdown()


def build_app(
    settings: CommonSettings,
    *,
    title: str,
    description: str,
    lifespan: Callable[[FastAPI], contextlib.AbstractAsyncContextManager[Any]],
    innermost: Sequence[Middleware] = (),
) -> FastAPI:
    """The FastAPI shell every service shares: errors, health, tracing. ``innermost``:
    ASGI layers between the shared middleware and the routes (a fast path that must
    still be traced, metered and limited like a route)."""
    if not settings.database_url or not settings.redis_url:
        raise RuntimeError(
            "DATABASE_URL and REDIS_URL must be set; run the service with "
            "`python -m <service>` to use the embedded servers."
        )
    configure_logging(settings.service_name, settings.log_level, settings.log_format)
    app = FastAPI(
        title=title,
        description=description,
        version="0.1.0",
        lifespan=bind_lifespan(lifespan),
        # FastAPI's own OpenTelemetry layer stays off: the server span is ours
        # (reach_common.server_span), bound to this app's provider, and a span per
        # dependency and endpoint would double what each request records.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    app.state.metrics = Metrics(
        MetricsAccess(
            strict=settings.auth_mode == "strict",
            token=settings.metrics_token.get_secret_value() if settings.metrics_token else None,
            allow_from=settings.metrics_allow_from,
        )
    )
    # Tracing middleware must be in place before the app starts, so the
    # provider is built here; connections wait for the lifespan.
    app.state.telemetry = setup_telemetry(
        settings.service_name,
        database_url=settings.database_url,
        span_store=settings.otel_span_store,
        otlp_endpoint=settings.otel_exporter_otlp_endpoint,
    )
    app.user_middleware.extend(innermost)  # add_middleware puts each new one outside these
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)  # inside the 500 boundary
    app.add_middleware(UnhandledErrorMiddleware)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_hosts)
    if settings.trusted_proxies:
        # The client address behind a proxy, from X-Forwarded-For: believed only when the
        # connection comes from one of TRUSTED_PROXIES (uvicorn itself is told to trust none).
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.trusted_proxies)
    app.add_middleware(TraceIdHeaderMiddleware)  # the 500 gets it too
    app.state.telemetry.instrument_app(app)  # outermost: every middleware runs in its span
    install_error_handlers(app)
    document_errors(app)  # every error answer in /openapi.json, with its schema
    app.include_router(health.router)
    app.include_router(metrics_router)
    return app


def run_service(settings: CommonSettings, factory: str) -> None:
    """Run one service alone: join or start the embedded servers if no URLs are given."""
    configure_logging(settings.service_name, settings.log_level, settings.log_format)
    servers = ensure_urls(settings)
    try:
        uvicorn.run(
            factory,
            factory=True,
            host=settings.host,
            port=settings.port,
            log_config=None,
            access_log=False,
            # build_app applies TRUSTED_PROXIES; uvicorn's own default trusts loopback.
            proxy_headers=False,
        )
    finally:
        if servers is not None:
            servers.stop()
