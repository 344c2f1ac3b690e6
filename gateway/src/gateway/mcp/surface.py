"""What one MCP endpoint offers: the whole registry (``/mcp``) or a virtual server.

A virtual server is a named, curated subset of the registry: tools in some
namespaces, with some tags, or listed by id (any of them; none at all means the
whole registry). A ``routed`` server lists no tools of its own but three
meta-tools (``find_tools``, ``run``, ``call_tool``) over that subset. Every
surface still shows each caller only what ``can_use`` lets them call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.catalog.spec import ToolSpec
from reach_common.auth.caller import Caller

RESERVED_NAMES = frozenset({"servers", "virtual-servers"})
"""Paths under ``/mcp/`` that are the API's, never a virtual server's."""


@dataclass(frozen=True)
class Surface:
    name: str | None = None  # None: the whole registry at /mcp
    namespaces: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    tool_ids: frozenset[str] = frozenset()
    routed: bool = False
    top_k: int = 5

    @property
    def curated(self) -> bool:
        return bool(self.namespaces or self.tags or self.tool_ids)

    def includes(self, spec: ToolSpec) -> bool:
        """Is ``spec`` part of this surface (before any permission check)?"""
        if not self.curated:
            return True
        if spec.tool_id in self.tool_ids or spec.namespace in self.namespaces:
            return True
        tags = spec.manifest.get("tags") or ()
        return any(tag in self.tags for tag in tags)


WHOLE_REGISTRY = Surface()


@dataclass(frozen=True)
class McpCall:
    """One HTTP request to an MCP endpoint, as its handlers need it: who calls (resolved
    once, from the request's credential), through which surface, and the request's own
    headers (``Idempotency-Key``) and client address (rate-limit key)."""

    caller: Caller
    surface: Surface
    headers: Mapping[str, str] = field(default_factory=dict)
    client_ip: str | None = None


SCOPE_KEY = "reach.mcp"
"""Where the ASGI endpoint leaves the :class:`McpCall` in the request's scope."""
