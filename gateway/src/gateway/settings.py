"""Gateway settings, from the environment."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from gateway.routing.settings import RoutingSettings
from reach_common.settings import CommonSettings, LLMSettings

StringList = Annotated[list[str], NoDecode]


def _string_list(value: Any) -> Any:
    """A JSON list or a comma-separated string, as people write both in env files."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


class Settings(CommonSettings, LLMSettings, RoutingSettings):
    service_name: str = "gateway"
    port: int = Field(
        8080, validation_alias=AliasChoices("GATEWAY_PORT", "PORT"), description="HTTP port."
    )
    shop_url: str = Field("http://127.0.0.1:9000", description="Base URL of the shop service.")
    retriever_url: str = Field(
        "http://127.0.0.1:8082", description="Base URL of the retriever service."
    )
    agent_url: str = Field("http://127.0.0.1:8081", description="Base URL of the agent service.")
    upstream_hosts: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Extra `host:port` → base URL rewrites for manifest URLs (JSON). `shop:9000`, "
            "`retriever:8082` and `agent:8081` always map to SHOP_URL, RETRIEVER_URL and "
            "AGENT_URL, so the shipped manifests work outside compose too."
        ),
    )

    gc_freeze: bool = Field(
        True,
        description=(
            "After start-up, exempt the objects loaded so far from garbage collection "
            "passes (shorter pauses). Turn off when many apps share one process (tests)."
        ),
    )
    redis_max_connections: int = Field(
        256, ge=4, description="Redis connections per gateway process; more callers wait."
    )

    # --- registry ---------------------------------------------------------------------------
    tool_auto_discovery: bool = Field(
        False, description="Load manifests/ at start and follow adds, edits and removals."
    )
    manifests_dir: str = Field("manifests", description="Folder of *.json tool manifests.")
    registry_channel: str = Field(
        "reach:gateway:registry",
        description="Redis pub/sub channel that tells every replica the registry changed.",
    )
    registry_poll_s: float = Field(
        30.0, description="Safety net: re-check the registry revision this often (seconds)."
    )

    # --- auth ----------------------------------------------------------------------------------
    auth_mode: Literal["permissive", "strict"] = Field(
        "permissive",
        description=(
            "'permissive' trusts user_context (development); 'strict' takes the caller only "
            "from a verified API key or JWT."
        ),
    )
    registry_admin_roles: StringList = Field(
        default_factory=lambda: ["admin", "tool_admin"],
        description="In strict mode, roles allowed to register, edit and delete tools.",
    )
    jwt_secret: SecretStr | None = Field(None, description="HS256 shared secret for JWTs.")
    jwt_public_key: str | None = Field(None, description="PEM public key for RS256 JWTs.")
    jwt_issuer: str | None = Field(None, description="Required `iss` of JWTs.")
    jwt_audience: str | None = Field(None, description="Required `aud` of JWTs.")
    jwt_roles_claim: str = Field("roles", description="JWT claim holding the caller's roles.")
    api_key_cache_ttl_s: float = Field(
        30.0, description="How long a verified API key is trusted before it is looked up again."
    )
    egress_allowlist: StringList = Field(
        default_factory=list,
        description=(
            "Hosts, IPs or CIDRs that strict mode lets tools reach even though they are "
            "link-local or cloud-metadata addresses (JSON list or comma-separated)."
        ),
    )

    # --- execution -----------------------------------------------------------------------------
    default_timeout_ms: int = Field(10000, ge=1, description="timeout_ms when a manifest has none.")
    max_response_bytes: int = Field(
        1_048_576, ge=1, description="Largest tool response accepted, in bytes."
    )
    python_tool_packages: StringList = Field(
        default_factory=lambda: ["gateway.pytools"],
        description="Packages whose functions `python` tools may name.",
    )
    breaker_failure_threshold: int = Field(
        5, ge=1, description="Consecutive failures that open a tool's circuit breaker."
    )
    breaker_reset_timeout_ms: int = Field(
        10000, ge=1, description="How long a breaker stays open before one probe is let through."
    )
    task_stream: str = Field("reach:gateway:tasks", description="Default Redis Stream of tasks.")
    task_worker: bool = Field(True, description="Run a queue worker in this process.")
    task_ttl_s: int = Field(86400, description="How long task status and results are kept.")

    # --- limits and audit ----------------------------------------------------------------------
    caller_rate_limit: str | None = Field(
        "600/minute", description="Per-caller limit across all tools, e.g. `600/minute`."
    )
    audit_batch_size: int = Field(200, ge=1, description="Audit rows written per INSERT.")
    audit_queue_size: int = Field(
        10000, ge=1, description="Audit rows waiting to be written before callers wait."
    )
    audit_flush_ms: int = Field(200, ge=1, description="Longest an audit row waits in memory.")

    @field_validator(
        "registry_admin_roles", "egress_allowlist", "python_tool_packages", mode="before"
    )
    @classmethod
    def _split_lists(cls, value: Any) -> Any:
        return _string_list(value)
