"""The tool manifest as a pydantic model: the one definition of what a manifest may say.

:class:`Manifest` validates a registered manifest and holds the defaults of
everything a manifest may leave out (the deployment-dependent ones, such as
``timeout_ms``, stay ``None`` here and come from ``ManifestDefaults``, i.e. the
gateway's settings). ``manifests/schema.json`` is generated from it
(``python -m gateway manifest-schema``), never written by hand.

Validation mirrors JSON Schema: strict types (no ``"5"`` for a number, no
``1`` for ``true``; a whole float such as ``3000.0`` is an integer), unknown
fields refused except top-level ``x-*`` extensions, and ``null`` refused
wherever a field may simply be left out.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, get_args

from limits import parse
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from gateway.catalog.spec import (
    DEFAULT_NAMESPACE,
    DEFAULT_STREAM_NAME,
    MCP_SERVER_ID_PATTERN,
    STREAM_NAME_PATTERN,
)

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://reach.dev/schemas/tool-manifest.json"
EXTENSION_PREFIX = "x-"
T = TypeVar("T")


def _not_null(value: Any) -> Any:
    if value is None:
        raise PydanticCustomError("null_value", "null is not allowed; leave the field out instead")
    return value


#: A field a manifest may leave out (then ``None``) but not set to ``null`` (the JSON Schema
#: shows only ``T``: see :meth:`_ManifestJsonSchema.nullable_schema`).
Omittable = Annotated[T | None, BeforeValidator(_not_null)]


def _whole_number(value: Any) -> Any:
    """JSON Schema's ``integer`` includes ``3000.0``; strict pydantic does not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _unique(values: list[str]) -> list[str]:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise PydanticCustomError(
                "unique_items", "'{role}' is listed twice; list each role once", {"role": value}
            )
        seen.add(value)
    return values


def _rate_limit(value: str) -> str:
    try:
        parse(value)
    except ValueError as exc:
        raise PydanticCustomError(
            "rate_limit", "not a rate limit: {error}", {"error": str(exc)}
        ) from None
    return value


def _object_schema(value: dict[str, Any]) -> dict[str, Any]:
    if value.get("type") != "object":
        raise PydanticCustomError(
            "object_schema", 'must be a JSON Schema with "type": "object" (arguments are an object)'
        )
    return value


#: After an ``int``'s bounds: JSON Schema's ``integer`` also takes a whole float (``3000.0``).
WHOLE = BeforeValidator(_whole_number)
Role = Annotated[str, Field(min_length=1, max_length=100)]
Roles = Annotated[
    list[Role], AfterValidator(_unique), Field(json_schema_extra={"uniqueItems": True})
]
SecretName = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$",
        description=(
            "Name of a tool secret: REACH_SECRET_<NAME> (dots and dashes read as underscores, "
            "upper case) or the file <name> in TOOL_SECRETS_DIR. It is sent only to the hosts "
            "TOOL_SECRET_HOSTS binds it to."
        ),
    ),
]
Permission = Literal["public", "user", "admin"]
Method = Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


# --- outbound auth -------------------------------------------------------------------------------


class NoAuth(_Strict):
    """No credential is sent."""

    type: Literal["none"]


class ApiKeyAuth(_Strict):
    """The secret is sent in a header: `X-API-Key` unless `header` names another."""

    type: Literal["api_key"]
    key: SecretName
    header: Annotated[str, Field(pattern=r"^[A-Za-z0-9-]{1,64}$")] = "X-API-Key"


class BearerAuth(_Strict):
    """The secret is sent as `Authorization: Bearer <secret>`."""

    type: Literal["bearer"]
    key: SecretName


class OAuth2Auth(_Strict):
    """OAuth2 client credentials: `client_id` and the secret `key` buy a token at
    `token_endpoint`; it is cached until it expires and sent as a bearer token."""

    type: Literal["oauth2"]
    token_endpoint: Annotated[str, Field(pattern=r"^https?://")]
    client_id: Annotated[str, Field(min_length=1, max_length=200)]
    key: SecretName
    scope: Omittable[Annotated[str, Field(max_length=1000)]] = None
    audience: Omittable[Annotated[str, Field(max_length=1000)]] = None


OutboundAuth = Annotated[
    NoAuth | ApiKeyAuth | BearerAuth | OAuth2Auth,
    Field(
        discriminator="type",
        description="The gateway's credential towards the tool (never the caller's).",
    ),
]


# --- endpoints -----------------------------------------------------------------------------------


class HttpEndpoint(_Strict):
    """An HTTP request to the tool's upstream."""

    type: Literal["http"]
    method: Method
    url: Annotated[
        str,
        Field(
            pattern=r"^https?://[^\s/?#]+",
            max_length=2000,
            description="URL template; each `{param}` is filled with the percent-encoded argument.",
        ),
    ]
    auth: OutboundAuth = NoAuth(type="none")
    scope: Omittable[Roles] = Field(
        None, description="The original design's place for `scope`; the top-level one is preferred."
    )
    forward_caller: bool = Field(
        False,
        description=(
            "Name the verified caller to the upstream in `X-Reach-On-Behalf-Of` (percent-"
            "encoded), for services that trust the gateway's key to act for a user (the "
            "retriever's stored tool outputs)."
        ),
    )


class PythonEndpoint(_Strict):
    """A Python function the gateway calls with the arguments as keyword arguments."""

    type: Literal["python"]
    function: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$",
            description="`module:function` inside a package named by PYTHON_TOOL_PACKAGES.",
        ),
    ]
    scope: Omittable[Roles] = None


Target = Annotated[
    HttpEndpoint | PythonEndpoint,
    Field(discriminator="type", description="What the worker runs for each task."),
]


class QueueEndpoint(_Strict):
    """A task put on a Redis stream; the call answers with a task id at once."""

    type: Literal["queue"]
    stream: Annotated[
        str,
        Field(
            pattern=STREAM_NAME_PATTERN,
            description=(
                "Short name of the queue stream the task goes to: lower-case letters, digits, "
                "`_`, `.` and `-`, no `:`. The Redis key is the gateway's reserved "
                "TASK_STREAM_PREFIX followed by this name."
            ),
        ),
    ] = DEFAULT_STREAM_NAME
    target: Target
    scope: Omittable[Roles] = None


class McpEndpoint(_Strict):
    """A tool of an MCP server the gateway federates (`POST /mcp/servers`). The gateway writes
    these manifests itself when it syncs the server; the tool's own name stays in `tool`."""

    type: Literal["mcp"]
    server: Annotated[
        str,
        Field(
            pattern=MCP_SERVER_ID_PATTERN,
            description="Id of the registered MCP server (`POST /mcp/servers`).",
        ),
    ]
    tool: Annotated[
        str,
        Field(
            min_length=1, max_length=128, description="The tool's name on that server, unchanged."
        ),
    ]
    definition_hash: Omittable[Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]] = Field(
        None, description="Hash of the accepted definition (description and input schema)."
    )
    held_back: bool = Field(
        False,
        description=(
            "Set by the gateway when the server changed this tool's definition: calls are "
            "refused (409 `tool_definition_changed`) until an admin accepts the new version."
        ),
    )
    scope: Omittable[Roles] = None


Endpoint = Annotated[
    HttpEndpoint | PythonEndpoint | QueueEndpoint | McpEndpoint, Field(discriminator="type")
]


# --- policies ------------------------------------------------------------------------------------


class RetryPolicy(_Strict):
    """Retries of an idempotent tool, with exponential backoff (`Retry-After` wins); other tools
    are never retried."""

    max_retries: Annotated[int, Field(ge=0, le=10), WHOLE] = 0
    backoff_ms: Annotated[int, Field(ge=0, le=60_000), WHOLE] = 200
    max_backoff_ms: Annotated[int, Field(ge=0, le=600_000), WHOLE] = 5000


class CircuitBreaker(_Strict):
    """When the tool's breaker opens; left out, the gateway's settings decide."""

    failure_threshold: Omittable[Annotated[int, Field(ge=1, le=1000), WHOLE]] = Field(
        None, description="Consecutive failures that open it. Default: BREAKER_FAILURE_THRESHOLD."
    )
    reset_timeout_ms: Omittable[Annotated[int, Field(ge=1, le=3_600_000), WHOLE]] = Field(
        None,
        description="How long it stays open before one probe. Default: BREAKER_RESET_TIMEOUT_MS.",
    )


# --- the manifest --------------------------------------------------------------------------------


class Manifest(_Strict):
    """One tool the gateway can list, route to and execute. Secrets never appear here:
    outbound credentials are named by `key` and read from the gateway's tool secrets."""

    model_config = ConfigDict(
        title="Reach tool manifest",
        json_schema_extra={
            "patternProperties": {
                f"^{EXTENSION_PREFIX}": {
                    "description": "Vendor extensions; kept and ignored by the gateway."
                }
            }
        },
    )

    tool_id: Annotated[
        str,
        Field(
            pattern=r"^[a-z][a-z0-9_]{1,63}$",
            description="Stable identifier: lower-case letters, digits and underscores.",
        ),
    ]
    name: Annotated[str, Field(min_length=1, max_length=200)]
    namespace: Annotated[
        str,
        Field(
            pattern=r"^[a-z][a-z0-9_-]{0,63}$",
            description="Group for listing (`GET /tools/list?namespace=`).",
        ),
    ] = DEFAULT_NAMESPACE
    description: Annotated[
        str,
        Field(
            min_length=10,
            max_length=4000,
            description=(
                "What the tool does, when to use it and what it does not do. "
                "Routing and models read it."
            ),
        ),
    ]
    aliases: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=200)]],
        Field(max_length=50, description="Other phrasings users use for this tool."),
    ] = []
    examples: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=500)]],
        Field(max_length=50, description="Example requests this tool answers."),
    ] = []
    tags: list[Annotated[str, Field(min_length=1, max_length=64)]] = []
    input_schema: Annotated[
        dict[str, Any],
        AfterValidator(_object_schema),
        Field(
            description="JSON Schema of the arguments; it must describe an object.",
            json_schema_extra={"properties": {"type": {"const": "object"}}, "required": ["type"]},
        ),
    ]
    output_schema: Omittable[dict[str, Any]] = Field(
        None,
        description=(
            "JSON Schema every successful output must match; a mismatch is 502 "
            "`invalid_tool_output` naming the first problem's path (see output_schema_mode)."
        ),
    )
    output_schema_mode: Literal["enforce", "warn"] = Field(
        "enforce",
        description=(
            "`enforce`: an output that breaks output_schema is refused; `warn`: it is passed "
            "on, and the mismatch is recorded on the span and the audit row."
        ),
    )
    max_output_bytes: Omittable[Annotated[int, Field(ge=1024, le=104_857_600), WHOLE]] = Field(
        None,
        description=(
            "Output budget, as compact UTF-8 JSON. A larger output answers a valid-JSON preview "
            "and a handle to the whole (docs/tool-outputs.md). Default: MAX_OUTPUT_BYTES."
        ),
    )
    max_output_tokens: Omittable[Annotated[int, Field(ge=256, le=26_214_400), WHOLE]] = Field(
        None,
        description=(
            "Output budget in model tokens (counted as 4 bytes each); the smaller of the two "
            "budgets applies. Default: MAX_OUTPUT_TOKENS."
        ),
    )
    endpoint: Endpoint
    permission: Omittable[Permission] = Field(
        None,
        description=(
            "Who may call: anyone, an authenticated caller, or a caller holding one of "
            "`scope`'s roles. Required in strict auth mode; left out, roles in `scope` mean "
            "`admin` and no roles mean `public`."
        ),
    )
    scope: Omittable[Roles] = Field(None, description="The roles that may call an admin tool.")
    idempotent: Omittable[bool] = Field(
        None,
        description=(
            "Safe to repeat. Default: true for GET/HEAD/PUT/DELETE http tools, false otherwise. "
            "Only idempotent tools are retried."
        ),
    )
    timeout_ms: Omittable[Annotated[int, Field(ge=1, le=600_000), WHOLE]] = Field(
        None,
        description="The whole call's budget, retries included. Default: DEFAULT_TIMEOUT_MS.",
    )
    retry_policy: RetryPolicy = RetryPolicy()
    rate_limit: Omittable[
        Annotated[
            str,
            Field(pattern=r"^\s*[0-9]+\s*(/|per)\s*([0-9]+\s*)?(second|minute|hour|day)s?\s*$"),
            AfterValidator(_rate_limit),
        ]
    ] = Field(None, description="For example `120/minute`; counted across all gateway replicas.")
    circuit_breaker: CircuitBreaker = CircuitBreaker()
    max_response_bytes: Omittable[Annotated[int, Field(ge=1, le=104_857_600), WHOLE]] = Field(
        None,
        description="Largest upstream answer read; capped by MAX_RESPONSE_BYTES (the default).",
    )
    requires_approval: bool = Field(
        False,
        description=(
            "A person must approve each call before it runs: invoking it answers 202 with an "
            "approval id (GET /approvals/{id}), and the call runs once an approver approves it. "
            "APPROVALS_ENABLED=false turns this off for local demos."
        ),
    )
    approvers: Roles = Field(
        default_factory=lambda: ["admin"],
        min_length=1,
        description="The roles that may approve or deny this tool's calls.",
    )
    allow_self_approval: bool = Field(
        False,
        description="Whether an approver may approve a call they asked for themselves.",
    )

    @model_validator(mode="before")
    @classmethod
    def _set_extensions_aside(cls, data: Any) -> Any:
        """``x-*`` fields are the author's own: the raw manifest keeps them, the model ignores
        them. Every other unknown field is refused."""
        if isinstance(data, dict) and any(_is_extension(key) for key in data):
            return {key: value for key, value in data.items() if not _is_extension(key)}
        return data


def _is_extension(key: object) -> bool:
    return isinstance(key, str) and key.startswith(EXTENSION_PREFIX)


def _tagged_unions(model: type[BaseModel], path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for name, field in model.model_fields.items():
        here = (*path, name)
        if field.discriminator is not None:
            found.add(here)
        members = get_args(field.annotation) or (field.annotation,)
        for member in members:
            if isinstance(member, type) and issubclass(member, BaseModel):
                found |= _tagged_unions(member, here)
    return found


#: Where the manifest has a union told apart by ``type`` (``endpoint``, ``endpoint/auth`` ...).
#: pydantic puts the chosen tag into an error's ``loc`` right after such a path
#: (``endpoint``, ``http``, ``url``); the manifest's own paths leave it out.
TAGGED_UNIONS = frozenset(_tagged_unions(Manifest))


# --- the JSON Schema -----------------------------------------------------------------------------


class _ManifestJsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema with ``$defs`` in snake case (``queue_endpoint``), no per-field
    titles, and no ``null`` where a field may only be left out (:data:`Omittable`)."""

    def normalize_name(self, name: str) -> str:
        return super().normalize_name(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower())

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        # No manifest field takes null (Omittable refuses it): `T | None` means "may be left out".
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        if "default" in schema and schema["default"] is None:
            return self.generate_inner(schema["schema"])
        return super().default_schema(schema)

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


@cache
def manifest_schema() -> dict[str, Any]:
    """The manifest's JSON Schema (Draft 2020-12), generated from :class:`Manifest`."""
    generated = Manifest.model_json_schema(schema_generator=_ManifestJsonSchema)
    return {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_ID, **generated}


def manifest_schema_text() -> str:
    """``manifests/schema.json`` exactly: ``python -m gateway manifest-schema`` prints it."""
    return json.dumps(manifest_schema(), indent=2, ensure_ascii=False) + "\n"
