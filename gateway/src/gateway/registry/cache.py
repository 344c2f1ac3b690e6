"""The registry's in-memory view: what every request reads instead of the database.

Each replica keeps the whole registry compiled in memory (manifests, argument
validators, embeddings). ``revision`` is the registry-wide revision it
reflects; a router can rebuild its index whenever it changes (``add_listener``).
Refreshes swap in a new snapshot at once, so readers never see half an update.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
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
from reach_common.errors import ReachError

log = structlog.get_logger(__name__)


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
        """Call ``listener(cache)`` after every change of revision (e.g. to rebuild an index)."""
        self._listeners.append(listener)

    async def refresh(self, *, force: bool = False) -> bool:
        """Reload from Postgres if its revision moved; True when the view changed."""
        async with self._lock:
            async with self._sessionmaker() as session, session.begin():
                # One snapshot for the revision and the rows, so they agree.
                await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
                revision = await repository.current_revision(session)
                if revision == self._revision and not force:
                    return False
                rows = await repository.all_tools(session)
            tools: dict[str, RegisteredTool] = {}
            for row in rows:
                known = self._tools.get(row.tool_id)
                if known is not None and (known.version, known.revision) == (
                    row.version,
                    row.revision,
                ):
                    tools[row.tool_id] = known
                    continue
                try:
                    spec = self._compile(row.manifest)
                except (InvalidManifest, ReachError) as exc:
                    # e.g. strict mode now, and this manifest declares no permission.
                    log.warning("tool_not_loaded", tool_id=row.tool_id, reason=exc.reason)
                    continue
                embedding = np.asarray(row.embedding, dtype=np.float32) if row.embedding else None
                tools[row.tool_id] = RegisteredTool(
                    spec=spec,
                    version=row.version,
                    revision=row.revision,
                    source=row.source,
                    source_path=row.source_path,
                    embedding=embedding,
                    updated_at=row.updated_at,
                )
            self._tools = MappingProxyType(tools)
            self._revision = revision
        log.info("registry_loaded", revision=revision, tools=len(tools))
        self.changed.set()
        self.changed.clear()
        for listener in self._listeners:
            try:
                listener(self)
            except Exception:  # a listener's bug must not stop the registry from updating
                log.exception("registry_listener_failed")
        return True
