"""Registry writes: validate, embed, store, bump the revision, tell every replica.

Each write runs in its own short transaction (not the request's session) so the
change is committed *before* the other replicas are told to reload it. The
embedding is computed before the transaction opens, so no lock is held while
the model runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.catalog.egress import EgressPolicy
from gateway.catalog.secrets import ToolSecrets
from gateway.catalog.spec import HttpTarget, ManifestDefaults, QueueTarget, ToolSpec
from gateway.registry import repository
from gateway.registry.cache import RegistryCache
from gateway.registry.errors import StaleRevision, ToolExists, ToolIdMismatch, ToolNotFound
from gateway.registry.manifest import compile_manifest
from gateway.registry.models import Tool
from reach_common.embeddings import Embedder

log = structlog.get_logger(__name__)

Publisher = Callable[[int], Awaitable[None]]
FileSync = Literal["created", "updated", "unchanged", "skipped"]


@dataclass(frozen=True)
class Change:
    tool_id: str
    version: int
    revision: int


class ManifestCompiler:
    """Validates a manifest as this gateway's mode requires: schema, permission, egress,
    and where its secret may be sent."""

    def __init__(
        self,
        *,
        defaults: ManifestDefaults,
        strict: bool,
        egress: EgressPolicy,
        secrets: ToolSecrets,
        resolve_url: Callable[[str], str],
    ) -> None:
        self._defaults = defaults
        self._strict = strict
        self._egress = egress
        self._secrets = secrets
        self._resolve_url = resolve_url

    def __call__(self, manifest: Any) -> ToolSpec:
        spec = compile_manifest(manifest, self._defaults, require_permission=self._strict)
        target = spec.endpoint.target if isinstance(spec.endpoint, QueueTarget) else spec.endpoint
        if isinstance(target, HttpTarget):
            self._egress.check_url(self._resolve_url(target.url))
            if target.auth.token_endpoint:
                self._egress.check_url(target.auth.token_endpoint)
            if target.auth.key is not None:
                receiver = target.auth.token_endpoint or target.url
                self._secrets.check_binding(target.auth.key, receiver, strict=self._strict)
        return spec


class RegistryService:
    def __init__(
        self,
        *,
        sessionmaker: async_sessionmaker[AsyncSession],
        cache: RegistryCache,
        embedder: Embedder,
        publish: Publisher,
        compiler: ManifestCompiler,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._cache = cache
        self._embedder = embedder
        self._publish = publish
        self.compile = compiler

    async def _embed(self, spec: ToolSpec) -> list[float]:
        vector = await asyncio.to_thread(self._embedder.embed_one, spec.embedding_text())
        return [float(v) for v in vector]

    async def register(self, manifest: dict[str, Any]) -> Change:
        spec = self.compile(manifest)
        embedding = await self._embed(spec)
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            existing = await repository.get_tool(session, spec.tool_id)
            if existing is not None:
                raise ToolExists(spec.tool_id, existing.version)
            revision = await repository.bump_revision(session)
            await repository.add_tool(session, _row(spec, manifest, embedding, revision, 1, "api"))
        await self._changed(revision, "tool_registered", spec.tool_id)
        return Change(spec.tool_id, 1, revision)

    async def update(
        self, tool_id: str, manifest: dict[str, Any], expected_version: int | None
    ) -> Change:
        if isinstance(manifest, dict) and manifest.get("tool_id") not in (None, tool_id):
            raise ToolIdMismatch(tool_id, str(manifest.get("tool_id")))
        spec = self.compile(manifest)
        embedding = await self._embed(spec)
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            row = await repository.get_tool(session, tool_id)
            if row is None:
                raise ToolNotFound(tool_id)
            if expected_version is not None and expected_version != row.version:
                raise StaleRevision(tool_id, expected_version, row.version)
            revision = await repository.bump_revision(session)
            _apply(row, spec, manifest, embedding, revision)
            row.source, row.source_path = "api", None
            version = row.version
        await self._changed(revision, "tool_updated", tool_id)
        return Change(tool_id, version, revision)

    async def delete(self, tool_id: str, expected_version: int | None) -> Change:
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            row = await repository.get_tool(session, tool_id)
            if row is None:
                raise ToolNotFound(tool_id)
            if expected_version is not None and expected_version != row.version:
                raise StaleRevision(tool_id, expected_version, row.version)
            version = row.version
            await repository.delete_tool(session, tool_id)
            revision = await repository.bump_revision(session)
        await self._changed(revision, "tool_deleted", tool_id)
        return Change(tool_id, version, revision)

    async def sync_file(self, manifest: dict[str, Any], source_path: str) -> FileSync:
        """Create or update the tool a manifest file declares; API-registered tools win."""
        spec = self.compile(manifest)
        known = self._cache.get(spec.tool_id)
        if known is not None and known.spec.manifest == manifest:
            return "unchanged"
        embedding = await self._embed(spec)
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            row = await repository.get_tool(session, spec.tool_id)
            if row is not None and row.source != "file":
                log.warning("manifest_file_shadowed", tool_id=spec.tool_id, path=source_path)
                return "skipped"
            if row is not None and row.manifest == manifest and row.source_path == source_path:
                return "unchanged"
            revision = await repository.bump_revision(session)
            if row is None:
                outcome: FileSync = "created"
                await repository.add_tool(
                    session, _row(spec, manifest, embedding, revision, 1, "file", source_path)
                )
            else:
                outcome = "updated"
                _apply(row, spec, manifest, embedding, revision)
                row.source_path = source_path
        await self._changed(revision, f"tool_{outcome}_from_file", spec.tool_id)
        return outcome

    async def remove_files(self, keep: set[str] | None = None, gone: set[str] | None = None) -> int:
        """Delete file-sourced tools whose file is in ``gone`` (or not in ``keep``)."""
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            rows = await repository.file_tools(session)
            doomed = [
                row
                for row in rows
                if (gone is not None and row.source_path in gone)
                or (keep is not None and row.source_path not in keep)
            ]
            if not doomed:
                return 0
            for row in doomed:
                await repository.delete_tool(session, row.tool_id)
            revision = await repository.bump_revision(session)
        for row in doomed:
            log.info("tool_removed_with_file", tool_id=row.tool_id, path=row.source_path)
        await self._changed(revision, "tools_removed", ",".join(r.tool_id for r in doomed))
        return len(doomed)

    async def _changed(self, revision: int, event: str, tool_id: str) -> None:
        log.info(event, tool_id=tool_id, revision=revision)
        await self._cache.refresh()
        try:
            await self._publish(revision)
        except Exception as exc:  # noqa: BLE001 - committed already; replicas catch up on poll
            log.warning("registry_publish_failed", error=type(exc).__name__)


def _row(
    spec: ToolSpec,
    manifest: dict[str, Any],
    embedding: list[float],
    revision: int,
    version: int,
    source: str,
    source_path: str | None = None,
) -> Tool:
    return Tool(
        tool_id=spec.tool_id,
        namespace=spec.namespace,
        manifest=manifest,
        version=version,
        revision=revision,
        source=source,
        source_path=source_path,
        embedding=embedding,
    )


def _apply(
    row: Tool, spec: ToolSpec, manifest: dict[str, Any], embedding: list[float], revision: int
) -> None:
    row.namespace = spec.namespace
    row.manifest = manifest
    row.embedding = embedding
    row.version += 1
    row.revision = revision
    row.updated_at = datetime.now(UTC)
