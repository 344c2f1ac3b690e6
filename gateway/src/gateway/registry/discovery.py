"""``TOOL_AUTO_DISCOVERY``: the manifests folder as a source of tools.

At start every ``*.json`` directly in the folder (``schema.json`` excepted) is
registered or updated, in one batch (one transaction and one revision, however
many files), and tools whose file is gone are removed. While the
gateway runs, ``watchfiles`` reports adds, edits and removals, which are applied
the same way. A broken file is logged and skipped; it never stops the gateway or
removes the tool it used to declare.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import structlog
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_fixed
from watchfiles import Change, awatch

from gateway.background import cancel_and_wait
from gateway.registry.service import RegistryService
from reach_common.errors import ReachError

log = structlog.get_logger(__name__)

SCHEMA_FILE = "schema.json"


def manifest_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != SCHEMA_FILE and p.is_file())


def read_manifest(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        log.warning("manifest_unreadable", path=path.name, error=str(exc))
        return None
    if not isinstance(data, dict):
        log.warning("manifest_unreadable", path=path.name, error="not a JSON object")
        return None
    return data


class ManifestDiscovery:
    def __init__(self, folder: Path, registry: RegistryService) -> None:
        self._folder = folder
        self._registry = registry
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self.watching = asyncio.Event()

    async def load_all(self) -> dict[str, str]:
        """Bring the registry in line with the folder as one batch (one transaction, one
        revision, one embedding pass); returns file → outcome."""
        paths = await asyncio.to_thread(manifest_files, self._folder)
        manifests = await asyncio.to_thread(lambda: [read_manifest(p) for p in paths])
        pairs = list(zip(paths, manifests, strict=True))
        outcomes = {p.name: "unreadable" for p, m in pairs if m is None}
        readable = [(m, p.name) for p, m in pairs if m is not None]
        log.info("manifests_loading", files=len(paths))
        outcomes.update(await self._registry.sync_files(readable))
        await self._registry.remove_files(keep={p.name for p in paths})
        return outcomes

    async def _sync(self, path: Path) -> str:
        manifest = read_manifest(path)
        if manifest is None:
            return "unreadable"
        try:
            return await self._registry.sync_file(manifest, path.name)
        except ReachError as exc:
            log.warning("manifest_refused", path=path.name, reason=exc.reason, error=exc.message)
            return "refused"

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch(), name="manifest-discovery")

    async def stop(self) -> None:
        self._stop.set()
        await cancel_and_wait(self._task)

    async def _watch(self) -> None:
        self._folder.mkdir(parents=True, exist_ok=True)
        # A failed sync must not end discovery: watch again in a second. Cancellation
        # (stop) is not retried.
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(Exception),
            wait=wait_fixed(1.0),
            before_sleep=_log_failure,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                await self._follow()

    async def _follow(self) -> None:
        """Apply the folder's changes until :meth:`stop`."""
        while not self._stop.is_set():
            watcher = awatch(
                self._folder,
                stop_event=self._stop,
                recursive=False,
                debounce=100,
                step=20,
            )
            self.watching.set()
            async for changes in watcher:
                await self._apply(changes)

    async def _apply(self, changes: set[tuple[Change, str]]) -> None:
        gone: set[str] = set()
        for change, raw_path in sorted(changes, key=lambda c: c[1]):
            path = Path(raw_path)
            if path.suffix != ".json" or path.name == SCHEMA_FILE:
                continue
            if change == Change.deleted or not path.exists():  # noqa: ASYNC240 - one stat
                gone.add(path.name)
            else:
                outcome = await self._sync(path)
                log.info("manifest_file_changed", path=path.name, outcome=outcome)
        if gone:
            await self._registry.remove_files(gone=gone)


def _log_failure(state: RetryCallState) -> None:
    failure = state.outcome.exception() if state.outcome else None
    log.error("manifest_watch_failed", exc_info=failure)
