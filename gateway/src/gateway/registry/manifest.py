"""A tool manifest, checked against ``manifest_schema.json`` and compiled for the hot path.

``compile_manifest`` turns the raw JSON a user registered into a frozen
:class:`ToolSpec`: defaults filled in, the original design's ``endpoint.scope``
lifted to the top, the argument validator compiled once. The raw manifest is
kept untouched, so ``GET /tools/{id}`` returns exactly what was registered.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from limits import RateLimitItem, parse

from gateway.executor.tasks import DEFAULT_STREAM_NAME, DEFAULT_STREAM_PREFIX, stream_key
from gateway.registry.errors import InvalidManifest
from gateway.registry.patterns import (
    check_schema,
    external_refs,
    pattern_problems,
    schema_validator,
)

Permission = Literal["public", "user", "admin"]
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE"})
QUERY_METHODS = frozenset({"GET", "HEAD", "DELETE"})
DEFAULT_NAMESPACE = "default"


@cache
def manifest_schema() -> dict[str, Any]:
    """The manifest's own JSON Schema (``manifests/schema.json`` is a copy of it)."""
    text = resources.files("gateway.registry").joinpath("manifest_schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _manifest_validator() -> Validator:
    return schema_validator(manifest_schema())


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


Endpoint = HttpTarget | PythonTarget | QueueTarget


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 0
    backoff_ms: int = 200
    max_backoff_ms: int = 5000


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


def _specific(error: ValidationError) -> list[ValidationError]:
    """A ``oneOf`` failure explained by the branch the manifest meant: the one whose
    ``type`` matched (endpoint and auth branches are told apart by ``type``)."""
    if not error.context:
        return [error]
    branches: dict[Any, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.schema_path[0] if sub.schema_path else None, []).append(sub)

    def type_mismatch(errors: list[ValidationError]) -> bool:
        return any(list(e.relative_path) == ["type"] for e in errors)

    meant = [errs for errs in branches.values() if not type_mismatch(errs)]
    if not meant and all(type_mismatch(errs) for errs in branches.values()):
        kinds = sorted(
            str(e.validator_value)
            for errs in branches.values()
            for e in errs
            if list(e.relative_path) == ["type"]
        )
        where = list(error.absolute_path)
        return [ValidationError(f"type must be one of {', '.join(kinds)}", path=[*where, "type"])]
    chosen = min(meant or list(branches.values()), key=len)
    return [leaf for sub in chosen for leaf in _specific(sub)]


def _message(error: ValidationError | SchemaError, limit: int = 300) -> str:
    """jsonschema's message without a long offending value echoed back whole."""
    message = error.message
    if len(message) > limit and isinstance(error.instance, str):
        message = message.replace(repr(error.instance), repr(error.instance[:80]) + "…")
    return message if len(message) <= limit else message[:limit] + "…"


def schema_errors(raw: Any) -> list[str]:
    """Human-readable problems of ``raw`` against the manifest schema."""
    errors = sorted(_manifest_validator().iter_errors(raw), key=lambda e: list(e.path))
    messages = []
    for error in errors:
        for detail in _specific(error):
            where = "/".join(str(p)[:100] for p in detail.absolute_path) or "(manifest)"
            messages.append(f"{where}: {_message(detail)}")
    return messages


def _path_params(url: str) -> tuple[str, ...]:
    names = []
    for _, name, spec, conversion in string.Formatter().parse(url):
        if name is None:
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or spec or conversion:
            raise InvalidManifest(
                f"endpoint.url: `{{{name}}}` is not a valid path parameter; use `{{name}}` "
                "with a plain argument name."
            )
        names.append(name)
    return tuple(names)


def _outbound_auth(raw: dict[str, Any] | None) -> OutboundAuth:
    if not raw:
        return OutboundAuth()
    return OutboundAuth(
        type=raw["type"],
        key=raw.get("key"),
        header=raw.get("header", "X-API-Key"),
        token_endpoint=raw.get("token_endpoint"),
        client_id=raw.get("client_id"),
        scope=raw.get("scope"),
        audience=raw.get("audience"),
    )


def _target(raw: dict[str, Any], defaults: ManifestDefaults) -> HttpTarget | PythonTarget:
    if raw["type"] == "http":
        return HttpTarget(
            method=raw["method"],
            url=raw["url"],
            auth=_outbound_auth(raw.get("auth")),
            path_params=_path_params(raw["url"]),
        )
    function = raw["function"]
    module = function.partition(":")[0]
    if not any(module == p or module.startswith(p + ".") for p in defaults.python_packages):
        allowed = ", ".join(defaults.python_packages) or "none"
        raise InvalidManifest(
            f"endpoint.function: module {module!r} is outside the allowed packages ({allowed}); "
            "set PYTHON_TOOL_PACKAGES to allow it."
        )
    return PythonTarget(function=function)


def _endpoint(raw: dict[str, Any], defaults: ManifestDefaults) -> Endpoint:
    if raw["type"] == "queue":
        # The schema allows only a short name (no `:`), so the key stays under the prefix.
        name = raw.get("stream") or DEFAULT_STREAM_NAME
        return QueueTarget(
            stream=stream_key(defaults.task_stream_prefix, name),
            target=_target(raw["target"], defaults),
            name=name,
        )
    return _target(raw, defaults)


def _scope(manifest: dict[str, Any]) -> tuple[str, ...]:
    top = manifest.get("scope")
    inner = manifest["endpoint"].get("scope")
    if top is not None and inner is not None and sorted(top) != sorted(inner):
        raise InvalidManifest(
            "scope and endpoint.scope disagree; declare the roles once (top-level `scope`)."
        )
    return tuple(top if top is not None else inner or ())


def _check_arguments_schema(manifest: dict[str, Any], endpoint: Endpoint) -> Validator:
    input_schema = manifest["input_schema"]
    try:
        return _arguments_validator(input_schema, endpoint)
    except RecursionError:
        raise InvalidManifest("input_schema is nested too deeply.") from None


def _arguments_validator(input_schema: dict[str, Any], endpoint: Endpoint) -> Validator:
    # Before the meta-schema check, so a refused pattern is named by its own path.
    problems = [
        f"{where}: {problem}"
        for where, problem in pattern_problems(input_schema, ("input_schema",))
    ]
    problems += [
        f"{where}: only references inside input_schema (`#...`) are allowed"
        for where in external_refs(input_schema, ("input_schema",))
    ]
    if problems:
        raise InvalidManifest(
            "input_schema cannot be used: " + "; ".join(problems[:10]), problems=problems
        )
    try:
        check_schema(input_schema)
    except SchemaError as exc:
        where = "/".join(str(p)[:100] for p in exc.path)
        raise InvalidManifest(
            f"input_schema is not a valid JSON Schema at {where or '(root)'}: {_message(exc)}"
        ) from exc
    target = endpoint.target if isinstance(endpoint, QueueTarget) else endpoint
    if isinstance(target, HttpTarget):
        properties = input_schema.get("properties", {})
        missing = [p for p in target.path_params if p not in properties]
        if missing:
            raise InvalidManifest(
                "endpoint.url uses path parameters that input_schema does not declare: "
                + ", ".join(missing)
            )
    return schema_validator(input_schema)


def compile_manifest(
    manifest: Any, defaults: ManifestDefaults, *, require_permission: bool = False
) -> ToolSpec:
    """Validate ``manifest`` and compile it; raises :class:`InvalidManifest` with every problem."""
    problems = schema_errors(manifest)
    if problems:
        raise InvalidManifest(
            "The manifest does not match manifests/schema.json: " + "; ".join(problems[:10]),
            problems=problems,
        )
    if require_permission and "permission" not in manifest:
        raise InvalidManifest(
            "Strict auth mode needs every tool to declare `permission` "
            "(public, user or admin, with `scope` roles for admin).",
            reason="permission_required",
        )
    endpoint = _endpoint(manifest["endpoint"], defaults)
    validator = _check_arguments_schema(manifest, endpoint)
    scope = _scope(manifest)
    permission: Permission
    if "permission" in manifest:
        permission = manifest["permission"]
    else:
        # The original design declares only roles (endpoint.scope): roles mean admin-only.
        permission = "admin" if scope else "public"
    if permission == "admin" and not scope:
        raise InvalidManifest("permission `admin` needs `scope`: the roles that may call the tool.")
    target = endpoint.target if isinstance(endpoint, QueueTarget) else endpoint
    default_idempotent = isinstance(target, HttpTarget) and target.method in IDEMPOTENT_METHODS
    retry = manifest.get("retry_policy", {})
    breaker = manifest.get("circuit_breaker", {})
    return ToolSpec(
        tool_id=manifest["tool_id"],
        name=manifest["name"],
        namespace=manifest.get("namespace", DEFAULT_NAMESPACE),
        description=manifest["description"],
        aliases=tuple(manifest.get("aliases", ())),
        examples=tuple(manifest.get("examples", ())),
        input_schema=manifest["input_schema"],
        output_schema=manifest.get("output_schema"),
        endpoint=endpoint,
        permission=permission,
        permission_declared="permission" in manifest,
        scope=scope,
        idempotent=manifest.get("idempotent", default_idempotent),
        timeout_ms=manifest.get("timeout_ms", defaults.timeout_ms),
        retry=RetryPolicy(
            max_retries=retry.get("max_retries", 0),
            backoff_ms=retry.get("backoff_ms", 200),
            max_backoff_ms=retry.get("max_backoff_ms", 5000),
        ),
        rate_limit=parse(manifest["rate_limit"]) if "rate_limit" in manifest else None,
        breaker=BreakerPolicy(
            failure_threshold=breaker.get("failure_threshold", defaults.breaker_failure_threshold),
            reset_timeout_ms=breaker.get("reset_timeout_ms", defaults.breaker_reset_timeout_ms),
        ),
        max_response_bytes=min(
            manifest.get("max_response_bytes", defaults.max_response_bytes),
            defaults.max_response_bytes,
        ),
        requires_approval=manifest.get("requires_approval", False),
        manifest=manifest,
        validator=validator,
        max_argument_chars=defaults.max_argument_chars,
    )
