"""Request and response bodies of ``/mcp/servers``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gateway.catalog.spec import MCP_SERVER_ID_PATTERN
from gateway.registry.manifest_model import BearerAuth, NoAuth, OAuth2Auth, Roles
from reach_common.storable import refuse_unstorable

ServerAuth = Annotated[
    NoAuth | BearerAuth | OAuth2Auth,
    Field(
        discriminator="type",
        description=(
            "The gateway's credential towards the server, by secret name (as for http tools: "
            "REACH_SECRET_<NAME> or TOOL_SECRETS_DIR, bound by TOOL_SECRET_HOSTS)."
        ),
    ),
]


class McpServerCreate(BaseModel):
    """An MCP server to federate: its tools become Reach tools named `<server_id>__<tool>`."""

    @model_validator(mode="after")
    def _storable(self) -> McpServerCreate:
        return refuse_unstorable(self)  # a NUL or half a surrogate pair: 422, not a 500

    model_config = ConfigDict(extra="forbid", strict=True)

    server_id: Annotated[
        str,
        Field(
            pattern=MCP_SERVER_ID_PATTERN,
            description="Lower-case letters and digits, at most 20; the prefix of its tool ids.",
            examples=["helpdesk"],
        ),
    ]
    transport: Literal["http", "stdio"] = Field(
        description="`http`: Streamable HTTP at `url`; `stdio`: the MCP_STDIO_COMMANDS entry "
        "named `command`."
    )
    url: Annotated[str, Field(pattern=r"^https?://[^\s/?#@]+", max_length=2000)] | None = None
    command: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")] | None = None
    auth: ServerAuth = NoAuth(type="none")
    namespace: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")] | None = Field(
        None, description="Namespace of its tools; default: the server id."
    )
    permission: Literal["public", "user", "admin"] = Field(
        "user", description="Who may call its tools (as a manifest's `permission`)."
    )
    scope: Roles = Field(default_factory=list, description="Roles that may call admin tools.")
    timeout_ms: Annotated[int, Field(ge=1, le=600_000)] | None = None
    max_retries: Annotated[int, Field(ge=0, le=5)] = Field(
        1, description="Retries of its read-only tools (`readOnlyHint`); others are never retried."
    )

    @model_validator(mode="after")
    def _one_way_in(self) -> McpServerCreate:
        if self.transport == "http" and (self.url is None or self.command is not None):
            raise ValueError("an http server needs `url` (and no `command`)")
        if self.transport == "stdio" and (self.command is None or self.url is not None):
            raise ValueError("a stdio server needs `command` (and no `url`)")
        if self.url is not None and urlsplit(self.url).username is not None:
            raise ValueError("`url` may not carry credentials; use `auth` with a secret name")
        if self.transport == "stdio" and self.auth.type != "none":
            raise ValueError("a stdio server takes no `auth`")
        if self.permission == "admin" and not self.scope:
            raise ValueError("`admin` needs `scope`: the roles that may call its tools")
        return self


class McpServerAccept(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: list[Annotated[str, Field(min_length=1, max_length=128)]] | None = Field(
        None, description="Upstream tool names to accept; all held-back ones when left out."
    )


class McpToolRead(BaseModel):
    name: str = Field(description="The tool's name on the server.")
    tool_id: str
    state: Literal["active", "held_back"]
    definition_hash: str
    pending_hash: str | None = None
    pending_definition: dict[str, Any] | None = Field(
        None, description="The changed definition waiting for an admin (held-back tools)."
    )
    changed_at: datetime | None = None


class SyncRead(BaseModel):
    server_id: str
    added: list[str]
    removed: list[str]
    held_back: list[str]
    released: list[str]
    accepted: list[str]
    unchanged: list[str]
    skipped: list[dict[str, str]] = Field(description="Tools not taken in, each with why.")
    revision: int | None = Field(description="Registry revision after the change, if any.")


class McpServerRead(BaseModel):
    server_id: str
    namespace: str
    transport: str
    url: str | None
    command: str | None
    auth: dict[str, Any] = Field(description="Credential by reference: secret names only.")
    permission: str
    scope: list[str]
    timeout_ms: int | None
    max_retries: int
    created_by: str
    created_at: datetime
    synced_at: datetime | None
    sync_error: str | None
    tools: list[McpToolRead]
    last_sync: SyncRead | None = None


class McpServerList(BaseModel):
    servers: list[McpServerRead]
