"""What a tool is, once its manifest is compiled: the types every gateway package shares.

The registry compiles manifests into :class:`ToolSpec`; auth decides on it, the
router ranks it, the executor runs it. Keeping the types here (below all of
them) lets each package use them without importing another's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema.protocols import Validator
from limits import RateLimitItem

DEFAULT_STREAM_PREFIX = "reach:gateway:tasks:"
DEFAULT_STREAM_NAME = "default"
#: What a manifest's ``stream`` may be (the manifest model, and so its JSON Schema, use it).
STREAM_NAME_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,62}$"
#: A federated MCP server's id: no ``_``, so the ``__`` after it in a tool id is unambiguous.
MCP_SERVER_ID_PATTERN = r"^[a-z][a-z0-9]{0,19}$"


def stream_key(prefix: str, name: str) -> str:
    """The Redis key of queue stream ``name``: always under the reserved ``prefix``."""
    return prefix + name


Permission = Literal["public", "user", "admin"]
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE"})
QUERY_METHODS = frozenset({"GET", "HEAD", "DELETE"})
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class OutboundAuth:
    type: Literal["none", "api_key", "bearer", "oauth2"] = "none"
    key: str | None = None
    header: str = "X-API-Key"
    token_endpoint: str | None = None
    client_id: str | None = None
    scope: str | None = None
    audience: str | None = None


@dataclass(frozen=True)
class HttpTarget:
    method: str
    url: str
    auth: OutboundAuth
    path_params: tuple[str, ...]
    type: Literal["http"] = "http"
    forward_caller: bool = False

    @property
    def sends_query(self) -> bool:
        return self.method in QUERY_METHODS


@dataclass(frozen=True)
class PythonTarget:
    function: str
    type: Literal["python"] = "python"

    @property
    def module(self) -> str:
        return self.function.partition(":")[0]


@dataclass(frozen=True)
class QueueTarget:
    """``stream`` is the Redis key, always ``<TASK_STREAM_PREFIX><name>``; ``name`` is what
    the manifest said (``default`` when it said nothing)."""

    stream: str
    target: HttpTarget | PythonTarget
    name: str = DEFAULT_STREAM_NAME
    type: Literal["queue"] = "queue"


@dataclass(frozen=True)
class McpTarget:
    """A tool of a federated MCP server (``POST /mcp/servers``): ``server`` is the server's
    id, ``tool`` the tool's name on it, unchanged. ``held_back``: the upstream changed the
    tool's definition and no admin has accepted it yet, so calls are refused."""

    server: str
    tool: str
    held_back: bool = False
    type: Literal["mcp"] = "mcp"


Endpoint = HttpTarget | PythonTarget | QueueTarget | McpTarget


@dataclass(frozen=True)
class RetryPolicy:
    """Compiled from the manifest's ``retry_policy`` (its defaults live in the manifest model)."""

    max_retries: int
    backoff_ms: int
    max_backoff_ms: int


@dataclass(frozen=True)
class BreakerPolicy:
    failure_threshold: int
    reset_timeout_ms: int


@dataclass(frozen=True)
class ToolSpec:
    """Everything the gateway needs to list, authorise and run one tool."""

    tool_id: str
    name: str
    namespace: str
    description: str
    aliases: tuple[str, ...]
    examples: tuple[str, ...]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    endpoint: Endpoint
    permission: Permission
    permission_declared: bool
    scope: tuple[str, ...]
    idempotent: bool
    timeout_ms: int
    retry: RetryPolicy
    rate_limit: RateLimitItem | None
    breaker: BreakerPolicy
    max_response_bytes: int
    requires_approval: bool
    manifest: dict[str, Any] = field(repr=False)
    validator: Validator = field(repr=False, compare=False)
    max_argument_chars: int = 65_536
    approvers: tuple[str, ...] = ("admin",)
    allow_self_approval: bool = False
    # Compiled once per manifest revision, like ``validator``; None: no output_schema.
    output_validator: Validator | None = field(default=None, repr=False, compare=False)
    output_schema_mode: Literal["enforce", "warn"] = "enforce"
    max_output_bytes: int = 100_000

    @property
    def endpoint_type(self) -> str:
        return self.endpoint.type

    def embedding_text(self) -> str:
        """What the tool's embedding is computed from: name, description, aliases, examples."""
        parts = [self.name, self.description, *self.aliases, *self.examples]
        return "\n".join(p for p in parts if p)


@dataclass(frozen=True)
class ManifestDefaults:
    """Settings that fill what a manifest leaves out."""

    timeout_ms: int = 10000
    max_response_bytes: int = 1_048_576
    breaker_failure_threshold: int = 5
    breaker_reset_timeout_ms: int = 10000
    python_packages: tuple[str, ...] = ()
    max_argument_chars: int = 65_536
    task_stream_prefix: str = DEFAULT_STREAM_PREFIX
    max_output_bytes: int = 100_000
    max_output_tokens: int = 25_000
