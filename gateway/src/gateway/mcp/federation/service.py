"""Federated MCP servers: register, sync (on a timer and on ``list_changed``), accept, remove.

Registration checks what a manifest would be checked for (egress of the URL and
token endpoint, where a named secret may go) plus the stdio allowlist, stores the
server (secret names only), and syncs it at once: a server that cannot be reached
or listed is not registered, and the answer says why. Every replica re-syncs each
server every ``MCP_SYNC_INTERVAL_S`` (one replica per interval, by a Redis lock),
and at once when the server sends ``notifications/tools/list_changed``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import structlog
from mcp.client.session import ClientSession
from mcp.types import PaginatedRequestParams
from mcp.types import Tool as McpTool
from redis.asyncio import Redis
from redis.exceptions import RedisError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.background import cancel_and_wait
from gateway.catalog.egress import EgressPolicy
from gateway.catalog.secrets import ToolSecrets
from gateway.catalog.spec import OutboundAuth, ToolSpec
from gateway.mcp.federation import repository
from gateway.mcp.federation.connection import ServerTarget, Upstreams, describe_failure
from gateway.mcp.federation.errors import (
    McpCommandNotAllowed,
    McpServerExists,
    McpServerNotFound,
    McpUpstreamError,
)
from gateway.mcp.federation.models import McpServer
from gateway.mcp.federation.schemas import (
    McpServerCreate,
    McpServerList,
    McpServerRead,
    McpToolRead,
    SyncRead,
)
from gateway.mcp.federation.sync import Syncer, SyncReport
from gateway.mcp.federation.translate import ServerPolicy
from gateway.registry import repository as registry_repository
from gateway.registry.cache import RegistryCache
from gateway.registry.vectors import StoredVectors
from reach_common.embeddings import Embedder, VectorCache
from reach_common.errors import ReachError

log = structlog.get_logger(__name__)

MAX_PAGES = 50
_LOCK_PREFIX = "reach:gateway:mcp:sync:"


@dataclass(frozen=True)
class FederationSettings:
    strict: bool
    stdio_commands: Mapping[str, Sequence[str]]
    max_tools: int
    max_schema_bytes: int
    sync_timeout_s: float
    sync_interval_s: float


class FederationService:
    def __init__(
        self,
        *,
        sessionmaker: async_sessionmaker[AsyncSession],
        registry: RegistryCache,
        compile: Callable[[dict[str, Any]], ToolSpec],
        embedder: Embedder,
        publish: Callable[[int], Awaitable[None]],
        upstreams: Upstreams,
        egress: EgressPolicy,
        secrets: ToolSecrets,
        redis: Redis,
        settings: FederationSettings,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._registry = registry
        # A text embedded before (a tool registered again, a restart) is not embedded again.
        self._vectors = StoredVectors(sessionmaker, VectorCache(embedder))
        self._publish = publish
        self._upstreams = upstreams
        self._egress = egress
        self._secrets = secrets
        self._redis = redis
        self.settings = settings
        self._syncer = Syncer(
            sessionmaker=sessionmaker,
            compile=compile,
            embed=self._embed,
            max_schema_bytes=settings.max_schema_bytes,
        )
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _embed(self, spec: ToolSpec) -> list[float]:
        vectors = await self._vectors.embed([spec.embedding_text()])
        return [float(v) for v in vectors[0]]

    # --- sessions, for the executor ---------------------------------------------------------

    async def session(self, server_id: str) -> ClientSession:
        """The live session to a federated server (known to this replica or loaded)."""
        if not self._upstreams.known(server_id):
            async with self._sessionmaker() as db:
                row = await repository.get_server(db, server_id)
            if row is None:
                raise McpServerNotFound(server_id)
            self._upstreams.configure(self._describe(row)[0])
        return await self._upstreams.session(server_id)

    async def discard(self, server_id: str, session: ClientSession) -> None:
        await self._upstreams.discard(server_id, session)

    def oversized(self, server_id: str) -> bool:
        return self._upstreams.oversized(server_id)

    def list_changed(self, server_id: str) -> None:
        """The server said its tools changed: sync it soon."""
        self._dirty.add(server_id)
        self._wake.set()

    # --- admin operations ---------------------------------------------------------------------

    async def register(self, body: McpServerCreate, created_by: str) -> McpServerRead:
        self._check(body)
        row = McpServer(
            server_id=body.server_id,
            namespace=body.namespace or body.server_id,
            transport=body.transport,
            url=body.url,
            command=body.command,
            auth=body.auth.model_dump(exclude_none=True),
            permission=body.permission,
            scope=list(body.scope),
            timeout_ms=body.timeout_ms,
            max_retries=body.max_retries,
            created_by=created_by[:200],
        )
        try:
            async with self._sessionmaker.begin() as db:
                db.add(row)
        except IntegrityError:
            raise McpServerExists(body.server_id) from None
        try:
            report = await self.sync(body.server_id)
        except BaseException:
            await self.delete(body.server_id)  # not reachable or not usable: not registered
            raise
        log.info("mcp_server_registered", server=body.server_id, tools=len(report.added))
        return await self.read(body.server_id, report)

    def _check(self, body: McpServerCreate) -> None:
        """What registering a manifest would check, and the stdio allowlist."""
        if body.transport == "stdio":
            assert body.command is not None
            if body.command not in self.settings.stdio_commands:
                listed = ", ".join(sorted(self.settings.stdio_commands)) or "none"
                raise McpCommandNotAllowed(
                    f"{body.command!r} is not a stdio MCP server an operator allowed "
                    f"(MCP_STDIO_COMMANDS lists: {listed}).",
                    command=body.command,
                )
            return
        assert body.url is not None
        self._egress.check_url(body.url)
        auth = body.auth
        if auth.type == "oauth2":
            self._egress.check_url(auth.token_endpoint)
        if auth.type != "none":
            receiver = auth.token_endpoint if auth.type == "oauth2" else body.url
            self._secrets.check_binding(auth.key, receiver, strict=self.settings.strict)

    async def list_servers(self) -> McpServerList:
        async with self._sessionmaker() as db:
            rows = await repository.all_servers(db)
            return McpServerList(servers=[await self._view(db, row) for row in rows])

    async def read(self, server_id: str, report: SyncReport | None = None) -> McpServerRead:
        async with self._sessionmaker() as db:
            row = await repository.get_server(db, server_id)
            if row is None:
                raise McpServerNotFound(server_id)
            return await self._view(db, row, report)

    @staticmethod
    async def _view(
        db: AsyncSession, row: McpServer, report: SyncReport | None = None
    ) -> McpServerRead:
        """``row`` with its tools as the API shows it (one query for the tools)."""
        tools = await repository.server_tools(db, row.server_id)
        return McpServerRead(
            server_id=row.server_id,
            namespace=row.namespace,
            transport=row.transport,
            url=row.url,
            command=row.command,
            auth=row.auth,
            permission=row.permission,
            scope=list(row.scope),
            timeout_ms=row.timeout_ms,
            max_retries=row.max_retries,
            created_by=row.created_by,
            created_at=row.created_at,
            synced_at=row.synced_at,
            sync_error=row.sync_error,
            tools=[
                McpToolRead(
                    name=tool.name,
                    tool_id=tool.tool_id,
                    state="held_back" if tool.pending_hash else "active",
                    definition_hash=tool.accepted_hash,
                    pending_hash=tool.pending_hash,
                    pending_definition=tool.pending_definition,
                    changed_at=tool.changed_at,
                )
                for tool in tools
            ],
            last_sync=SyncRead(**asdict(report)) if report else None,
        )

    async def delete(self, server_id: str) -> list[str]:
        """Unregister the server and remove its tools from every replica."""
        async with self._sessionmaker.begin() as db:
            await registry_repository.lock_registry(db)
            if await repository.get_server(db, server_id) is None:
                raise McpServerNotFound(server_id)
            tool_ids = await repository.delete_server(db, server_id)
            revision = await registry_repository.bump_revision(db) if tool_ids else None
        await self._upstreams.forget(server_id)
        if revision is not None:
            await self._changed(revision)
        log.info("mcp_server_deleted", server=server_id, tools=len(tool_ids))
        return tool_ids

    async def accept(self, server_id: str, names: list[str] | None) -> SyncReport:
        async with self._sessionmaker() as db:
            row = await repository.get_server(db, server_id)
        if row is None:
            raise McpServerNotFound(server_id)
        report = await self._syncer.accept(self._describe(row)[1], names)
        if report.revision is not None:
            await self._changed(report.revision)
        log.info("mcp_definitions_accepted", server=server_id, tools=report.accepted)
        return report

    async def sync(self, server_id: str) -> SyncReport:
        """List the server's tools now and bring the registry in line."""
        async with self._sessionmaker() as db:
            row = await repository.get_server(db, server_id)
        if row is None:
            raise McpServerNotFound(server_id)
        target, policy = self._describe(row)
        self._upstreams.configure(target)
        try:
            listed = await self._list(server_id)
        except ReachError as exc:
            await self._record_failure(server_id, exc.message)
            raise
        report = await self._syncer.apply(policy, listed)
        if report.revision is not None:
            await self._changed(report.revision)
            log.info("mcp_server_synced", server=server_id, added=report.added,
                     removed=report.removed, held_back=report.held_back)  # fmt: skip
        return report

    async def _list(self, server_id: str) -> list[McpTool]:
        session: ClientSession | None = None
        try:
            async with asyncio.timeout(self.settings.sync_timeout_s):
                session = await self._upstreams.session(server_id)
                return await self._list_pages(server_id, session)
        except ReachError:
            raise
        except TimeoutError:
            failure = f"it did not answer within {self.settings.sync_timeout_s:g} s"
        except Exception as exc:  # noqa: BLE001 - whatever the server's transport raised
            failure = describe_failure(exc)
        if self._upstreams.oversized(server_id):
            limit = self._upstreams.max_message_bytes
            failure = f"an answer passed {limit} bytes (MCP_MAX_MESSAGE_BYTES)"
        if session is not None:
            await self._upstreams.discard(server_id, session)
        raise McpUpstreamError(
            f"Could not list the tools of MCP server {server_id!r}: {failure}.", server_id=server_id
        )

    async def _list_pages(self, server_id: str, session: ClientSession) -> list[McpTool]:
        tools: list[McpTool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            tools.extend(result.tools)
            if len(tools) > self.settings.max_tools:
                raise McpUpstreamError(
                    f"MCP server {server_id!r} lists more than {self.settings.max_tools} tools "
                    "(MCP_MAX_TOOLS); none were taken in.",
                    server_id=server_id,
                )
            cursor = result.next_cursor
            if not cursor:
                return tools
        raise McpUpstreamError(
            f"MCP server {server_id!r} kept paginating its tools past {MAX_PAGES} pages.",
            server_id=server_id,
        )

    async def _record_failure(self, server_id: str, message: str) -> None:
        async with self._sessionmaker.begin() as db:
            row = await repository.get_server(db, server_id)
            if row is not None:
                row.sync_error = message[:2000]

    async def _changed(self, revision: int) -> None:
        await self._registry.refresh()
        try:
            await self._publish(revision)
        except Exception as exc:  # noqa: BLE001 - committed already; replicas catch up on poll
            log.warning("registry_publish_failed", error=type(exc).__name__)

    def _describe(self, row: McpServer) -> tuple[ServerTarget, ServerPolicy]:
        auth = OutboundAuth(**row.auth) if row.auth else OutboundAuth()
        argv = tuple(self.settings.stdio_commands.get(row.command or "", ()))
        target = ServerTarget(
            row.server_id, "stdio" if row.transport == "stdio" else "http", row.url, argv, auth
        )
        policy = ServerPolicy(
            server_id=row.server_id,
            namespace=row.namespace,
            permission=row.permission,
            scope=tuple(row.scope),
            timeout_ms=row.timeout_ms,
            max_retries=row.max_retries,
        )
        return target, policy

    # --- the timer ------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="mcp-federation-sync")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        await self._upstreams.aclose()

    async def _run(self) -> None:
        while True:
            timer = False
            try:
                async with asyncio.timeout(self.settings.sync_interval_s):
                    await self._wake.wait()
            except TimeoutError:
                timer = True
            self._wake.clear()
            due, self._dirty = set(self._dirty), set()
            if timer:
                async with self._sessionmaker() as db:
                    registered = {row.server_id for row in await repository.all_servers(db)}
                for gone in self._upstreams.server_ids() - registered:
                    await self._upstreams.forget(gone)  # deleted through another replica
                due |= registered
            for server_id in sorted(due):
                await self._sync_quietly(server_id, timer)

    async def _sync_quietly(self, server_id: str, timer: bool) -> None:
        if timer and not await self._claim(server_id):
            return  # another replica syncs it this interval
        try:
            await self.sync(server_id)
        except ReachError as exc:
            log.warning("mcp_sync_failed", server=server_id, reason=exc.reason, error=exc.message)
        except Exception:  # task boundary: one server's failure must not stop the others
            log.exception("mcp_sync_crashed", server=server_id)

    async def _claim(self, server_id: str) -> bool:
        ttl_ms = max(1, int(self.settings.sync_interval_s * 800))
        with contextlib.suppress(RedisError):
            return bool(await self._redis.set(_LOCK_PREFIX + server_id, "1", nx=True, px=ttl_ms))
        return True
