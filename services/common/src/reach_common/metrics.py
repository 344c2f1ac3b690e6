"""Prometheus metrics every service shares: one registry per app, RED per route, ``/metrics``.

Each app built by ``service.build_app`` owns a :class:`Metrics`: its own
``CollectorRegistry`` (several apps live in one test process, so nothing goes
to prometheus-client's global registry), the HTTP metrics the
:class:`MetricsMiddleware` records, and each service's domain metrics (a
*family*: ``gateway.metrics.GatewayMetrics`` and the like), created on the same
registry.

Domain code increments its family through one-line hooks (``gateway.metrics``,
``agent.metrics``, ``retriever.metrics``) that find the app's metrics in a
context variable, the way OpenTelemetry finds the current span: the middleware
sets it for each request, and the lifespan for the tasks it starts (queue
worker, sweepers). Code running outside any app (a CLI, a unit test of a
domain class) records nothing.

Labels stay bounded: the route label is the route's template
(``/tools/{tool_id}/invoke``), never the raw path; a request no route matched
is ``unmatched``; an unknown HTTP method is ``other``.

``GET /metrics`` answers the exposition format. Who may scrape it is
:class:`MetricsAccess`'s rule (docs/metrics.md).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from redis.exceptions import RedisError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reach_common.auth.errors import InsufficientPermission, InvalidCredential, Unauthenticated

UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# Seconds: from a cached route (about a millisecond) to a slow tool or a model turn.
# The classic text format: every name here fits it, and every Prometheus 2.x reads it.
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Family(Protocol):
    """A service's domain metrics, created on an app's registry."""

    def __init__(self, registry: CollectorRegistry) -> None: ...


F = TypeVar("F", bound=Family)


class Metrics:
    """One app's metrics: its registry, the HTTP metrics, and its domain families."""

    def __init__(self, access: MetricsAccess) -> None:
        # No `<counter>_created` sample beside every counter series: Prometheus would
        # store each as a series of its own. (A process-wide switch of prometheus-client;
        # every Reach app wants it off.)
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.access = access
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "reach_http_requests_total",
            "HTTP requests answered, by route template, method and status code.",
            ["route", "method", "status"],
            registry=r,
        )
        self.duration = Histogram(
            "reach_http_request_duration_seconds",
            "Time to answer an HTTP request (a streamed answer: until its last byte).",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.in_progress = Gauge(
            "reach_http_requests_in_progress", "HTTP requests being answered now.", registry=r
        )
        self.unhandled = Counter(
            "reach_http_unhandled_errors_total",
            "Requests that ended in an unexpected exception (a 500), by exception type.",
            ["error"],
            registry=r,
        )
        self.redis_errors = Counter(
            "reach_redis_errors_total",
            "Requests that failed on a Redis error (connection lost, timeout, server error).",
            registry=r,
        )
        self.db_pool = Gauge(
            "reach_db_pool_connections",
            "Postgres connections of this process's pool: checked out (in use) or idle.",
            ["state"],
            registry=r,
        )
        self._families: dict[type[Any], Any] = {}
        self._children: dict[tuple[str, str, str], tuple[Any, Any]] = {}

    def children(self, route: str, method: str, status: str) -> tuple[Any, Any]:
        """The request counter and duration histogram of one label set, looked up once
        (``labels()`` validates and locks on every call: a third of the middleware's cost)."""
        key = (route, method, status)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = (
                self.requests.labels(route, method, status),
                self.duration.labels(route, method),
            )
        return found

    def family(self, cls: type[F]) -> F:
        """This app's instance of a domain family, created on first use."""
        found = self._families.get(cls)
        if found is None:
            found = self._families[cls] = cls(self.registry)
        return found

    async def render(self, state: Any) -> bytes:
        """The exposition text, gauges read now (pool, and each family's ``refresh``)."""
        engine = getattr(state, "engine", None)
        if engine is not None:
            pool = engine.sync_engine.pool
            self.db_pool.labels("checked_out").set(getattr(pool, "checkedout", lambda: 0)())
            self.db_pool.labels("idle").set(getattr(pool, "checkedin", lambda: 0)())
        for family in list(self._families.values()):
            refresh = getattr(family, "refresh", None)
            if refresh is not None:
                await refresh(state)
        return generate_latest(self.registry)


_current: ContextVar[Metrics | None] = ContextVar("reach_metrics", default=None)


def family(cls: type[F]) -> F | None:
    """The current app's ``cls`` family; None outside an app (then hooks record nothing)."""
    metrics = _current.get()
    return None if metrics is None else metrics.family(cls)


def route_label(scope: Scope) -> str:
    """The template of the route that answered (``/sessions/{session_id}``)."""
    path = getattr(scope.get("route"), "path", None)
    return path if isinstance(path, str) and path else UNMATCHED


class MetricsMiddleware:
    """Pure ASGI: counts and times every HTTP request by route template.

    It sits just inside ``UnhandledErrorMiddleware``, so an exception passes
    through it (counted as a 500, and as a Redis error when it is one) before
    that middleware turns it into the JSON 500.
    """

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        metrics = self.metrics
        token = _current.set(metrics)
        status = "500"

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = str(message["status"])
            await send(message)

        started = time.perf_counter()
        metrics.in_progress.inc()
        try:
            await self.app(scope, receive, send_with_status)
        except Exception as exc:
            status = "500"
            metrics.unhandled.labels(type(exc).__name__).inc()
            if isinstance(exc, RedisError):
                metrics.redis_errors.inc()
            raise
        finally:
            elapsed = time.perf_counter() - started
            metrics.in_progress.dec()
            method = scope.get("method", "")
            method = method if method in METHODS else "other"
            route = route_label(scope)
            counter, histogram = metrics.children(route, method, status)
            counter.inc()
            histogram.observe(elapsed)
            _current.reset(token)


def bind_lifespan(
    lifespan: Callable[[FastAPI], contextlib.AbstractAsyncContextManager[Any]],
) -> Callable[[FastAPI], contextlib.AbstractAsyncContextManager[Any]]:
    """``lifespan`` with the app's metrics current, so the tasks it starts record too."""

    @contextlib.asynccontextmanager
    async def bound(app: FastAPI) -> AsyncIterator[Any]:
        token = _current.set(app.state.metrics)
        try:
            async with lifespan(app) as state:
                yield state
        finally:
            with contextlib.suppress(ValueError):  # exited in another context: nothing to undo
                _current.reset(token)

    return bound


class MetricsAccess:
    """Who may scrape ``/metrics``.

    Open to anyone only in permissive mode with neither ``METRICS_TOKEN`` nor
    ``METRICS_ALLOW_FROM`` set. Otherwise (and always in strict mode) a scrape
    must come from an address in ``METRICS_ALLOW_FROM`` or carry
    ``Authorization: Bearer <METRICS_TOKEN>``; strict mode with neither set
    refuses every scrape.
    """

    def __init__(self, *, strict: bool, token: str | None, allow_from: Sequence[str] = ()) -> None:
        self.token = token.encode() if token else None
        self.networks = [ipaddress.ip_network(a.strip(), strict=False) for a in allow_from]
        self.open = not strict and self.token is None and not self.networks

    def check(self, authorization: str | None, client_host: str | None) -> None:
        """Return if the scrape may go ahead, else raise the 401 or 403 that says why."""
        if self.open or self._allowed_address(client_host):
            return
        if self.token is None:
            raise InsufficientPermission(
                "/metrics answers only the addresses in METRICS_ALLOW_FROM."
            )
        scheme, _, value = (authorization or "").partition(" ")
        if not value:
            raise Unauthenticated("/metrics needs `Authorization: Bearer <METRICS_TOKEN>`.")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            value.strip().encode(), self.token
        ):
            raise InvalidCredential("That is not this service's metrics token.")

    def _allowed_address(self, host: str | None) -> bool:
        if not self.networks or not host:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)


router = APIRouter(tags=["metrics"])


@router.get(
    "/metrics",
    response_class=Response,
    # Not an API operation: a scraper's endpoint, kept out of the OpenAPI document (so an
    # import of a service's document does not make it a tool).
    include_in_schema=False,
    responses={
        200: {"content": {CONTENT_TYPE: {}}, "description": "Prometheus text format."},
        401: {"description": "`unauthenticated` or `invalid_credential`: the metrics token."},
        403: {"description": "`insufficient_permission`: not from METRICS_ALLOW_FROM."},
    },
)
async def metrics_endpoint(request: Request) -> Response:
    """This process's metrics in the Prometheus text format (docs/metrics.md lists them).

    Public only in permissive mode with no METRICS_TOKEN or METRICS_ALLOW_FROM set;
    otherwise send `Authorization: Bearer <METRICS_TOKEN>` or scrape from an allowed
    address.
    """
    metrics: Metrics = request.app.state.metrics
    client = request.client.host if request.client else None
    metrics.access.check(request.headers.get("authorization"), client)
    return Response(await metrics.render(request.state), media_type=CONTENT_TYPE)
