"""``POST /tools/import/openapi`` request and response bodies."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reach_common.storable import refuse_unstorable

Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"]


class OpenApiImportRequest(BaseModel):
    """Where the document is, and how its operations become tools."""

    @model_validator(mode="after")
    def _storable(self) -> OpenApiImportRequest:
        return refuse_unstorable(self)  # a NUL or half a surrogate pair: 422, not a 500

    model_config = ConfigDict(extra="forbid")

    document: dict[str, Any] | str | None = Field(
        None, description="The document inline: an object, or its JSON or YAML text."
    )
    url: str | None = Field(
        None,
        max_length=2000,
        description="Or where to read it (egress rules apply; no redirects are followed).",
    )
    base_url: str | None = Field(
        None,
        pattern=r"^https?://[^\s/?#{}]+[^\s?#{}]*$",
        max_length=1000,
        description="Where the operations are called; default: the document's first server "
        "(a relative one is read against `url`).",
    )
    namespace: str = Field("default", pattern=r"^[a-z][a-z0-9_-]{0,63}$")
    permission: Literal["public", "user", "admin"] = Field(
        "user",
        description="Who may call the imported tools: `user` (any authenticated caller) "
        "unless you say otherwise; `admin` needs `scope`.",
    )
    scope: list[str] = Field(default_factory=list, max_length=50)
    id_prefix: str = Field(
        "", pattern=r"^([a-z][a-z0-9_]{0,30})?$", description="Put before every tool id."
    )
    operations: list[str] | None = Field(
        None,
        max_length=1000,
        description="Only these operations (by operationId or resulting tool id).",
    )
    methods: list[Method] | None = Field(None, description="Only operations with these methods.")
    dry_run: bool = Field(True, description="Only show what would be registered (default).")
    approval_for_writes: bool = Field(
        True,
        description="Imported non-idempotent operations (POST, PATCH) need a person's "
        "approval per call (`requires_approval`).",
    )
    output_schema: bool = Field(True, description="Copy each 2xx JSON response schema.")

    @model_validator(mode="after")
    def _one_source(self) -> OpenApiImportRequest:
        if (self.document is None) == (self.url is None):
            raise ValueError("send exactly one of `document` and `url`")
        if self.permission == "admin" and not self.scope:
            raise ValueError("`permission: admin` needs the roles in `scope`")
        return self


class ProposedTool(BaseModel):
    tool_id: str
    operation_id: str | None
    method: str
    path: str
    url: str
    idempotent: bool
    requires_approval: bool
    flags: list[str] = Field(description="Untrusted-text flags raised by the description.")
    notes: list[str] = Field(description="What of the operation could not be mapped.")
    manifest: dict[str, Any]


class SkippedOperation(BaseModel):
    method: str
    path: str
    operation_id: str | None
    reason: str = Field(examples=["tool_exists", "unsupported_parameter", "not_selected"])
    message: str


class OpenApiImportResult(BaseModel):
    dry_run: bool
    source: str = Field(description="The URL read, or `inline`.")
    title: str | None
    openapi_version: str
    operations_found: int
    proposed: int = Field(description="Manifests proposed (the tools below).")
    registered: int = Field(description="Tools registered (0 in a dry run).")
    revision: int | None = Field(description="The registry revision after the batch.")
    tools: list[ProposedTool]
    skipped: list[SkippedOperation]
