"""The gateway's Prometheus metrics: tool calls, routing, approvals and the audit queue.

The definitions live in :class:`GatewayMetrics`, created on each app's own
registry (``reach_common.metrics``); domain code calls the ``record_*``
functions below, one line each, which do nothing outside an app. Gauges that
describe state (breakers, pending approvals, the audit queue) are read when
Prometheus scrapes, in :meth:`GatewayMetrics.refresh`.

The ``tool`` label is a registered tool id (the registry is admin-controlled,
so it is bounded); a call naming a tool that is not registered is counted as
``unknown``, so callers cannot mint series. No label carries a user id or a
query.

This module imports no gateway domain package: they import it.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from sqlalchemy import text

from reach_common.metrics import LATENCY_BUCKETS, family

UNKNOWN_TOOL = "unknown"
OK = "ok"
BREAKER_STATES = {"closed": 0, "half_open": 1, "open": 2}
CONFIDENCE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_PENDING_APPROVALS = text("SELECT count(*) FROM gateway.approval WHERE state = 'pending'")


class GatewayMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.tool_calls = Counter(
            "reach_gateway_tool_calls_total",
            "Tool calls answered (POST /tools/{id}/invoke and POST /run), by tool and "
            "outcome: `ok`, or the error's reason (rate_limited, tool_timeout, ...).",
            ["tool", "reason"],
            registry=r,
        )
        self.tool_duration = Histogram(
            "reach_gateway_tool_call_duration_seconds",
            "Time from the call's arrival to its answer (auth, limits, execution, retries).",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.tool_retries = Counter(
            "reach_gateway_tool_retries_total",
            "Attempts after the first one, of idempotent tools.",
            ["tool"],
            registry=r,
        )
        self.rate_limited = Counter(
            "reach_gateway_rate_limited_total",
            "Calls refused by a rate limit (the tool's or the caller's).",
            ["tool"],
            registry=r,
        )
        self.breaker_state = Gauge(
            "reach_gateway_breaker_state",
            "Circuit breaker of each registered tool in this replica: 0 closed, "
            "1 half-open, 2 open.",
            ["tool"],
            registry=r,
        )
        self._routing(r)
        self.approvals_pending = Gauge(
            "reach_gateway_approvals_pending",
            "Approval requests waiting for a person's decision.",
            registry=r,
        )
        self.audit_queue = Gauge(
            "reach_gateway_audit_queue_depth",
            "Audit rows recorded and not yet written to Postgres (this replica).",
            registry=r,
        )

    def _routing(self, r: CollectorRegistry) -> None:
        self.route_cache = Counter(
            "reach_gateway_route_cache_lookups_total",
            "Route cache lookups of POST /run: `hit` found a cached route (served only if "
            "it still ranks; see route_decisions), `miss` found none.",
            ["result"],
            registry=r,
        )
        self.route_decisions = Counter(
            "reach_gateway_route_decisions_total",
            "Routing decisions of POST /run, by route_hint (semantic_match, llm_rerank, "
            "route_cache, context).",
            ["route_hint"],
            registry=r,
        )
        self.route_failures = Counter(
            "reach_gateway_route_failures_total",
            "POST /run requests the router could not decide, by reason.",
            ["reason"],
            registry=r,
        )
        self.route_confidence = Histogram(
            "reach_gateway_route_confidence",
            "Confidence of the chosen tool (0 to 1), by route_hint.",
            ["route_hint"],
            buckets=CONFIDENCE_BUCKETS,
            registry=r,
        )

    async def refresh(self, state: Any) -> None:
        """Read the gauges that describe state, at scrape time."""
        runtime = getattr(state, "runtime", None)
        if runtime is None:  # not started yet
            return
        self.breaker_state.clear()  # removed tools lose their series
        for tool_id in list(runtime.registry.tools):
            state_name = runtime.executor.breakers.state(tool_id)
            self.breaker_state.labels(tool_id).set(BREAKER_STATES.get(state_name, 0))
        self.audit_queue.set(runtime.audit.queue_depth)
        async with state.engine.connect() as conn:
            self.approvals_pending.set((await conn.execute(_PENDING_APPROVALS)).scalar_one())


def _metrics() -> GatewayMetrics | None:
    return family(GatewayMetrics)


def record_tool_call(
    tool_id: str, registered: bool, reason: str | None, started: float, attempts: int
) -> None:
    """One answered call: ``reason`` None means it succeeded (or was accepted)."""
    metrics = _metrics()
    if metrics is None:
        return
    tool = tool_id if registered else UNKNOWN_TOOL
    metrics.tool_calls.labels(tool, reason or OK).inc()
    metrics.tool_duration.labels(tool).observe(time.perf_counter() - started)
    if attempts > 1:
        metrics.tool_retries.labels(tool).inc(attempts - 1)
    if reason == "rate_limited":
        metrics.rate_limited.labels(tool).inc()


def record_route_cache(hit: bool) -> None:
    metrics = _metrics()
    if metrics is not None:
        metrics.route_cache.labels("hit" if hit else "miss").inc()


def record_route(route_hint: str, confidence: float) -> None:
    metrics = _metrics()
    if metrics is not None:
        metrics.route_decisions.labels(route_hint).inc()
        metrics.route_confidence.labels(route_hint).observe(confidence)


def record_route_failure(reason: str) -> None:
    metrics = _metrics()
    if metrics is not None:
        metrics.route_failures.labels(reason).inc()
