"""The registry's in-memory view: what every request reads instead of the database.

Each replica keeps the whole registry compiled in memory (manifests, argument
validators, embeddings). ``revision`` is the registry-wide revision it
reflects. A change costs work proportional to the change, not to the registry:

- ``apply(delta)``: a write names the tools it changed and removed
  (:class:`RegistryDelta`); the view reads and compiles just those rows. The
  writer applies its own delta, and every other replica the one it hears on
  the registry channel (``sync``).
- ``refresh()``: catch up after deltas were missed (a gap in revisions, a
  reconnect, the periodic re-check, a writer that announces only a revision):
  one light listing of ``(tool_id, version, revision)``, then only the rows
  that differ are read and compiled, and the tools no longer listed dropped.
- ``refresh(force=True)``: read everything (at start).

Each change swaps in a new snapshot at once, so readers never see half an
update; listeners (``add_listener``) hear of every change of revision, and
``changed_since`` tells them which tools moved, so a routing index updates just
those.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.catalog.spec import ToolSpec
from gateway.registry import repository
from gateway.registry.errors import InvalidManifest
from gateway.registry.models import Tool
from reach_common.errors import ReachError

log = structlog.get_logger(__name__)

# Deltas remembered for ``changed_since``; a reader further behind rebuilds from the view.
_LOG_SIZE = 1024


@dataclass(frozen=True)
class RegisteredTool:
    """One tool as the registry holds it: compiled manifest plus bookkeeping."""

    spec: ToolSpec
    version: int
    revision: int
    source: str
    source_path: str | None
    embedding: npt.NDArray[np.float32] | None
    updated_at: datetime

    @property
    def tool_id(self) -> str:
        return self.spec.tool_id


@dataclass(frozen=True)
class RegistryDelta:
    """What one registry write did: the revision it made, the tools it added or changed
    (to be read again) and the tools it removed."""

    revision: int
    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    def as_message(self) -> dict[str, Any]:
        return {"revision": self.revision, "changed": self.changed, "deleted": self.deleted}

    @classmethod
    def from_message(cls, data: Any) -> RegistryDelta | None:
        """The delta in a channel message, or None when it carries none (a bare revision)."""
        if not isinstance(data, dict):
            return None
        revision, changed, deleted = data.get("revision"), data.get("changed"), data.get("deleted")
        if not isinstance(revision, int) or not isinstance(changed, list):
            return None
        if not isinstance(deleted, list):
            return None
        if not all(isinstance(t, str) for t in (*changed, *deleted)):
            return None
        return cls(revision, tuple(changed), tuple(deleted))


Compiler = Callable[[dict[str, Any]], ToolSpec]
Listener = Callable[["RegistryCache"], None]


class RegistryCache:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], compile: Compiler) -> None:
        self._sessionmaker = sessionmaker
        self._compile = compile
        self._tools: Mapping[str, RegisteredTool] = MappingProxyType({})
        self._revision = -1
        self._lock = asyncio.Lock()
        self._listeners: list[Listener] = []
        # (version, revision) of rows this mode refuses, so catching up skips them.
        self._refused: dict[str, tuple[int, int]] = {}
        self._log: deque[tuple[int, frozenset[str]]] = deque()
        self._log_floor = -1  # changed_since knows nothing at or before this revision
        self.rows_read = 0  # full tool rows read from Postgres (a measure of a change's cost)
        self.changed = asyncio.Event()

    @property
    def revision(self) -> int:
        """The registry revision this view reflects (-1 before the first load)."""
        return self._revision

    @property
    def tools(self) -> Mapping[str, RegisteredTool]:
        """tool_id → tool; an immutable snapshot."""
        return self._tools

    def get(self, tool_id: str) -> RegisteredTool | None:
        return self._tools.get(tool_id)

    def add_listener(self, listener: Listener) -> None:
        """Call ``listener(cache)`` after every change of revision (e.g. to update an index)."""
        self._listeners.append(listener)

    def changed_since(self, revision: int) -> frozenset[str] | None:
        """Ids of the tools added, changed or removed after ``revision``; None when the view
        no longer remembers that far back (then compare with ``tools`` instead)."""
        if revision < self._log_floor:
            return None
        ids: set[str] = set()
        for at, changed in reversed(self._log):
            if at <= revision:
                break
            ids.update(changed)
        return frozenset(ids)

    async def apply(self, delta: RegistryDelta) -> bool:
        """Bring the view to ``delta.revision`` by reading only the tools it names; True when
        the view changed. A view that is not at the revision before (a delta missed, or
        still on its way) catches up with :meth:`refresh` instead."""
        async with self._lock:
            if delta.revision <= self._revision:
                return False
            if delta.revision != self._revision + 1:
                log.info("registry_delta_gap", have=self._revision, got=delta.revision)
                changed = await self._catch_up(force=False)
            else:
                changed = await self._apply_rows(delta)
        return self._notify(changed)

    async def _apply_rows(self, delta: RegistryDelta) -> bool:
        # The delta only says where to look; Postgres says what is there. A message
        # ahead of the database (forged, or the writer rolled back) changes nothing,
        # and a tool named as deleted goes only if its row is really gone.
        named = sorted({*delta.changed, *delta.deleted})
        async with self._sessionmaker() as session, session.begin():
            await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            if await repository.current_revision(session) < delta.revision:
                log.warning("registry_delta_ahead", have=self._revision, got=delta.revision)
                return False
            rows = await repository.tools_by_id(session, named) if named else []
        tools = dict(self._tools)
        gone = set(named) - {row.tool_id for row in rows}
        for tool_id in gone:
            tools.pop(tool_id, None)
        await asyncio.to_thread(self._merge, tools, rows)
        return self._install(tools, delta.revision, named, len(rows))

    async def refresh(self, *, force: bool = False) -> bool:
        """Catch up with Postgres if its revision moved (``force``: read every row again);
        True when the view changed."""
        async with self._lock:
            changed = await self._catch_up(force=force)
        return self._notify(changed)

    async def _catch_up(self, *, force: bool) -> bool:
        async with self._sessionmaker() as session, session.begin():
            # One snapshot for the revision and the rows, so they agree.
            await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
            revision = await repository.current_revision(session)
            if revision == self._revision and not force:
                return False
            if force:
                rows = list(await repository.all_tools(session))
                listed = {row.tool_id for row in rows}
            else:
                versions = await repository.tool_versions(session)
                listed = {tool_id for tool_id, _, _ in versions}
                stale = [tool_id for tool_id, v, r in versions if not self._current(tool_id, v, r)]
                rows = list(await repository.tools_by_id(session, stale)) if stale else []
        tools = {tool_id: tool for tool_id, tool in self._tools.items() if tool_id in listed}
        gone = set(self._tools) - listed
        self._refused = {t: v for t, v in self._refused.items() if t in listed}
        await asyncio.to_thread(self._merge, tools, rows, reuse=force)
        if force:
            self._log.clear()
            self._log_floor = revision
        return self._install(tools, revision, {*gone, *(row.tool_id for row in rows)}, len(rows))

    def _current(self, tool_id: str, version: int, revision: int) -> bool:
        known = self._tools.get(tool_id)
        if known is not None:
            return (known.version, known.revision) == (version, revision)
        return self._refused.get(tool_id) == (version, revision)

    def _merge(
        self, tools: dict[str, RegisteredTool], rows: Iterable[Tool], *, reuse: bool = False
    ) -> None:
        """Compile ``rows`` into ``tools``; ``reuse``: keep a tool whose row has not moved.
        Run in a worker thread (under the view's lock): a manifest of 10,000 schema nodes
        takes 2 s to compile, which would stop the event loop of every replica."""
        for row in rows:
            if reuse and self._current(row.tool_id, row.version, row.revision):
                continue
            tool = self._compiled(row)
            if tool is None:
                tools.pop(row.tool_id, None)
                self._refused[row.tool_id] = (row.version, row.revision)
            else:
                tools[row.tool_id] = tool
                self._refused.pop(row.tool_id, None)

    def _compiled(self, row: Tool) -> RegisteredTool | None:
        try:
            spec = self._compile(row.manifest)
        except (InvalidManifest, ReachError) as exc:
            # e.g. strict mode now, and this manifest declares no permission.
            log.warning("tool_not_loaded", tool_id=row.tool_id, reason=exc.reason)
            return None
        embedding = np.asarray(row.embedding, dtype=np.float32) if row.embedding else None
        return RegisteredTool(
            spec=spec,
            version=row.version,
            revision=row.revision,
            source=row.source,
            source_path=row.source_path,
            embedding=embedding,
            updated_at=row.updated_at,
        )

    def _install(
        self, tools: dict[str, RegisteredTool], revision: int, ids: Collection[str], read: int
    ) -> bool:
        self._tools = MappingProxyType(tools)
        self._revision = revision
        self.rows_read += read
        self._log.append((revision, frozenset(ids)))
        while len(self._log) > _LOG_SIZE:
            self._log_floor = self._log.popleft()[0]
        log.info(
            "registry_loaded", revision=revision, tools=len(tools), changed=len(ids), read=read
        )
        return True

    def _notify(self, changed: bool) -> bool:
        if not changed:
            return False
        self.changed.set()
        self.changed.clear()
        for listener in self._listeners:
            try:
                listener(self)
            except Exception:  # a listener's bug must not stop the registry from updating
                log.exception("registry_listener_failed")
        return True
