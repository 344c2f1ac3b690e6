"""Registry errors: what a client did wrong when registering or editing a tool."""

from __future__ import annotations

from typing import Any

from reach_common.errors import Conflict, NotFound, Unprocessable


class InvalidManifest(Unprocessable):
    reason = "invalid_manifest"

    def __init__(self, message: str, *, reason: str | None = None, **details: Any) -> None:
        super().__init__(message, reason=reason, **details)


class ToolNotFound(NotFound):
    reason = "tool_not_found"

    def __init__(self, tool_id: str) -> None:
        super().__init__(
            f"No tool {tool_id!r} is registered (or you may not use it); "
            "GET /tools/list shows the tools you can call.",
            tool_id=tool_id,
        )


class ToolExists(Conflict):
    reason = "tool_exists"

    def __init__(self, tool_id: str, version: int) -> None:
        super().__init__(
            f"Tool {tool_id!r} is already registered (version {version}); "
            "use PUT /tools/{id} to change it.",
            tool_id=tool_id,
            version=version,
        )


class StaleRevision(Conflict):
    reason = "stale_revision"

    def __init__(self, tool_id: str, expected: int, current: int) -> None:
        super().__init__(
            f"Tool {tool_id!r} changed since version {expected}; it is at version {current}. "
            "Read it again, reapply your edit and send If-Match with the new version.",
            tool_id=tool_id,
            expected_version=expected,
            current_version=current,
        )


class ToolIdMismatch(Unprocessable):
    reason = "tool_id_mismatch"

    def __init__(self, path_id: str, body_id: str) -> None:
        super().__init__(
            f"The URL names tool {path_id!r} but the manifest says {body_id!r}; "
            "a tool's id cannot change.",
        )


class VersionNotFound(NotFound):
    reason = "version_not_found"

    def __init__(self, tool_id: str, version: int) -> None:
        super().__init__(
            f"Tool {tool_id!r} has no recorded version {version}; "
            "GET /tools/{id}/history lists the versions it had.",
            tool_id=tool_id,
            version=version,
        )


class BatchRefused(Unprocessable):
    """A batch of manifests of which some cannot be registered; none was. ``errors`` lists
    each problem with the manifest's ``index`` in the batch, its ``tool_id`` when it has
    one, ``reason`` and ``message``."""

    reason = "batch_refused"

    def __init__(self, problems: list[dict[str, Any]], total: int) -> None:
        first = problems[0]
        conflicts = {"tool_exists", "duplicate_tool_id"}
        super().__init__(
            f"{len(problems)} of {total} manifests cannot be registered, so none was. "
            f"First, #{first['index']}: {first['message']}",
            status_code=409 if all(p["reason"] in conflicts for p in problems) else None,
            errors=problems,
        )


class BatchTooLarge(Unprocessable):
    reason = "batch_too_large"

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"A batch holds at most {limit} manifests (REGISTRY_BATCH_MAX); this one has "
            f"{size}. Send it in several batches.",
            size=size,
            limit=limit,
        )
