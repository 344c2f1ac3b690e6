"""Bring the registry in line with what one federated server lists, in one transaction.

- a new tool gets an id (``naming``), its manifest (``translate``), an embedding, and
  is registered with ``source: mcp``; its definition is accepted as first seen;
- a tool whose definition (description or input schema) differs from the accepted one
  is held back: its manifest keeps the accepted definition and says ``held_back``, so
  calls are refused until an admin accepts (:meth:`Syncer.accept`); a server that
  changes it back releases it;
- a tool the server no longer lists is removed.

Embeddings are computed before the transaction opens, so no lock is held while the
model runs; the transaction re-reads the rows, so two replicas syncing the same
server at once cannot add a tool twice.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mcp.types import Tool as McpTool
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.catalog.spec import ToolSpec
from gateway.mcp.federation import repository
from gateway.mcp.federation.errors import NothingToAccept
from gateway.mcp.federation.models import McpServerTool
from gateway.mcp.federation.naming import TOOL_NAME, tool_id_for
from gateway.mcp.federation.translate import Definition, ServerPolicy, definition_of, manifest_for
from gateway.registry import repository as registry_repository
from gateway.registry.errors import InvalidManifest
from gateway.registry.models import Tool
from reach_common.errors import ReachError

Compile = Callable[[dict[str, Any]], ToolSpec]
Embed = Callable[[ToolSpec], Awaitable[list[float]]]


@dataclass
class SyncReport:
    server_id: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    held_back: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    revision: int | None = None

    def skip(self, name: str, problem: str) -> None:
        self.skipped.append({"name": name[:130], "problem": problem[:500]})


class _Revision:
    """The registry revision of this transaction, bumped once on first use."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session
        self.value: int | None = None

    async def __call__(self) -> int:
        if self.value is None:
            self.value = await registry_repository.bump_revision(self._session)
        return self.value


class Syncer:
    def __init__(
        self,
        *,
        sessionmaker: async_sessionmaker[AsyncSession],
        compile: Compile,
        embed: Embed,
        max_schema_bytes: int,
    ) -> None:
        self._sessionmaker = sessionmaker
        self._compile = compile
        self._embed = embed
        self._max_schema_bytes = max_schema_bytes

    def _definitions(
        self, listed: list[McpTool], report: SyncReport
    ) -> tuple[dict[str, Definition], dict[str, str]]:
        """The usable definitions by name, and the problem of each listed one that is not."""
        definitions: dict[str, Definition] = {}
        problems: dict[str, str] = {}
        for tool in listed:
            if not TOOL_NAME.match(tool.name):
                report.skip(tool.name, "its name is not 1-128 letters, digits, '_', '-' or '.'")
                continue
            if tool.name in definitions or tool.name in problems:
                report.skip(tool.name, "the server lists this name twice")
                continue
            definition = definition_of(tool, self._max_schema_bytes)
            if isinstance(definition, str):
                problems[tool.name] = definition
            else:
                definitions[tool.name] = definition
        return definitions, problems

    async def _prepare_new(
        self,
        policy: ServerPolicy,
        definitions: dict[str, Definition],
        report: SyncReport,
    ) -> dict[str, _New]:
        """Id, manifest and embedding of each tool not seen before (outside any transaction)."""
        async with self._sessionmaker() as session:
            known = {row.name for row in await repository.server_tools(session, policy.server_id)}
            taken = await repository.taken_tool_ids(session)
        prepared: dict[str, _New] = {}
        for name, definition in definitions.items():
            if name in known:
                continue
            tool_id = tool_id_for(policy.server_id, name, taken)
            manifest = manifest_for(policy, tool_id, definition)
            try:
                spec = self._compile(manifest)
            except ReachError as exc:
                report.skip(name, exc.message)
                continue
            taken.add(tool_id)
            prepared[name] = _New(tool_id, definition, manifest, await self._embed(spec))
        return prepared

    async def apply(self, policy: ServerPolicy, listed: list[McpTool]) -> SyncReport:
        """Make the registry hold what ``listed`` says about ``policy``'s server."""
        report = SyncReport(policy.server_id)
        definitions, problems = self._definitions(listed, report)
        prepared = await self._prepare_new(policy, definitions, report)
        listed_names = {tool.name for tool in listed}
        async with self._sessionmaker.begin() as session:
            await registry_repository.lock_registry(session)
            revision = _Revision(session)
            rows = {r.name: r for r in await repository.server_tools(session, policy.server_id)}
            for name, row in rows.items():
                if name not in listed_names:
                    await session.delete(row)
                    await registry_repository.delete_tool(session, row.tool_id)
                    await revision()
                    report.removed.append(row.tool_id)
                    continue
                definition = definitions.get(name)
                problem = problems.get(name, f"{name} cannot be taken in")
                await self._compare(session, row, definition, problem, report, revision)
            for name, new in prepared.items():
                if name in rows or await registry_repository.get_tool(session, new.tool_id):
                    continue
                await _add(session, policy, new, revision)
                report.added.append(new.tool_id)
            for name, problem in problems.items():
                if name not in rows:
                    report.skip(name, problem)
            server = await repository.get_server(session, policy.server_id)
            if server is not None:
                server.synced_at, server.sync_error = datetime.now(UTC), None
            report.revision = revision.value
        return report

    async def _compare(
        self,
        session: AsyncSession,
        row: McpServerTool,
        definition: Definition | None,
        problem: str,
        report: SyncReport,
        revision: _Revision,
    ) -> None:
        if definition is not None:
            seen_hash, seen = definition.hash, definition.stored()
        else:  # listed, but no longer usable: a change like any other
            seen_hash = "sha256:" + hashlib.sha256(problem.encode()).hexdigest()
            seen = {"problem": problem}
        if seen_hash == row.accepted_hash:
            if row.pending_hash is not None:  # the server changed it back
                row.pending_hash = row.pending_definition = row.changed_at = None
                await _set_held_back(session, row.tool_id, False, revision)
                report.released.append(row.tool_id)
            else:
                report.unchanged.append(row.tool_id)
            return
        if seen_hash != row.pending_hash:
            row.pending_hash, row.pending_definition = seen_hash, seen
            row.changed_at = datetime.now(UTC)
            await _set_held_back(session, row.tool_id, True, revision)
        report.held_back.append(row.tool_id)

    async def accept(self, policy: ServerPolicy, names: list[str] | None) -> SyncReport:
        """Accept the held-back definitions of ``names`` (all of them when ``None``)."""
        report = SyncReport(policy.server_id)
        async with self._sessionmaker() as session:
            rows = [
                row
                for row in await repository.server_tools(session, policy.server_id)
                if row.pending_hash is not None and (names is None or row.name in names)
            ]
        if not rows:
            raise NothingToAccept(
                f"MCP server {policy.server_id!r} has no held-back tool definition"
                + (f" named {', '.join(names)[:300]}." if names else ".")
            )
        ready: dict[str, tuple[str, dict[str, Any], list[float]]] = {}
        for row in rows:
            pending = row.pending_definition or {}
            if "problem" in pending:
                raise InvalidManifest(
                    f"Tool {row.name!r} of MCP server {policy.server_id!r} cannot be accepted: "
                    f"{pending['problem']}.",
                )
            manifest = manifest_for(policy, row.tool_id, Definition.from_stored(row.name, pending))
            spec = self._compile(manifest)  # 422 invalid_manifest if the new schema is unusable
            assert row.pending_hash is not None
            ready[row.name] = (row.pending_hash, manifest, await self._embed(spec))
        async with self._sessionmaker.begin() as session:
            await registry_repository.lock_registry(session)
            revision = _Revision(session)
            for row in await repository.server_tools(session, policy.server_id):
                if row.name not in ready or ready[row.name][0] != row.pending_hash:
                    continue  # changed again meanwhile: the next review shows the newer one
                pending_hash, manifest, embedding = ready[row.name]
                row.accepted_hash, row.definition = pending_hash, row.pending_definition or {}
                row.pending_hash = row.pending_definition = row.changed_at = None
                await _write_tool(session, policy, row.tool_id, manifest, embedding, revision)
                report.accepted.append(row.tool_id)
            report.revision = revision.value
        return report


@dataclass(frozen=True)
class _New:
    """A tool not seen before, ready to be written."""

    tool_id: str
    definition: Definition
    manifest: dict[str, Any]
    embedding: list[float]


async def _add(session: AsyncSession, policy: ServerPolicy, new: _New, revision: _Revision) -> None:
    session.add(
        McpServerTool(
            server_id=policy.server_id,
            name=new.definition.name,
            tool_id=new.tool_id,
            accepted_hash=new.definition.hash,
            definition=new.definition.stored(),
        )
    )
    await _write_tool(session, policy, new.tool_id, new.manifest, new.embedding, revision)


async def _write_tool(
    session: AsyncSession,
    policy: ServerPolicy,
    tool_id: str,
    manifest: dict[str, Any],
    embedding: list[float],
    revision: _Revision,
) -> None:
    """Register (or replace) federated tool ``tool_id`` in the registry."""
    tool = await registry_repository.get_tool(session, tool_id)
    if tool is None:
        await registry_repository.add_tool(
            session,
            Tool(
                tool_id=tool_id,
                namespace=policy.namespace,
                manifest=manifest,
                version=1,
                revision=await revision(),
                source=repository.SOURCE,
                source_path=repository.source_path(policy.server_id),
                embedding=embedding,
            ),
        )
        return
    tool.manifest, tool.embedding = manifest, embedding
    tool.version += 1
    tool.revision = await revision()
    tool.updated_at = datetime.now(UTC)


async def _set_held_back(
    session: AsyncSession, tool_id: str, held_back: bool, revision: _Revision
) -> None:
    tool = await registry_repository.get_tool(session, tool_id)
    if tool is None:
        return
    manifest = copy.deepcopy(tool.manifest)
    manifest["endpoint"]["held_back"] = held_back
    tool.manifest = manifest
    tool.version += 1
    tool.revision = await revision()
    tool.updated_at = datetime.now(UTC)
