"""Everything a gateway process holds for its lifetime, and how it is put together.

:func:`build_runtime` is the composition root: the only place the registry,
router, auth, executor, limits, audit and queue worker are created and
connected (approvals, their sweeper and result callbacks too), each by a small
builder below. The app's lifespan calls it and
hands the result to requests (``gateway.api.deps``). Domain packages never
import this module: they receive what they need through their constructors.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from limits import parse
from opentelemetry import trace
from redis.asyncio import BlockingConnectionPool, Redis
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.approvals.execution import ApprovalRunner
from gateway.approvals.journal import Journal
from gateway.approvals.service import ApprovalService
from gateway.audit.writer import AuditWriter
from gateway.auth.service import AuthService
from gateway.catalog.egress import EgressPolicy
from gateway.catalog.secrets import SecretUnavailable, ToolSecrets
from gateway.catalog.spec import ManifestDefaults
from gateway.executor.breaker import Breakers
from gateway.executor.callbacks import CallbackPolicy, CallbackSender
from gateway.executor.credentials import OutboundCredentials
from gateway.executor.http import HttpExecutor
from gateway.executor.mcp import McpExecutor
from gateway.executor.python import PythonExecutor
from gateway.executor.resolver import HostResolver
from gateway.executor.retriever_client import RETRIEVER_MANIFEST_URL, RetrieverClient
from gateway.executor.service import Executor
from gateway.executor.tasks import TaskStore
from gateway.executor.transport import create_tool_client
from gateway.executor.worker import TaskWorker
from gateway.invoke.outputs import OutputGuard
from gateway.invoke.service import InvokeService
from gateway.invoke.validation import check_arguments
from gateway.mcp.federation.connection import Upstreams
from gateway.mcp.federation.service import FederationService, FederationSettings
from gateway.mcp.oauth import transport_security
from gateway.mcp.server import McpService
from gateway.ratelimit.service import RateLimiter
from gateway.registry.cache import RegistryCache
from gateway.registry.discovery import ManifestDiscovery
from gateway.registry.service import ManifestCompiler, RegistryService
from gateway.registry.sync import RegistrySync
from gateway.routing.cache import RouteCache
from gateway.routing.context import SessionContext
from gateway.routing.service import Router, RouterSettings
from gateway.run.service import RunService
from gateway.settings import Settings
from gateway.upstreams.urls import UpstreamUrls
from reach_common.embeddings import Embedder
from reach_common.llm.factory import create_provider
from reach_common.service import ServiceResources


@dataclass
class GatewayRuntime:
    settings: Settings
    redis: Redis  # the gateway's own client (a blocking pool sized by REDIS_MAX_CONNECTIONS)
    embedder: Embedder
    registry: RegistryCache
    registry_service: RegistryService
    registry_sync: RegistrySync
    discovery: ManifestDiscovery | None
    auth: AuthService
    executor: Executor
    limiter: RateLimiter
    tasks: TaskStore
    worker: TaskWorker | None
    audit: AuditWriter
    invoke: InvokeService
    router: Router
    run: RunService
    callbacks: CallbackSender
    approvals: ApprovalService
    mcp: McpService | None = None  # serving MCP at /mcp (gateway.mcp.server)
    federation: FederationService | None = None  # consuming MCP servers (gateway.mcp.federation)


@dataclass(frozen=True)
class _Registry:
    cache: RegistryCache
    service: RegistryService
    sync: RegistrySync
    discovery: ManifestDiscovery | None


def _redis(settings: Settings) -> Redis:
    # The gateway's own client: a blocking pool makes a burst of calls wait for a
    # connection instead of failing with "Too many connections" (the default pool).
    # Not instrumented: a span per rate-limit check would cost more than it tells;
    # the gateway.rate_limit span times it.
    assert settings.redis_url
    pool = BlockingConnectionPool.from_url(
        settings.redis_url,
        decode_responses=True,
        max_connections=settings.redis_max_connections,
        timeout=5,
    )
    return Redis.from_pool(pool)


def _secrets(settings: Settings) -> ToolSecrets:
    return ToolSecrets(
        environ=os.environ,
        directory=Path(settings.tool_secrets_dir) if settings.tool_secrets_dir else None,
        bindings=settings.tool_secret_hosts,
    )


def _urls(settings: Settings) -> UpstreamUrls:
    return UpstreamUrls.from_settings(
        shop_url=settings.shop_url,
        retriever_url=settings.retriever_url,
        agent_url=settings.agent_url,
        extra=settings.upstream_hosts,
    )


def _outputs(
    settings: Settings, resources: ServiceResources, secrets: ToolSecrets, tracer: trace.Tracer
) -> OutputGuard:
    """Output checks of the invoke path, keeping over-budget outputs in the retriever."""

    def credential() -> str | None:
        # Bound like the rag_* tools' key: to the retriever's name in the shipped manifests.
        try:
            return secrets.value(settings.output_store_secret, RETRIEVER_MANIFEST_URL)
        except SecretUnavailable:
            return None

    store = RetrieverClient(
        resources.http,
        settings.retriever_url,
        credential=credential,
        timeout_s=settings.output_store_timeout_s,
        ttl_s=settings.output_handle_ttl_s,
    )
    return OutputGuard(store, tracer)


def _compiler(
    settings: Settings, egress: EgressPolicy, secrets: ToolSecrets, urls: UpstreamUrls
) -> ManifestCompiler:
    return ManifestCompiler(
        defaults=ManifestDefaults(
            timeout_ms=settings.default_timeout_ms,
            max_response_bytes=settings.max_response_bytes,
            breaker_failure_threshold=settings.breaker_failure_threshold,
            breaker_reset_timeout_ms=settings.breaker_reset_timeout_ms,
            python_packages=tuple(settings.python_tool_packages),
            max_argument_chars=settings.max_argument_chars,
            task_stream_prefix=settings.task_stream_prefix,
            max_output_bytes=settings.max_output_bytes,
            max_output_tokens=settings.max_output_tokens,
        ),
        strict=settings.auth_mode == "strict",
        egress=egress,
        secrets=secrets,
        resolve_url=urls,
    )


async def _registry(
    settings: Settings,
    resources: ServiceResources,
    redis: Redis,
    embedder: Embedder,
    compiler: ManifestCompiler,
    stack: AsyncExitStack,
) -> _Registry:
    """The in-memory registry, loaded; replicas kept in step; manifests/ loaded if asked."""
    cache = RegistryCache(resources.sessionmaker, compiler)
    sync = RegistrySync(redis, settings.registry_channel, cache, settings.registry_poll_s)
    service = RegistryService(
        sessionmaker=resources.sessionmaker,
        cache=cache,
        embedder=embedder,
        publish=sync.publish_delta,
        compiler=compiler,
        batch_max=settings.registry_batch_max,
    )
    await cache.refresh(force=True)
    discovery = None
    if settings.tool_auto_discovery:
        discovery = ManifestDiscovery(Path(settings.manifests_dir), service)
        await discovery.load_all()
        discovery.start()
        stack.push_async_callback(discovery.stop)
    sync.start()
    stack.push_async_callback(sync.stop)
    return _Registry(cache, service, sync, discovery)


def _executor(
    settings: Settings,
    resources: ServiceResources,
    redis: Redis,
    egress: EgressPolicy,
    secrets: ToolSecrets,
    urls: UpstreamUrls,
    tracer: trace.Tracer,
    stack: AsyncExitStack,
) -> Executor:
    tool_http = create_tool_client(settings.tool_http_client)  # TOOL_HTTP_CLIENT
    stack.push_async_callback(tool_http.aclose)
    return Executor(
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


def _federation(
    settings: Settings,
    resources: ServiceResources,
    redis: Redis,
    embedder: Embedder,
    registry: _Registry,
    executor: Executor,
    stack: AsyncExitStack,
) -> FederationService:
    """Federated MCP servers: their sessions, the timer that re-syncs their tools, and the
    executor's ``mcp`` transport over those sessions."""
    tracer = resources.telemetry.tracer("gateway")
    egress = EgressPolicy(
        enforce=settings.auth_mode == "strict", allowlist=settings.egress_allowlist
    )
    secrets = _secrets(settings)
    resolver = HostResolver(egress)
    credentials = OutboundCredentials(redis=redis, http=resources.http, secrets=secrets)
    credentials.guard_token_endpoints(resolver, tracer)
    federation: FederationService | None = None

    def list_changed(server_id: str) -> None:
        if federation is not None:
            federation.list_changed(server_id)

    upstreams = Upstreams(
        resolver=resolver,
        credentials=credentials,
        tracer=tracer,
        max_message_bytes=settings.mcp_max_message_bytes,
        connect_timeout_s=settings.mcp_sync_timeout_s,
        on_list_changed=list_changed,
    )
    federation = FederationService(
        sessionmaker=resources.sessionmaker,
        registry=registry.cache,
        compile=registry.service.compile,
        embedder=embedder,
        publish=registry.sync.publish,
        upstreams=upstreams,
        egress=egress,
        secrets=secrets,
        redis=redis,
        settings=FederationSettings(
            strict=settings.auth_mode == "strict",
            stdio_commands=settings.mcp_stdio_commands,
            max_tools=settings.mcp_max_tools,
            max_schema_bytes=settings.mcp_max_schema_bytes,
            sync_timeout_s=settings.mcp_sync_timeout_s,
            sync_interval_s=settings.mcp_sync_interval_s,
        ),
    )
    federation.start()
    stack.push_async_callback(federation.stop)
    executor.mcp = McpExecutor(federation, tracer)
    return federation


def _router(
    settings: Settings,
    registry: RegistryCache,
    embedder: Embedder,
    redis: Redis,
    tracer: trace.Tracer,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> Router:
    return Router(
        registry,
        embedder,
        RouteCache(
            redis, threshold=settings.route_cache_threshold, ttl_s=settings.route_cache_ttl_s
        ),
        provider=create_provider(settings),
        settings=RouterSettings(
            top_k=settings.route_top_k,
            threshold=settings.route_threshold,
            unfilled_threshold=settings.route_unfilled_threshold,
            alpha=settings.route_alpha,
            cache_min_confidence=settings.route_cache_min_confidence,
        ),
        tracer=tracer,
        sessionmaker=sessionmaker,
    )


def _audit(settings: Settings, resources: ServiceResources, stack: AsyncExitStack) -> AuditWriter:
    audit = AuditWriter(
        resources.engine,
        batch_size=settings.audit_batch_size,
        queue_size=settings.audit_queue_size,
        flush_ms=settings.audit_flush_ms,
    )
    audit.start()
    stack.push_async_callback(audit.stop)  # runs after the worker stops: its rows get written
    return audit


def _auth(settings: Settings, resources: ServiceResources) -> AuthService:
    return AuthService(
        authenticator=resources.authenticator,
        registry_admin_roles=settings.registry_admin_roles,
        ops_roles=settings.ops_roles,
        anonymous_registry_writes=settings.allow_anonymous_registry_writes,
    )


def _callbacks(
    settings: Settings,
    resources: ServiceResources,
    egress: EgressPolicy,
    tracer: trace.Tracer,
    stack: AsyncExitStack,
) -> CallbackSender:
    client = create_tool_client(settings.tool_http_client)  # its own pool, not the tools'
    stack.push_async_callback(client.aclose)
    sender = CallbackSender(
        client=client,
        resolver=HostResolver(egress),
        egress=egress,
        sessionmaker=resources.sessionmaker,
        policy=CallbackPolicy(
            secret=settings.callback_secret,
            max_attempts=settings.callback_max_attempts,
            backoff_ms=settings.callback_backoff_ms,
            max_backoff_ms=settings.callback_max_backoff_ms,
            timeout_ms=settings.callback_timeout_ms,
        ),
        tracer=tracer,
    )
    stack.push_async_callback(sender.stop)  # after the worker and the sweeper stop
    return sender


def _approvals(
    settings: Settings,
    resources: ServiceResources,
    parts: tuple[RegistryCache, Executor, AuditWriter, CallbackSender],
    tracer: trace.Tracer,
    stack: AsyncExitStack,
) -> ApprovalService:
    registry, executor, audit, callbacks = parts
    journal = Journal(audit=audit, callbacks=callbacks, tracer=tracer)
    runner = ApprovalRunner(
        sessionmaker=resources.sessionmaker,
        registry=registry,
        executor=executor,
        journal=journal,
        grace_ms=settings.approval_recovery_grace_ms,
        sweep_s=settings.approval_sweep_s,
        clock=lambda: datetime.now(UTC),
    )
    runner.start()
    stack.push_async_callback(runner.stop)
    return ApprovalService(
        sessionmaker=resources.sessionmaker,
        registry=registry,
        runner=runner,
        journal=journal,
        callbacks=callbacks,
        validate=check_arguments,
        ttl_s=settings.approval_ttl_s,
    )


def _worker(
    settings: Settings,
    redis: Redis,
    registry: RegistryCache,
    executor: Executor,
    tasks: TaskStore,
    audit: AuditWriter,
    callbacks: CallbackSender,
    tracer: trace.Tracer,
    stack: AsyncExitStack,
) -> TaskWorker | None:
    if not settings.task_worker:
        return None
    worker = TaskWorker(
        redis=redis,
        registry=registry,
        executor=executor,
        tasks=tasks,
        audit=audit,
        tracer=tracer,
        default_stream=settings.task_stream,
        callbacks=callbacks,
    )
    worker.start()
    stack.push_async_callback(worker.stop)
    return worker


async def build_runtime(
    settings: Settings,
    resources: ServiceResources,
    shared_embedder: Embedder | None,
    stack: AsyncExitStack,
) -> GatewayRuntime:
    """Build and start every part; ``stack`` stops them in reverse order.
    ``shared_embedder``: a model loaded once for several apps (tests)."""
    embedder = shared_embedder
    if embedder is None:
        embedder = await asyncio.to_thread(Embedder.configured, settings, int8_default=True)
    tracer = resources.telemetry.tracer("gateway")
    redis = _redis(settings)
    stack.push_async_callback(redis.aclose)
    strict = settings.auth_mode == "strict"
    egress = EgressPolicy(enforce=strict, allowlist=settings.egress_allowlist)
    secrets = _secrets(settings)
    urls = _urls(settings)
    compiler = _compiler(settings, egress, secrets, urls)
    registry = await _registry(settings, resources, redis, embedder, compiler, stack)
    executor = _executor(settings, resources, redis, egress, secrets, urls, tracer, stack)
    federation = _federation(settings, resources, redis, embedder, registry, executor, stack)
    audit = _audit(settings, resources, stack)
    auth = _auth(settings, resources)
    limiter = RateLimiter(
        redis,
        parse(settings.caller_rate_limit) if settings.caller_rate_limit else None,
        settings.rate_limit_without_redis,
        settings.rate_limit_lease_share,
        parse(settings.route_rate_limit) if settings.route_rate_limit else None,
    )
    stack.push_async_callback(limiter.release)
    tasks = TaskStore(redis, ttl_s=settings.task_ttl_s)
    callbacks = _callbacks(settings, resources, egress, tracer, stack)
    worker = _worker(
        settings, redis, registry.cache, executor, tasks, audit, callbacks, tracer, stack
    )
    approvals = _approvals(
        settings, resources, (registry.cache, executor, audit, callbacks), tracer, stack
    )
    invoke = InvokeService(
        registry=registry.cache,
        auth=auth,
        limiter=limiter,
        executor=executor,
        tasks=tasks,
        audit=audit,
        tracer=tracer,
        default_stream=settings.task_stream,
        approvals=approvals,
        callbacks=callbacks,
        approvals_enabled=settings.approvals_enabled,
        outputs=_outputs(settings, resources, secrets, tracer),
    )
    router, run = await _routing(
        settings, registry.cache, embedder, redis, (invoke, auth, limiter), tracer, stack,
        sessionmaker=resources.sessionmaker,
    )  # fmt: skip
    runtime = GatewayRuntime(
        settings, redis, embedder, registry.cache, registry.service, registry.sync,
        registry.discovery, auth, executor, limiter, tasks, worker, audit, invoke, router, run,
        callbacks, approvals, federation=federation,
    )  # fmt: skip
    return await _with_mcp(settings, resources, runtime, tracer, stack)


async def _routing(
    settings: Settings,
    registry: RegistryCache,
    embedder: Embedder,
    redis: Redis,
    calls: tuple[InvokeService, AuthService, RateLimiter],
    tracer: trace.Tracer,
    stack: AsyncExitStack,
    *,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> tuple[Router, RunService]:
    """The router (started; stopped by ``stack``) and ``POST /run``'s service over it;
    its index's vectors are kept in Postgres through ``sessionmaker``."""
    router = _router(settings, registry, embedder, redis, tracer, sessionmaker)
    await router.start()
    stack.push_async_callback(router.stop)
    context = SessionContext(
        redis, max_calls=settings.session_context_calls, ttl_s=settings.session_context_ttl_s
    )
    invoke, auth, limiter = calls
    run = RunService(router=router, invoke=invoke, auth=auth, context=context, limiter=limiter)
    return router, run


async def _with_mcp(
    settings: Settings,
    resources: ServiceResources,
    runtime: GatewayRuntime,
    tracer: trace.Tracer,
    stack: AsyncExitStack,
) -> GatewayRuntime:
    """``runtime`` serving MCP at /mcp (gateway.mcp.server)."""
    runtime.mcp = McpService(
        registry=runtime.registry,
        invoke=runtime.invoke,
        router=runtime.router,
        run=runtime.run,
        sessionmaker=resources.sessionmaker,
        security=transport_security(
            settings.allowed_hosts, settings.mcp_allowed_hosts, settings.mcp_allowed_origins
        ),
        tracer=tracer,
        json_response=settings.mcp_json_response,
    )
    await stack.enter_async_context(runtime.mcp.run())  # the session manager's task group
    return runtime
