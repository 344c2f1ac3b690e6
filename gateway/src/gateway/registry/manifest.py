"""A tool manifest, validated by its pydantic model and compiled for the hot path.

``compile_manifest`` validates the raw JSON a user registered against
:class:`~gateway.registry.manifest_model.Manifest` (which holds every default a
manifest may rely on), then maps it to a frozen :class:`ToolSpec`: the
deployment's defaults filled in from ``ManifestDefaults``, the original design's
``endpoint.scope`` lifted to the top, the argument validator compiled once. The
raw manifest is kept untouched, so ``GET /tools/{id}`` returns exactly what was
registered.
"""

from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from limits import parse
from pydantic import ValidationError
from pydantic_core import ErrorDetails
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from gateway.catalog.egress import literal_ip
from gateway.catalog.spec import (
    IDEMPOTENT_METHODS,
    BreakerPolicy,
    Endpoint,
    HttpTarget,
    ManifestDefaults,
    McpTarget,
    OutboundAuth,
    Permission,
    PythonTarget,
    QueueTarget,
    RetryPolicy,
    ToolSpec,
    stream_key,
)
from gateway.registry.errors import InvalidManifest
from gateway.registry.manifest_model import (
    TAGGED_UNIONS,
    ApiKeyAuth,
    BearerAuth,
    HttpEndpoint,
    Manifest,
    McpEndpoint,
    NoAuth,
    OAuth2Auth,
    PythonEndpoint,
    QueueEndpoint,
)
from gateway.registry.manifest_model import manifest_schema as manifest_schema
from gateway.registry.patterns import (
    _DATA_KEYWORDS,
    check_schema,
    external_refs,
    json_path,
    pattern_problems,
    schema_validator,
)
from reach_common.storable import unstorable_at

if TYPE_CHECKING:
    from referencing._core import Resolver

#: At most this many problems are reported, each clipped to PROBLEM_CHARS.
MAX_PROBLEMS = 10
PROBLEM_CHARS = 300


def _clip(text: str, limit: int = PROBLEM_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _where(loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """pydantic's ``loc`` as the manifest's own path: the tag pydantic adds after a tagged
    union (``endpoint``, ``http``, ``url``) is not a key of the manifest."""
    path: list[str] = []
    tag_next = False
    for part in loc:
        if tag_next:
            tag_next = False
            continue
        path.append(str(part))
        tag_next = tuple(path) in TAGGED_UNIONS
    return tuple(path)


def _problem(error: ErrorDetails) -> str:
    """``<path>: <message>``, never echoing a long input back whole."""
    where = _where(error["loc"])
    message = error["msg"]
    ctx = error.get("ctx") or {}
    if error["type"] == "union_tag_invalid":
        where, message = (*where, "type"), f"must be one of {ctx.get('expected_tags', '')}"
    elif error["type"] == "union_tag_not_found":
        where, message = (*where, "type"), "Field required"
    return f"{json_path(where) if where else '(manifest)'}: {_clip(message)}"


def parse_manifest(raw: Any) -> Manifest:
    """``raw`` validated as a :class:`Manifest`; raises :class:`InvalidManifest` naming each
    problem by its path in the manifest (``endpoint/auth/key: ...``)."""
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
    problems = [_problem(error) for error in errors[:MAX_PROBLEMS]]
    more = len(errors) - len(problems)
    raise InvalidManifest(
        "The manifest does not match manifests/schema.json: "
        + "; ".join(problems)
        + (f"; and {more} more problem(s)" if more else ""),
        problems=problems,
    )


def _refused(where: str, message: str) -> InvalidManifest:
    """A problem found once the model has validated, as ``<path>: <message>``."""
    problem = f"{where}: {message}"
    return InvalidManifest(problem, problems=[problem])


def _path_params(url: str, where: str) -> tuple[str, ...]:
    names = []
    for _, name, spec, conversion in string.Formatter().parse(url):
        if name is None:
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or spec or conversion:
            raise _refused(
                f"{where}/url",
                f"`{{{_clip(name, 100)}}}` is not a valid path parameter; use `{{name}}` "
                "with a plain argument name.",
            )
        names.append(name)
    return tuple(names)


def _check_host(url: str, where: str) -> None:
    """Refuse a host name no call could reach: a label IDNA cannot encode (an empty one as
    in ``a..b``, or one over 63 characters) would fail every call."""
    try:
        host = urlsplit(url).hostname
    except ValueError:  # e.g. an unbalanced `[` in the host
        raise _refused(f"{where}/url", "is not a valid URL.") from None
    if not host or literal_ip(host) is not None:
        return
    try:
        host.encode("idna")
    except UnicodeError:
        raise _refused(
            f"{where}/url",
            f"host {_clip(host, 100)!r} is not a valid host name (a label is empty or "
            "longer than 63 characters).",
        ) from None


def _outbound_auth(auth: NoAuth | ApiKeyAuth | BearerAuth | OAuth2Auth) -> OutboundAuth:
    if isinstance(auth, NoAuth):
        return OutboundAuth(type="none")
    if isinstance(auth, ApiKeyAuth):
        return OutboundAuth(type="api_key", key=auth.key, header=auth.header)
    if isinstance(auth, BearerAuth):
        return OutboundAuth(type="bearer", key=auth.key)
    return OutboundAuth(
        type="oauth2",
        key=auth.key,
        token_endpoint=auth.token_endpoint,
        client_id=auth.client_id,
        scope=auth.scope,
        audience=auth.audience,
    )


def _target(
    target: HttpEndpoint | PythonEndpoint, defaults: ManifestDefaults, where: str
) -> HttpTarget | PythonTarget:
    if isinstance(target, HttpEndpoint):
        _check_host(target.url, where)
        return HttpTarget(
            method=target.method,
            url=target.url,
            auth=_outbound_auth(target.auth),
            path_params=_path_params(target.url, where),
            forward_caller=target.forward_caller,
        )
    module = target.function.partition(":")[0]
    if not any(module == p or module.startswith(p + ".") for p in defaults.python_packages):
        allowed = ", ".join(defaults.python_packages) or "none"
        raise _refused(
            f"{where}/function",
            f"module {module!r} is outside the allowed packages ({allowed}); "
            "set PYTHON_TOOL_PACKAGES to allow it.",
        )
    return PythonTarget(function=target.function)


def _endpoint(manifest: Manifest, defaults: ManifestDefaults) -> Endpoint:
    endpoint = manifest.endpoint
    if isinstance(endpoint, McpEndpoint):
        return McpTarget(server=endpoint.server, tool=endpoint.tool, held_back=endpoint.held_back)
    if isinstance(endpoint, QueueEndpoint):
        # The model allows only a short name (no `:`), so the key stays under the prefix.
        return QueueTarget(
            stream=stream_key(defaults.task_stream_prefix, endpoint.stream),
            target=_target(endpoint.target, defaults, "endpoint/target"),
            name=endpoint.stream,
        )
    return _target(endpoint, defaults, "endpoint")


def _scope(manifest: Manifest) -> tuple[str, ...]:
    top, inner = manifest.scope, manifest.endpoint.scope
    if top is not None and inner is not None and sorted(top) != sorted(inner):
        raise _refused(
            "endpoint/scope",
            "disagrees with the top-level scope; declare the roles once (top-level `scope`).",
        )
    return tuple(top if top is not None else inner or ())


def _dangling_refs(schema: dict[str, Any], root: str) -> list[str]:
    """``<path>: ...`` for each local ``$ref`` / ``$dynamicRef`` that resolves to nothing
    (``#/$defs/nowhere``, ``#no-such-anchor``): refused now, it would fail every call."""
    problems: list[str] = []
    stack: list[tuple[Any, tuple[str, ...], Resolver[Any]]] = [
        (schema, (root,), Registry().resolver_with_root(DRAFT202012.create_resource(schema)))
    ]
    while stack:
        node, where, resolver = stack.pop()
        if isinstance(node, list):
            stack.extend((item, (*where, str(i)), resolver) for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("$id"), str) and node is not schema:
            resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
        for key, value in node.items():
            here = (*where, str(key))
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                try:
                    resolver.lookup(value)
                except Unresolvable:
                    problems.append(f"{json_path(here)}: {_clip(value, 100)!r} points nowhere")
            elif key not in _DATA_KEYWORDS:
                stack.append((value, here, resolver))
    return sorted(problems)


def _refuse_dangling(schema: dict[str, Any], root: str) -> None:
    problems = _dangling_refs(schema, root)
    if problems:
        raise InvalidManifest(
            f"{root} cannot be used: " + "; ".join(problems[:MAX_PROBLEMS]),
            problems=problems[:MAX_PROBLEMS],
        )


def _arguments_validator(input_schema: dict[str, Any], endpoint: Endpoint) -> Validator:
    try:
        return _checked_arguments_validator(input_schema, endpoint)
    except RecursionError:
        raise _refused("input_schema", "nested too deeply.") from None


def _checked_arguments_validator(input_schema: dict[str, Any], endpoint: Endpoint) -> Validator:
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
            "input_schema cannot be used: " + "; ".join(problems[:MAX_PROBLEMS]),
            problems=problems[:MAX_PROBLEMS],
        )
    try:
        check_schema(input_schema)
    except SchemaError as exc:
        where = json_path(("input_schema", *(str(p) for p in exc.path)))
        raise _refused(where, f"not a valid JSON Schema: {_schema_message(exc)}") from exc
    _refuse_dangling(input_schema, "input_schema")
    target = endpoint.target if isinstance(endpoint, QueueTarget) else endpoint
    if isinstance(target, HttpTarget):
        properties = input_schema.get("properties", {})
        missing = [p for p in target.path_params if p not in properties]
        if missing:
            url = "endpoint/target/url" if isinstance(endpoint, QueueTarget) else "endpoint/url"
            raise _refused(
                url,
                "uses path parameters that input_schema does not declare: " + ", ".join(missing),
            )
    return schema_validator(input_schema)


def _output_validator(output_schema: dict[str, Any] | None) -> Validator | None:
    """``output_schema`` compiled once per revision, with the rules ``input_schema`` obeys."""
    if output_schema is None:
        return None
    problems = [
        f"{where}: {problem}"
        for where, problem in pattern_problems(output_schema, ("output_schema",))
    ]
    problems += [
        f"{where}: only references inside output_schema (`#...`) are allowed"
        for where in external_refs(output_schema, ("output_schema",))
    ]
    if problems:
        raise InvalidManifest(
            "output_schema cannot be used: " + "; ".join(problems[:MAX_PROBLEMS]),
            problems=problems[:MAX_PROBLEMS],
        )
    try:
        check_schema(output_schema)
    except SchemaError as exc:
        where = json_path(("output_schema", *(str(p) for p in exc.path)))
        raise _refused(where, f"not a valid JSON Schema: {_schema_message(exc)}") from exc
    except RecursionError:
        raise _refused("output_schema", "nested too deeply.") from None
    _refuse_dangling(output_schema, "output_schema")
    return schema_validator(output_schema)


#: A model token is counted as this many bytes of JSON (a common rule of thumb for English
#: and JSON; no tokenizer runs on the hot path).
BYTES_PER_TOKEN = 4


def _output_budget(manifest: Manifest, defaults: ManifestDefaults) -> int:
    """The output budget in bytes: what the manifest says (the smaller of its two limits),
    or, when it says neither, the smaller of the deployment's defaults."""
    if manifest.max_output_bytes is None and manifest.max_output_tokens is None:
        return min(defaults.max_output_bytes, defaults.max_output_tokens * BYTES_PER_TOKEN)
    limits = [manifest.max_output_bytes]
    if manifest.max_output_tokens is not None:
        limits.append(manifest.max_output_tokens * BYTES_PER_TOKEN)
    return min(limit for limit in limits if limit is not None)


def _schema_message(error: SchemaError) -> str:
    """jsonschema's message without a long offending value echoed back whole."""
    message = error.message
    if len(message) > PROBLEM_CHARS and isinstance(error.instance, str):
        message = message.replace(repr(error.instance), repr(error.instance[:80]) + "…")
    return _clip(message)


def _permission(manifest: Manifest, scope: tuple[str, ...]) -> Permission:
    # The original design declares only roles (endpoint.scope): roles mean admin-only.
    permission: Permission = manifest.permission or ("admin" if scope else "public")
    if permission == "admin" and not scope:
        raise _refused("permission", "`admin` needs `scope`: the roles that may call the tool.")
    return permission


def _idempotent(manifest: Manifest, endpoint: Endpoint) -> bool:
    if manifest.idempotent is not None:
        return manifest.idempotent
    target = endpoint.target if isinstance(endpoint, QueueTarget) else endpoint
    return isinstance(target, HttpTarget) and target.method in IDEMPOTENT_METHODS


def _or_default(value: int | None, deployment_default: int) -> int:
    """What the manifest said, or (left out) the deployment's setting."""
    return deployment_default if value is None else value


def _accepted(raw: Any, require_permission: bool) -> Manifest:
    """``raw`` parsed, or :class:`InvalidManifest`: also for what Postgres could not store
    and, in strict mode, an undeclared permission."""
    manifest = parse_manifest(raw)
    where = unstorable_at(raw)
    if where is not None:  # Postgres could not store it: refused here, not as a 500
        raise _refused(
            where or "(manifest)",
            "holds a NUL (\\u0000), half a surrogate pair or a number that is not finite "
            "(NaN, Infinity, 1e400), which no manifest may.",
        )
    if require_permission and manifest.permission is None:
        raise InvalidManifest(
            "Strict auth mode needs every tool to declare `permission` "
            "(public, user or admin, with `scope` roles for admin).",
            reason="permission_required",
        )
    return manifest


def _breaker(manifest: Manifest, defaults: ManifestDefaults) -> BreakerPolicy:
    breaker = manifest.circuit_breaker
    return BreakerPolicy(
        failure_threshold=_or_default(
            breaker.failure_threshold, defaults.breaker_failure_threshold
        ),
        reset_timeout_ms=_or_default(breaker.reset_timeout_ms, defaults.breaker_reset_timeout_ms),
    )


def compile_manifest(
    raw: Any, defaults: ManifestDefaults, *, require_permission: bool = False
) -> ToolSpec:
    """Validate ``raw`` and compile it; raises :class:`InvalidManifest` naming the problems."""
    manifest = _accepted(raw, require_permission)
    endpoint = _endpoint(manifest, defaults)
    validator = _arguments_validator(manifest.input_schema, endpoint)
    scope = _scope(manifest)
    permission = _permission(manifest, scope)
    return ToolSpec(
        tool_id=manifest.tool_id,
        name=manifest.name,
        namespace=manifest.namespace,
        description=manifest.description,
        aliases=tuple(manifest.aliases),
        examples=tuple(manifest.examples),
        input_schema=manifest.input_schema,
        output_schema=manifest.output_schema,
        endpoint=endpoint,
        permission=permission,
        permission_declared=manifest.permission is not None,
        scope=scope,
        idempotent=_idempotent(manifest, endpoint),
        timeout_ms=_or_default(manifest.timeout_ms, defaults.timeout_ms),
        retry=RetryPolicy(
            max_retries=manifest.retry_policy.max_retries,
            backoff_ms=manifest.retry_policy.backoff_ms,
            max_backoff_ms=manifest.retry_policy.max_backoff_ms,
        ),
        rate_limit=parse(manifest.rate_limit) if manifest.rate_limit is not None else None,
        breaker=_breaker(manifest, defaults),
        max_response_bytes=min(
            _or_default(manifest.max_response_bytes, defaults.max_response_bytes),
            defaults.max_response_bytes,
        ),
        requires_approval=manifest.requires_approval,
        manifest=raw,
        validator=validator,
        max_argument_chars=defaults.max_argument_chars,
        approvers=tuple(manifest.approvers),
        allow_self_approval=manifest.allow_self_approval,
        output_validator=_output_validator(manifest.output_schema),
        output_schema_mode=manifest.output_schema_mode,
        max_output_bytes=_output_budget(manifest, defaults),
    )
