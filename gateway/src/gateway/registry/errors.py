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
