"""Virtual server errors (listed in ``reach_common.errors``'s tree)."""

from __future__ import annotations

from reach_common.errors import Conflict, NotFound


class VirtualServerNotFound(NotFound):
    reason = "virtual_server_not_found"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"No MCP virtual server {name!r}; GET /mcp/virtual-servers lists them.", name=name
        )


class VirtualServerExists(Conflict):
    reason = "virtual_server_exists"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"An MCP virtual server {name!r} exists already; PUT /mcp/virtual-servers/{name} "
            "changes it.",
            name=name,
        )
