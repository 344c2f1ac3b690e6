"""Everything a gateway process holds for its lifetime, built in the app's lifespan.

Endpoints reach it as ``request.state.runtime``. The router (``routing/``) and
``POST /run`` use ``registry`` (the in-memory view; rebuild an index when its
``revision`` changes, see ``RegistryCache.add_listener``), ``auth``
(``gateway.auth.service.can_use`` / ``visible_tools`` for candidates) and
``invoke`` (the shared call pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis

from gateway.audit.writer import AuditWriter
from gateway.auth.service import AuthService
from gateway.executor.service import Executor
from gateway.executor.tasks import TaskStore
from gateway.executor.worker import TaskWorker
from gateway.invoke.service import InvokeService
from gateway.ratelimit.service import RateLimiter
from gateway.registry.cache import RegistryCache
from gateway.registry.discovery import ManifestDiscovery
from gateway.registry.service import RegistryService
from gateway.registry.sync import RegistrySync
from gateway.settings import Settings
from reach_common.embeddings import Embedder


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
