"""``/mcp/virtual-servers`` request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gateway.mcp.surface import RESERVED_NAMES
from reach_common.storable import refuse_unstorable

Name = Annotated[str, Field(max_length=200, min_length=1)]


class VirtualServerWrite(BaseModel):
    """What a virtual server offers. A tool belongs when it is in one of ``namespaces``,
    carries one of ``tags`` or is named in ``tool_ids``; all three empty: every tool.
    Callers still see only the tools they may call."""

    @model_validator(mode="after")
    def _storable(self) -> VirtualServerWrite:
        return refuse_unstorable(self)  # a NUL or half a surrogate pair: 422, not a 500

    model_config = ConfigDict(extra="forbid")

    description: str = Field("", max_length=2000)
    namespaces: list[Name] = Field(default_factory=list, max_length=100)
    tags: list[Name] = Field(default_factory=list, max_length=100)
    tool_ids: list[Name] = Field(default_factory=list, max_length=1000)
    routed: bool = Field(
        False,
        description=(
            "Serve the meta-tools find_tools, run and call_tool over these tools instead of "
            "listing them (for catalogues too large to list)."
        ),
    )
    top_k: int = Field(5, ge=1, le=20, description="find_tools' default number of tools.")


class VirtualServerCreate(VirtualServerWrite):
    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$",
        description="Served at /mcp/{name}.",
        examples=["inventory"],
    )

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, name: str) -> str:
        if name in RESERVED_NAMES:
            raise ValueError(f"{name!r} is a reserved path under /mcp")
        return name


class VirtualServerRead(VirtualServerCreate):
    model_config = ConfigDict(from_attributes=True)

    version: int
    endpoint: str = Field(description="Where MCP clients connect: /mcp/{name}.")
    created_by: str | None
    created_at: datetime
    updated_at: datetime


class VirtualServerList(BaseModel):
    servers: list[VirtualServerRead]
