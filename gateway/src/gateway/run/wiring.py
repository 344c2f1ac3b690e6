"""Builds the router and ``POST /run``'s service from the gateway's runtime."""

from __future__ import annotations

from redis.asyncio import Redis

from gateway.routing.cache import RouteCache
from gateway.routing.context import SessionContext
from gateway.routing.service import Router, RouterSettings
from gateway.routing.settings import RoutingSettings
from gateway.run.service import RunService
from gateway.runtime import GatewayRuntime
from reach_common.llm.factory import create_provider
from reach_common.settings import LLMSettings


def build_run_service(
    settings: RoutingSettings, llm: LLMSettings, runtime: GatewayRuntime, redis: Redis
) -> RunService:
    router = Router(
        runtime.registry,
        runtime.embedder,
        RouteCache(
            redis, threshold=settings.route_cache_threshold, ttl_s=settings.route_cache_ttl_s
        ),
        provider=create_provider(llm),
        settings=RouterSettings(
            top_k=settings.route_top_k,
            threshold=settings.route_threshold,
            alpha=settings.route_alpha,
        ),
    )
    context = SessionContext(
        redis, max_calls=settings.session_context_calls, ttl_s=settings.session_context_ttl_s
    )
    return RunService(router=router, invoke=runtime.invoke, auth=runtime.auth, context=context)
