"""The gateway's ``create_app`` factory and lifespan."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from limits import parse
from redis.asyncio import BlockingConnectionPool, Redis

from gateway.audit.endpoints import router as audit_router
from gateway.audit.writer import AuditWriter
from gateway.auth.egress import EgressPolicy
from gateway.auth.service import AuthService
from gateway.executor.breaker import Breakers
from gateway.executor.credentials import OutboundCredentials
from gateway.executor.endpoints import router as tasks_router
from gateway.executor.http import HttpExecutor
from gateway.executor.python import PythonExecutor
from gateway.executor.resolver import HostResolver
from gateway.executor.secrets import ToolSecrets
from gateway.executor.service import Executor
from gateway.executor.tasks import TaskStore
from gateway.executor.transport import LeanHttpClient
from gateway.executor.worker import TaskWorker
from gateway.invoke.endpoints import router as invoke_router
from gateway.invoke.service import InvokeService
from gateway.ratelimit.service import RateLimiter
from gateway.registry.cache import RegistryCache
from gateway.registry.discovery import ManifestDiscovery
from gateway.registry.endpoints import router as registry_router
from gateway.registry.manifest import ManifestDefaults
from gateway.registry.service import ManifestCompiler, RegistryService
from gateway.registry.sync import RegistrySync
from gateway.run.endpoints import router as run_router
from gateway.run.wiring import build_run_service
from gateway.runtime import GatewayRuntime
from gateway.settings import Settings
from gateway.traces.endpoints import router as traces_router
from gateway.upstreams.endpoints import router as upstreams_router
from gateway.upstreams.urls import UpstreamUrls
from reach_common.embeddings import Embedder
from reach_common.service import ServiceResources, build_app, service_resources


def _redis(settings: Settings, resources: ServiceResources) -> Redis:
    # The gateway's own client: a blocking pool makes a burst of calls wait for a
    # connection instead of failing with "Too many connections" (the default pool).
    assert settings.redis_url
    pool = BlockingConnectionPool.from_url(
        settings.redis_url,
        decode_responses=True,
        max_connections=settings.redis_max_connections,
        timeout=5,
    )
    # Not instrumented: a span per rate-limit check would cost more than it tells;
    # the gateway.rate_limit span times it.
    return Redis.from_pool(pool)


async def _build_runtime(
    app: FastAPI, resources: ServiceResources, stack: AsyncExitStack
) -> GatewayRuntime:
    settings: Settings = app.state.settings
    embedder: Embedder = app.state.embedder or await asyncio.to_thread(
        Embedder, threads=settings.embedder_threads
    )
    tracer = resources.telemetry.tracer("gateway")
    strict = settings.auth_mode == "strict"
    redis = _redis(settings, resources)
    stack.push_async_callback(redis.aclose)
    egress = EgressPolicy(enforce=strict, allowlist=settings.egress_allowlist)
    urls = UpstreamUrls.from_settings(
        shop_url=settings.shop_url,
        retriever_url=settings.retriever_url,
        agent_url=settings.agent_url,
        extra=settings.upstream_hosts,
    )
    secrets = ToolSecrets(
        environ=os.environ,
        directory=Path(settings.tool_secrets_dir) if settings.tool_secrets_dir else None,
        bindings=settings.tool_secret_hosts,
    )
    compiler = ManifestCompiler(
        defaults=ManifestDefaults(
            timeout_ms=settings.default_timeout_ms,
            max_response_bytes=settings.max_response_bytes,
            breaker_failure_threshold=settings.breaker_failure_threshold,
            breaker_reset_timeout_ms=settings.breaker_reset_timeout_ms,
            python_packages=tuple(settings.python_tool_packages),
            max_argument_chars=settings.max_argument_chars,
            task_stream_prefix=settings.task_stream_prefix,
        ),
        strict=strict,
        egress=egress,
        secrets=secrets,
        resolve_url=urls,
    )
    registry = RegistryCache(resources.sessionmaker, compiler)
    sync = RegistrySync(redis, settings.registry_channel, registry, settings.registry_poll_s)
    registry_service = RegistryService(
        sessionmaker=resources.sessionmaker,
        cache=registry,
        embedder=embedder,
        publish=sync.publish,
        compiler=compiler,
    )
    await registry.refresh(force=True)
    discovery = None
    if settings.tool_auto_discovery:
        discovery = ManifestDiscovery(Path(settings.manifests_dir), registry_service)
        await discovery.load_all()
        discovery.start()
        stack.push_async_callback(discovery.stop)
    sync.start()
    stack.push_async_callback(sync.stop)

    tool_http = LeanHttpClient()
    stack.push_async_callback(tool_http.aclose)
    executor = Executor(
        http=HttpExecutor(
            client=tool_http,
            # Token endpoints are called rarely: the shared, instrumented httpx client.
            credentials=OutboundCredentials(redis=redis, http=resources.http, secrets=secrets),
            resolver=HostResolver(egress),
            resolve_url=urls,
            tracer=tracer,
        ),
        python=PythonExecutor(settings.python_tool_packages),
        breakers=Breakers(),
        tracer=tracer,
    )
    audit = AuditWriter(
        resources.engine,
        batch_size=settings.audit_batch_size,
        queue_size=settings.audit_queue_size,
        flush_ms=settings.audit_flush_ms,
    )
    audit.start()
    stack.push_async_callback(audit.stop)  # runs after the worker stops: its rows get written
    auth = AuthService(
        authenticator=resources.authenticator,
        registry_admin_roles=settings.registry_admin_roles,
        ops_roles=settings.ops_roles,
        anonymous_registry_writes=settings.allow_anonymous_registry_writes,
    )
    limiter = RateLimiter(
        redis, parse(settings.caller_rate_limit) if settings.caller_rate_limit else None
    )
    tasks = TaskStore(redis, ttl_s=settings.task_ttl_s)
    worker = None
    if settings.task_worker:
        worker = TaskWorker(
            redis=redis,
            registry=registry,
            executor=executor,
            tasks=tasks,
            audit=audit,
            tracer=tracer,
            default_stream=settings.task_stream,
        )
        worker.start()
        stack.push_async_callback(worker.stop)
    invoke = InvokeService(
        registry=registry,
        auth=auth,
        limiter=limiter,
        executor=executor,
        tasks=tasks,
        audit=audit,
        tracer=tracer,
        default_stream=settings.task_stream,
    )
    return GatewayRuntime(
        settings=settings,
        redis=redis,
        embedder=embedder,
        registry=registry,
        registry_service=registry_service,
        registry_sync=sync,
        discovery=discovery,
        auth=auth,
        executor=executor,
        limiter=limiter,
        tasks=tasks,
        worker=worker,
        audit=audit,
        invoke=invoke,
    )


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    async with service_resources(app) as resources, AsyncExitStack() as stack:
        runtime = await _build_runtime(app, resources, stack)
        app.state.runtime = runtime  # for code outside requests (tests, the router's index)
        if app.state.settings.gc_freeze:
            # Everything loaded so far (libraries, the model, the registry) lives as long
            # as the process: keep it out of the cyclic collector, whose full passes over
            # it otherwise pause every request in flight.
            gc.collect()
            gc.freeze()
        # The gateway's own, uninstrumented client: gateway.route times the cache.
        run = build_run_service(runtime.settings, runtime.settings, runtime, runtime.redis)
        app.state.router = run.router  # benchmarks and tests read the index
        await run.router.start()
        stack.push_async_callback(run.router.stop)
        yield {**resources.state(), "runtime": runtime, "registry": runtime.registry, "run": run}


def create_app(settings: Settings | None = None, *, embedder: Embedder | None = None) -> FastAPI:
    """The gateway app. ``embedder``: share one model between apps (tests); else one is
    loaded in the lifespan."""
    settings = settings or Settings()
    app = build_app(
        settings,
        title="Reach gateway",
        description="Registry, routing, auth and execution of tools for AI agents.",
        lifespan=lifespan,
    )
    app.state.embedder = embedder
    app.include_router(registry_router)
    app.include_router(invoke_router)
    app.include_router(run_router)
    app.include_router(tasks_router)
    app.include_router(traces_router)
    app.include_router(upstreams_router)
    app.include_router(audit_router)
    return app
