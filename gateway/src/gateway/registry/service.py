"""Registry writes: validate, embed, store, bump the revision, tell every replica.

Each write runs in its own short transaction (not the request's session) so the
change is committed *before* the other replicas hear of it. The embedding is
computed before the transaction opens, so no lock is held while the model runs.
After the commit the write applies its :class:`RegistryDelta` (the tools it
changed and removed) to this replica's view and publishes it to the others, so
each reads just those rows: a change costs work in proportion to the change,
not to the registry. A batch (``register_many``, a folder of manifests at
start) is one transaction and one revision.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import structlog
from opentelemetry import trace
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.catalog.egress import EgressPolicy
from gateway.catalog.secrets import ToolSecrets
from gateway.catalog.spec import HttpTarget, ManifestDefaults, QueueTarget, ToolSpec
from gateway.catalog.untrusted import flags_for_description
from gateway.registry import history, repository
from gateway.registry.batch import compile_batch, refuse_existing
from gateway.registry.cache import RegistryCache, RegistryDelta
from gateway.registry.errors import (
    StaleRevision,
    ToolExists,
    ToolIdMismatch,
    ToolNotFound,
    VersionNotFound,
)
from gateway.registry.manifest import compile_manifest
from gateway.registry.models import Tool
from gateway.registry.vectors import StoredVectors
from reach_common.embeddings import Embedder, VectorCache
from reach_common.errors import ReachError

log = structlog.get_logger(__name__)

Publisher = Callable[[RegistryDelta], Awaitable[None]]
FileSync = Literal["created", "updated", "unchanged", "skipped"]


@dataclass(frozen=True)
class Change:
    tool_id: str
    version: int
    revision: int
    flags: tuple[str, ...] = ()  # untrusted-text flags of the tool's description (not refused)


def _flags(spec: ToolSpec) -> tuple[str, ...]:
    flags = flags_for_description(spec.name, spec.description, *spec.aliases, *spec.examples)
    if flags:
        log.warning("tool_description_flagged", tool_id=spec.tool_id, flags=flags)
        span = trace.get_current_span()
        span.set_attribute("tool.description_flags", flags)
        span.add_event("gateway.untrusted_description", {"tool.id": spec.tool_id, "flags": flags})
    return tuple(flags)


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
        batch_max: int = 1000,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._cache = cache
        # A text embedded before (a tool registered again, a restart) is not embedded again.
        self._vectors = StoredVectors(sessionmaker, VectorCache(embedder))
        self._publish = publish
        self.compile = compiler
        self.batch_max = batch_max

    async def _embed(self, spec: ToolSpec) -> list[float]:
        vectors = await self._vectors.embed([spec.embedding_text()])
        return [float(v) for v in vectors[0]]

    async def register(self, manifest: dict[str, Any], *, actor: str | None = None) -> Change:
        spec = await asyncio.to_thread(self.compile, manifest)
        flags = _flags(spec)
        embedding = await self._embed(spec)
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            existing = await repository.get_tool(session, spec.tool_id)
            if existing is not None:
                raise ToolExists(spec.tool_id, existing.version)
            revision = await repository.bump_revision(session)
            await repository.add_tool(session, _row(spec, manifest, embedding, revision, 1, "api"))
            await history.record(
                session, history.entry(
                    tool_id=spec.tool_id, version=1, revision=revision, action="registered",
                    manifest=manifest, source="api", actor=actor, flags=flags,
                )
            )  # fmt: skip
        await self._changed(revision, "tool_registered", [spec.tool_id])
        return Change(spec.tool_id, 1, revision, flags)

    async def register_many(
        self, manifests: list[Any], *, actor: str | None, action: str = "imported"
    ) -> list[Change]:
        """Register several new tools in one transaction and one revision: all or none.
        Refused as a whole (:class:`BatchRefused`, each problem with its manifest's index)
        when any manifest is invalid, repeats a ``tool_id`` or names a registered tool."""
        specs = await asyncio.to_thread(compile_batch, self.compile, manifests, self.batch_max)
        flags = [_flags(spec) for spec in specs]
        vectors = await self._vectors.embed([spec.embedding_text() for spec in specs])
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            ids = [spec.tool_id for spec in specs]
            refuse_existing(specs, await repository.existing_versions(session, ids))
            revision = await repository.bump_revision(session)
            rows, entries = [], []
            for spec, manifest, vector, found in zip(specs, manifests, vectors, flags, strict=True):
                embedding = [float(v) for v in vector]
                rows.append(_row(spec, manifest, embedding, revision, 1, "api"))
                entries.append(
                    history.entry(
                        tool_id=spec.tool_id, version=1, revision=revision, action=action,
                        manifest=manifest, source="api", actor=actor, flags=found,
                    )
                )  # fmt: skip
            await repository.add_tools(session, rows)
            session.add_all(entries)
        await self._changed(revision, f"tools_{action}", ids)
        return [Change(s.tool_id, 1, revision, f) for s, f in zip(specs, flags, strict=True)]

    async def rollback(
        self, tool_id: str, version: int, *, actor: str | None, expected_version: int | None
    ) -> Change:
        """A new version whose manifest is the one ``tool_id`` had at ``version``."""
        async with self._sessionmaker() as session:
            old = await history.definition_at(session, tool_id, version)
        if old is None or old.manifest is None:
            raise VersionNotFound(tool_id, version)
        return await self.update(
            tool_id, old.manifest, expected_version, actor=actor, action="rolled_back",
            restored_from=version,
        )  # fmt: skip

    async def update(
        self,
        tool_id: str,
        manifest: dict[str, Any],
        expected_version: int | None,
        *,
        actor: str | None = None,
        action: str = "updated",
        restored_from: int | None = None,
    ) -> Change:
        if isinstance(manifest, dict) and manifest.get("tool_id") not in (None, tool_id):
            raise ToolIdMismatch(tool_id, str(manifest.get("tool_id")))
        spec = await asyncio.to_thread(self.compile, manifest)
        flags = _flags(spec)
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
            await history.record(
                session, history.entry(
                    tool_id=tool_id, version=version, revision=revision, action=action,
                    manifest=manifest, source="api", actor=actor, flags=flags,
                    restored_from=restored_from,
                )
            )  # fmt: skip
        await self._changed(revision, f"tool_{action}", [tool_id])
        return Change(tool_id, version, revision, flags)

    async def delete(
        self, tool_id: str, expected_version: int | None, *, actor: str | None = None
    ) -> Change:
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            row = await repository.get_tool(session, tool_id)
            if row is None:
                raise ToolNotFound(tool_id)
            if expected_version is not None and expected_version != row.version:
                raise StaleRevision(tool_id, expected_version, row.version)
            version, source = row.version, row.source
            await repository.delete_tool(session, tool_id)
            revision = await repository.bump_revision(session)
            await history.record(
                session, history.entry(
                    tool_id=tool_id, version=version, revision=revision, action="deleted",
                    manifest=None, source=source, actor=actor,
                )
            )  # fmt: skip
        await self._changed(revision, "tool_deleted", deleted=[tool_id])
        return Change(tool_id, version, revision)

    async def sync_file(self, manifest: dict[str, Any], source_path: str) -> FileSync:
        """Create or update the tool a manifest file declares; API-registered tools win."""
        spec = await asyncio.to_thread(self.compile, manifest)
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
                row = await repository.add_tool(
                    session, _row(spec, manifest, embedding, revision, 1, "file", source_path)
                )
            else:
                outcome = "updated"
                _apply(row, spec, manifest, embedding, revision)
                row.source_path = source_path
            await history.record(
                session, history.entry(
                    tool_id=spec.tool_id, version=row.version, revision=revision,
                    action=f"file_{outcome}", manifest=manifest, source="file", flags=_flags(spec),
                )
            )  # fmt: skip
        await self._changed(revision, f"tool_{outcome}_from_file", [spec.tool_id])
        return outcome

    async def sync_files(self, files: Sequence[tuple[Any, str]]) -> dict[str, str]:
        """:meth:`sync_file` for many ``(manifest, file name)`` in one transaction and one
        revision (a folder at start); file name → outcome. A refused manifest is logged
        and skipped, as it would be alone; it never stops the others."""
        outcomes: dict[str, str] = {}
        ready: list[tuple[ToolSpec, dict[str, Any], str]] = []
        compiled = await asyncio.to_thread(lambda: [self._compiled(m) for m, _ in files])
        for (manifest, path), spec in zip(files, compiled, strict=True):
            if isinstance(spec, ReachError):
                log.warning("manifest_refused", path=path, reason=spec.reason, error=spec.message)
                outcomes[path] = "refused"
                continue
            known = self._cache.get(spec.tool_id)
            if known is not None and known.spec.manifest == manifest:
                outcomes[path] = "unchanged"
            else:
                ready.append((spec, manifest, path))
        if not ready:
            return outcomes
        texts = [spec.embedding_text() for spec, _, _ in ready]
        vectors = await self._vectors.embed(texts)
        async with self._sessionmaker.begin() as session:
            await repository.lock_registry(session)
            ids = [spec.tool_id for spec, _, _ in ready]
            rows = {row.tool_id: row for row in await repository.tools_by_id(session, ids)}
            revision: list[int] = []  # bumped once, at the first real change
            for (spec, manifest, path), vector in zip(ready, vectors, strict=True):
                embedding = [float(v) for v in vector]
                outcomes[path] = await _sync_one(
                    session, rows, (spec, manifest, path, embedding), revision
                )
        changed = sorted({spec.tool_id for spec, _, path in ready if outcomes[path] in _WRITTEN})
        if revision:
            await self._changed(revision[0], "tools_synced_from_files", changed)
        return outcomes

    def _compiled(self, manifest: Any) -> ToolSpec | ReachError:
        """``manifest`` compiled, or why it is refused."""
        try:
            return self.compile(manifest)
        except ReachError as exc:
            return exc

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
                await history.record(
                    session, history.entry(
                        tool_id=row.tool_id, version=row.version, revision=revision,
                        action="file_removed", manifest=None, source="file",
                    )
                )  # fmt: skip
        for row in doomed:
            log.info("tool_removed_with_file", tool_id=row.tool_id, path=row.source_path)
        await self._changed(revision, "tools_removed", deleted=[r.tool_id for r in doomed])
        return len(doomed)

    async def _changed(
        self, revision: int, event: str, changed: Sequence[str] = (), deleted: Sequence[str] = ()
    ) -> None:
        ids = [*changed, *deleted]
        log.info(event, tool_id=",".join(ids[:20]), tools=len(ids), revision=revision)
        delta = RegistryDelta(revision, tuple(changed), tuple(deleted))
        await self._cache.apply(delta)
        try:
            await self._publish(delta)
        except Exception as exc:  # noqa: BLE001 - committed already; replicas catch up on poll
            log.warning("registry_publish_failed", error=type(exc).__name__)


_WRITTEN = ("created", "updated")


async def _sync_one(
    session: AsyncSession,
    rows: dict[str, Tool],
    item: tuple[ToolSpec, dict[str, Any], str, list[float]],
    revision: list[int],
) -> FileSync:
    """One file of a batch, inside its transaction; ``rows`` holds the batch's tools."""
    spec, manifest, path, embedding = item
    row = rows.get(spec.tool_id)
    if row is not None and row.source != "file":
        log.warning("manifest_file_shadowed", tool_id=spec.tool_id, path=path)
        return "skipped"
    if row is not None and row.manifest == manifest and row.source_path == path:
        return "unchanged"
    if not revision:
        revision.append(await repository.bump_revision(session))
    outcome: FileSync
    if row is None:
        outcome = "created"
        row = rows[spec.tool_id] = _row(spec, manifest, embedding, revision[0], 1, "file", path)
        session.add(row)
    else:
        outcome = "updated"
        _apply(row, spec, manifest, embedding, revision[0])
        row.source_path = path
    session.add(
        history.entry(
            tool_id=spec.tool_id, version=row.version, revision=revision[0],
            action=f"file_{outcome}", manifest=manifest, source="file", flags=_flags(spec),
        )
    )  # fmt: skip
    return outcome


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
