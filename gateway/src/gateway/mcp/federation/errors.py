"""How registering and syncing a federated MCP server can fail."""

from __future__ import annotations

from reach_common.errors import Conflict, NotFound, ReachError


class McpServerNotFound(NotFound):
    reason = "mcp_server_not_found"

    def __init__(self, server_id: str) -> None:
        super().__init__(f"No MCP server {server_id!r} is registered.", server_id=server_id)


class McpServerExists(Conflict):
    reason = "mcp_server_exists"

    def __init__(self, server_id: str) -> None:
        super().__init__(
            f"MCP server {server_id!r} is registered already; DELETE it first to register it anew.",
            server_id=server_id,
        )


class McpCommandNotAllowed(ReachError):
    """A stdio server must be one an operator listed; no command comes from a request."""

    status_code = 403
    reason = "mcp_command_not_allowed"


class McpUpstreamError(ReachError):
    """The server could not be reached, or what it answered cannot be taken in."""

    status_code = 502
    reason = "mcp_upstream_error"


class NothingToAccept(Conflict):
    reason = "nothing_to_accept"
