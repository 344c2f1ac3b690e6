"""Gateway settings, from the environment."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator

from gateway.catalog.spec import DEFAULT_STREAM_NAME, DEFAULT_STREAM_PREFIX, stream_key
from gateway.routing.settings import RoutingSettings
from reach_common.settings import CommonSettings, LLMSettings, StringList, string_list


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
    registry_batch_max: int = Field(
        1000, ge=1, description="Most manifests one `POST /tools:batch` registers (all or none)."
    )

    # --- auth ----------------------------------------------------------------------------------
    registry_admin_roles: StringList = Field(
        default_factory=lambda: ["admin", "tool_admin"],
        description=(
            "Roles allowed to register, edit and delete tools and to read raw manifests "
            "(in permissive mode a claimed role counts)."
        ),
    )
    ops_roles: StringList = Field(
        default_factory=lambda: ["ops"],
        description=(
            "Roles (besides registry admins) that may read every trace and GET /upstreams."
        ),
    )
    ui_session_ttl_s: int = Field(
        3600,
        ge=60,
        le=7 * 86400,
        description=(
            "How long a trace viewer sign-in (/ui/login) lasts, in seconds. Signing out, "
            "or revoking the API key used, ends it sooner."
        ),
    )
    allow_anonymous_registry_writes: bool = Field(
        False,
        description=(
            "Development only, ignored in strict mode: let callers with no identity at all "
            "change the registry."
        ),
    )
    egress_allowlist: StringList = Field(
        default_factory=list,
        description=(
            "Hosts, IPs or CIDRs that strict mode lets tools reach although they are not "
            "public addresses (loopback, private, link-local, metadata); JSON list or "
            "comma-separated. Strict mode reaches nothing else that is not public."
        ),
    )

    # --- tool secrets --------------------------------------------------------------------------
    tool_secrets_dir: str | None = Field(
        None,
        description=(
            "Folder of tool secrets, one file per secret named as in manifests (a mounted "
            "Kubernetes Secret). Values may also come from REACH_SECRET_<NAME> variables."
        ),
    )
    tool_secret_hosts: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            'Where each tool secret may be sent (JSON): {"internal.order.read": '
            '["internal-order-svc", "shop:9000"]}. A secret goes to no other host.'
        ),
    )

    # --- execution -----------------------------------------------------------------------------
    default_timeout_ms: int = Field(10000, ge=1, description="timeout_ms when a manifest has none.")
    max_response_bytes: int = Field(
        1_048_576, ge=1, description="Largest tool response accepted, in bytes."
    )
    max_output_bytes: int = Field(
        100_000,
        ge=1024,
        description=(
            "Output budget of a tool whose manifest sets none, as compact UTF-8 JSON: a larger "
            "output answers a valid-JSON preview and a handle (docs/tool-outputs.md)."
        ),
    )
    max_output_tokens: int = Field(
        25_000,
        ge=256,
        description="The same budget in model tokens (4 bytes each); the smaller one applies.",
    )
    output_handle_ttl_s: int = Field(
        86400, ge=60, description="How long the retriever keeps a full output behind its handle."
    )
    output_store_timeout_s: float = Field(
        30.0, gt=0, description="How long storing one full output in the retriever may take."
    )
    output_store_secret: str = Field(
        "retriever_api_key",
        description=(
            "Tool secret (a retriever API key with a RETRIEVER_DELEGATE_ROLES role) the gateway "
            "stores full outputs with, for their caller. Unset: it claims the caller's identity "
            "(accepted by a permissive retriever only)."
        ),
    )
    tool_http_client: Literal["h11", "httpx"] = Field(
        "h11",
        description=(
            "Client for `http` tools: `h11` (lean, less CPU per call) or `httpx`; "
            "`make bench-gateway` compares them."
        ),
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
    max_argument_chars: int = Field(
        65536,
        ge=1,
        description=(
            "Longest string (value or object key) a tool argument may hold; longer is refused "
            "with 422 `invalid_arguments` before any schema check runs."
        ),
    )
    task_stream_prefix: str = Field(
        DEFAULT_STREAM_PREFIX,
        min_length=1,
        description=(
            "Reserved Redis key prefix of queue streams: a queue manifest's `stream` name N "
            "is the stream `<prefix>N`; a manifest without one uses `<prefix>default`."
        ),
    )
    task_worker: bool = Field(True, description="Run a queue worker in this process.")
    task_ttl_s: int = Field(86400, description="How long task status and results are kept.")

    # --- approvals and callbacks ---------------------------------------------------------------
    approvals_enabled: bool = Field(
        True,
        description=(
            "Honour `requires_approval`: such a call waits for a person (202 with an approval "
            "id). `false` runs those tools at once, for local demos only."
        ),
    )
    approval_ttl_s: float = Field(
        86400.0, gt=0, description="How long an approval request waits before it expires."
    )
    approval_sweep_s: float = Field(
        10.0,
        gt=0,
        description=(
            "How often each replica expires overdue requests and recovers approved calls "
            "whose replica died before they finished."
        ),
    )
    approval_recovery_grace_ms: int = Field(
        5000,
        ge=0,
        description=(
            "Added to a tool's timeout_ms: an approved call still `running` after both is "
            "taken to be orphaned by a replica that died."
        ),
    )
    callback_secret: SecretStr | None = Field(
        None,
        description=(
            "Signs result callbacks (HMAC-SHA256 over timestamp and body, docs/approvals.md). "
            "Unset: requests with a `callback_url` are refused (503 callbacks_not_configured)."
        ),
    )
    callback_max_attempts: int = Field(
        5, ge=1, le=20, description="Deliveries tried per callback before it is given up."
    )
    callback_backoff_ms: int = Field(
        500, ge=0, description="Wait before the second delivery attempt; doubles each time."
    )
    callback_max_backoff_ms: int = Field(
        30000, ge=0, description="Longest wait between two delivery attempts."
    )
    callback_timeout_ms: int = Field(
        5000, ge=1, description="How long one delivery attempt may take."
    )

    # --- serving MCP (/mcp) --------------------------------------------------------------------
    mcp_allowed_hosts: StringList = Field(
        default_factory=list,
        description=(
            "Host header values /mcp answers (DNS-rebinding protection; `host:*` allows any "
            "port). Empty: every exact name in ALLOWED_HOSTS, on any port."
        ),
    )
    mcp_allowed_origins: StringList = Field(
        default_factory=lambda: ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"],
        description=(
            "Origin header values /mcp accepts from browsers (`scheme://host:*` allows any "
            "port); requests without an Origin (non-browser clients) are not affected."
        ),
    )
    mcp_resource_url: str | None = Field(
        None,
        description=(
            "This gateway's public base URL as an OAuth protected resource (RFC 9728 "
            "`resource`), e.g. https://gateway.example.com. Unset: taken from each request. "
            "JWTs for /mcp must carry it (or JWT_AUDIENCE) as their audience."
        ),
    )
    mcp_authorization_servers: StringList = Field(
        default_factory=list,
        description=(
            "Issuer URLs of the OAuth 2.1 authorization servers whose tokens this gateway "
            "accepts, published at /.well-known/oauth-protected-resource (JWT_ISSUER when empty)."
        ),
    )
    mcp_json_response: bool = Field(
        True,
        description=(
            "Answer /mcp requests with a JSON body rather than an SSE stream (cheaper for "
            "clients; Reach's tools send nothing during a call). `subscriptions/listen` "
            "always streams."
        ),
    )

    # --- federated MCP servers -----------------------------------------------------------------
    mcp_sync_interval_s: float = Field(
        60.0,
        gt=0,
        description=(
            "Re-list every federated MCP server's tools this often (seconds); tools the server "
            "no longer offers are removed, changed definitions are held back."
        ),
    )
    mcp_stdio_commands: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            'The stdio MCP servers admins may register, by name (JSON): {"files": ["npx", '
            '"-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]}. A registration '
            "names an entry; no other command is ever started."
        ),
    )
    mcp_max_tools: int = Field(
        200, ge=1, description="Most tools one federated MCP server may list; more is refused."
    )
    mcp_max_schema_bytes: int = Field(
        65536,
        ge=256,
        description="Largest input schema (JSON bytes) of a federated tool; larger is skipped.",
    )
    mcp_max_message_bytes: int = Field(
        4_194_304,
        ge=65536,
        description="Largest single answer read from a federated MCP server over HTTP.",
    )
    mcp_sync_timeout_s: float = Field(
        10.0, gt=0, description="How long connecting to and listing a federated server may take."
    )

    # --- OpenAPI import --------------------------------------------------------------------------
    openapi_max_bytes: int = Field(
        2_097_152, ge=1024, description="Largest OpenAPI document an import reads (bytes)."
    )
    openapi_max_depth: int = Field(
        64, ge=8, le=200, description="Deepest nesting an imported OpenAPI document may have."
    )
    openapi_max_nodes: int = Field(
        200_000,
        ge=1000,
        description="Most keys and values an imported document may have (YAML aliases counted "
        "as expanded).",
    )
    openapi_max_operations: int = Field(
        500, ge=1, description="Most operations an imported OpenAPI document may have."
    )
    openapi_fetch_timeout_s: float = Field(
        10.0, gt=0, description="How long reading an OpenAPI document from a URL may take."
    )

    # --- limits and audit ----------------------------------------------------------------------
    caller_rate_limit: str | None = Field(
        "600/minute", description="Per-caller limit across all tools, e.g. `600/minute`."
    )
    route_rate_limit: str | None = Field(
        "600/minute",
        description=(
            "Per-caller limit on routing requests (`POST /run`, `GET /tools/list?q=`, MCP "
            "`find_tools` and `run`), counted before the router embeds the request; a routed "
            "call also counts against CALLER_RATE_LIMIT. Empty: no limit."
        ),
    )
    rate_limit_without_redis: Literal["open", "closed"] = Field(
        "open",
        description=(
            "When Redis does not answer: `open` admits calls uncounted (a warning is logged), "
            "`closed` refuses them with 503 `dependency_unavailable` (docs/reliability.md)."
        ),
    )
    rate_limit_lease_share: float = Field(
        0.01,
        ge=0.0,
        le=0.1,
        description=(
            "Share of a rate limit (and of its window) a replica records in Redis at once and "
            "spends in memory, at most 100 calls: most calls then make no Redis round trip, and "
            "no replica admits more than the limit. A limit whose share is under 2 calls (under "
            "200 per window at 0.01), or any limit when 0, is counted call by call."
        ),
    )
    audit_batch_size: int = Field(200, ge=1, description="Audit rows written per INSERT.")
    audit_queue_size: int = Field(
        10000, ge=1, description="Audit rows waiting to be written before callers wait."
    )
    audit_flush_ms: int = Field(200, ge=1, description="Longest an audit row waits in memory.")

    @property
    def task_stream(self) -> str:
        """The default queue stream: ``<TASK_STREAM_PREFIX>default``."""
        return stream_key(self.task_stream_prefix, DEFAULT_STREAM_NAME)

    @field_validator(
        "registry_admin_roles",
        "ops_roles",
        "egress_allowlist",
        "python_tool_packages",
        "mcp_allowed_hosts",
        "mcp_allowed_origins",
        "mcp_authorization_servers",
        mode="before",
    )
    @classmethod
    def _split_gateway_lists(cls, value: Any) -> Any:
        return string_list(value)
