"""Checks of a batch of manifests, before anything is embedded or written.

A batch is all or nothing: every manifest is compiled and every problem is
reported with the manifest's position (``index``), so a client fixes them all
in one round instead of one per attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gateway.catalog.spec import ToolSpec
from gateway.registry.errors import BatchRefused, BatchTooLarge, ToolExists
from reach_common.errors import ReachError, Unprocessable, error_body

MAX_REPORTED = 100  # problems listed in one answer (a batch of thousands could list all)


def problem(index: int, tool_id: str | None, error: ReachError) -> dict[str, Any]:
    """One refused manifest: the error's body, with the manifest's position and id."""
    item = error_body(error, index=index)
    if tool_id is not None:
        item["tool_id"] = tool_id
    del item["trace_id"]  # the answer carries the request's
    return item


def _tool_id(manifest: Any) -> str | None:
    value = manifest.get("tool_id") if isinstance(manifest, dict) else None
    return value if isinstance(value, str) else None


def compile_batch(
    compile: Callable[[Any], ToolSpec], manifests: Sequence[Any], limit: int
) -> list[ToolSpec]:
    """Every manifest compiled, or :class:`BatchRefused` naming each one that is not
    (invalid, or a ``tool_id`` the batch already has)."""
    if not manifests:
        empty = Unprocessable("The batch holds no manifest.", reason="empty_batch")
        raise BatchRefused([problem(0, None, empty)], 0)
    if len(manifests) > limit:
        raise BatchTooLarge(len(manifests), limit)
    specs: list[ToolSpec] = []
    problems: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, manifest in enumerate(manifests):
        try:
            spec = compile(manifest)
        except ReachError as exc:
            problems.append(problem(index, _tool_id(manifest), exc))
            continue
        first = seen.setdefault(spec.tool_id, index)
        if first != index:
            repeated = Unprocessable(
                f"Manifest #{index} repeats tool_id {spec.tool_id!r} of manifest #{first}.",
                reason="duplicate_tool_id",
            )
            problems.append(problem(index, spec.tool_id, repeated))
        specs.append(spec)
    if problems:
        raise BatchRefused(problems[:MAX_REPORTED], len(manifests))
    return specs


def refuse_existing(specs: Sequence[ToolSpec], existing: dict[str, int]) -> None:
    """:class:`BatchRefused` (409) when any of ``specs`` is registered already."""
    problems = [
        problem(index, spec.tool_id, ToolExists(spec.tool_id, existing[spec.tool_id]))
        for index, spec in enumerate(specs)
        if spec.tool_id in existing
    ]
    if problems:
        raise BatchRefused(problems[:MAX_REPORTED], len(specs))
