"""Registry request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from gateway.registry.cache import RegisteredTool


class ToolChanged(BaseModel):
    status: Literal["registered", "updated", "deleted"]
    tool_id: str = Field(examples=["inventory_query"])
    version: int = Field(description="The tool's version; send it as If-Match to edit it.")
    revision: int = Field(description="The registry-wide revision after this change.")
    flags: list[str] | None = Field(
        None,
        description="Untrusted-text flags the description raised (recorded, not refused); "
        "left out when there are none.",
    )

    @field_validator("flags")
    @classmethod
    def _none_when_empty(cls, value: list[str] | None) -> list[str] | None:
        return value or None


class ToolSummary(BaseModel):
    """What a caller needs to decide to use a tool and to call it."""

    tool_id: str
    name: str
    namespace: str
    description: str
    aliases: list[str]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    endpoint_type: Literal["http", "python", "queue", "mcp"]
    permission: Literal["public", "user", "admin"]
    scope: list[str]
    idempotent: bool
    requires_approval: bool
    timeout_ms: int
    version: int

    @classmethod
    def of(cls, tool: RegisteredTool) -> ToolSummary:
        spec = tool.spec
        return cls(
            tool_id=spec.tool_id,
            name=spec.name,
            namespace=spec.namespace,
            description=spec.description,
            aliases=list(spec.aliases),
            input_schema=spec.input_schema,
            output_schema=spec.output_schema,
            endpoint_type=spec.endpoint.type,
            permission=spec.permission,
            scope=list(spec.scope),
            idempotent=spec.idempotent,
            requires_approval=spec.requires_approval,
            timeout_ms=spec.timeout_ms,
            version=tool.version,
        )


class ToolList(BaseModel):
    revision: int = Field(description="Registry revision this list reflects.")
    tools: list[ToolSummary]


class ToolRead(ToolSummary):
    revision: int
    source: Literal["api", "file", "mcp"]
    updated_at: datetime
    manifest: dict[str, Any] | None = Field(
        None, description="The manifest exactly as registered (registry admins only)."
    )

    @classmethod
    def of(cls, tool: RegisteredTool, *, with_manifest: bool = False) -> ToolRead:
        summary = ToolSummary.of(tool)
        return cls(
            **summary.model_dump(),
            revision=tool.revision,
            source=tool.source,
            updated_at=tool.updated_at,
            manifest=tool.spec.manifest if with_manifest else None,
        )


class ToolBatch(BaseModel):
    """Manifests to register together."""

    tools: list[Any] = Field(
        description="New tool manifests (see manifests/schema.json), at most "
        "REGISTRY_BATCH_MAX; all are registered or none.",
    )


class ToolsRegistered(BaseModel):
    status: Literal["registered"] = "registered"
    revision: int = Field(description="The one registry revision the whole batch made.")
    tools: list[ToolChanged]
