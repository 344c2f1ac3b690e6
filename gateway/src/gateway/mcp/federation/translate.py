"""An upstream MCP tool definition → a Reach tool manifest, and the definition's hash.

The hash covers what a model reads and what the gateway validates (description and
input schema): a change to either is how a trusted server turns hostile, so the
service holds such a tool back until an admin accepts it. ``readOnlyHint: true``
makes the tool idempotent, and only such tools are retried.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from mcp.types import Tool

DESCRIPTION_MIN, DESCRIPTION_MAX, NAME_MAX = 10, 4000, 200


@dataclass(frozen=True)
class Definition:
    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    read_only: bool

    @property
    def hash(self) -> str:
        canonical = json.dumps(
            {"description": self.description, "input_schema": self.input_schema},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def stored(self) -> dict[str, Any]:
        """What the database keeps of it (and what an admin reviews before accepting)."""
        return {
            "title": self.title,
            "description": self.description,
            "input_schema": self.input_schema,
            "read_only": self.read_only,
        }

    @classmethod
    def from_stored(cls, name: str, stored: dict[str, Any]) -> Definition:
        return cls(
            name=name,
            title=stored.get("title"),
            description=str(stored.get("description", "")),
            input_schema=dict(stored.get("input_schema") or {}),
            read_only=bool(stored.get("read_only")),
        )


def definition_of(tool: Tool, max_schema_bytes: int) -> Definition | str:
    """The definition of ``tool``, or why it cannot be taken in (a problem, as text)."""
    schema = tool.input_schema
    size = len(json.dumps(schema, separators=(",", ":")))
    if size > max_schema_bytes:
        return (
            f"its input schema is {size} bytes; at most {max_schema_bytes} (MCP_MAX_SCHEMA_BYTES)"
        )
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'its input schema is not {"type": "object", ...}'
    description = tool.description or ""
    if len(description) > 4 * DESCRIPTION_MAX:
        return f"its description is {len(description)} characters; at most {4 * DESCRIPTION_MAX}"
    annotations = tool.annotations
    title = tool.title or (annotations.title if annotations else None)
    return Definition(
        name=tool.name,
        title=title[:NAME_MAX] if title else None,
        description=description,
        input_schema=schema,
        read_only=bool(annotations and annotations.read_only_hint is True),
    )


@dataclass(frozen=True)
class ServerPolicy:
    """What the registration says about all of a server's tools."""

    server_id: str
    namespace: str
    permission: str
    scope: tuple[str, ...]
    timeout_ms: int | None
    max_retries: int


def manifest_for(
    server: ServerPolicy, tool_id: str, definition: Definition, *, held_back: bool = False
) -> dict[str, Any]:
    """The manifest the registry holds for an accepted ``definition``."""
    description = definition.description.strip()
    if len(description) < DESCRIPTION_MIN:
        description = f"{definition.name} (tool of MCP server {server.server_id}). {description}"
    manifest: dict[str, Any] = {
        "tool_id": tool_id,
        "name": definition.title or definition.name,
        "namespace": server.namespace,
        "description": description[:DESCRIPTION_MAX],
        "tags": ["mcp", server.server_id],
        "input_schema": definition.input_schema,
        "endpoint": {
            "type": "mcp",
            "server": server.server_id,
            "tool": definition.name,
            "definition_hash": definition.hash,
            "held_back": held_back,
        },
        "permission": server.permission,
        "idempotent": definition.read_only,
        "retry_policy": {"max_retries": server.max_retries if definition.read_only else 0},
    }
    if server.scope:
        manifest["scope"] = list(server.scope)
    if server.timeout_ms is not None:
        manifest["timeout_ms"] = server.timeout_ms
    return manifest
