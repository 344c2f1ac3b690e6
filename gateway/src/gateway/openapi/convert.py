"""One manifest proposal per OpenAPI operation, mapped onto what ``http`` tools can send.

The gateway's ``http`` tools (``executor/http.py``) send each argument in one of
three places: a ``{name}`` in the URL template (percent-encoded), the query
string (GET, HEAD, DELETE), or the JSON body (POST, PUT, PATCH). So:

- path parameters become required arguments and ``{name}`` in the URL (a name
  that is not an identifier, ``{order-id}``, becomes ``{order_id}``);
- query parameters become arguments of GET/HEAD/DELETE operations;
- the properties of a JSON request body (an object) become arguments of
  POST/PUT/PATCH operations, required as the body's schema says;
- what cannot be sent that way (header and cookie parameters, a query string
  next to a body, a body on GET, a body that is not a JSON object) is dropped when
  optional (noted on the proposal) and makes the operation skipped when required;
- ``input_schema`` refuses other arguments (``additionalProperties: false``).

Schemas are copied with every ``$ref`` resolved by ``referencing`` (a recursive
one is cut where it recurs: any value is accepted there) and OpenAPI 3.0's
``nullable`` and boolean ``exclusiveMinimum``/``exclusiveMaximum`` rewritten as
JSON Schema 2020-12 says.

Ids: ``operationId`` (or ``<method>_<path>``) in lower case with every other
character run turned into ``_``, after an optional prefix; too long, it keeps 55
characters and a hash of the rest. Within a document the first operation keeps
an id and later ones get ``_2``, ``_3``... in document order.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from referencing._core import Resolver

from gateway.catalog.spec import IDEMPOTENT_METHODS, QUERY_METHODS
from gateway.catalog.untrusted import flags_for_description
from gateway.openapi.document import iter_operations, pointer, resolver_for
from gateway.openapi.errors import BaseUrlRequired, InvalidOpenApi
from gateway.openapi.inline import Inliner, Skip

_ID_MAX = 64
_NOT_ID = re.compile(r"[^a-z0-9]+")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ImportOptions:
    namespace: str = "default"
    permission: str = "user"
    scope: tuple[str, ...] = ()
    base_url: str | None = None
    id_prefix: str = ""
    operations: frozenset[str] | None = None
    methods: frozenset[str] | None = None
    approval_for_writes: bool = True
    output_schema: bool = True
    document_url: str | None = None


@dataclass
class Proposal:
    tool_id: str
    operation_id: str | None
    method: str
    path: str
    manifest: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Skipped:
    method: str
    path: str
    operation_id: str | None
    reason: str
    message: str


def slug(text: str) -> str:
    """``text`` as a tool id: lower case, ``_`` between words, starting with a letter."""
    base = _NOT_ID.sub("_", text.lower()).strip("_") or "operation"
    if not base[0].isalpha():
        base = f"op_{base}"
    if len(base) > _ID_MAX:
        digest = hashlib.sha256(base.encode()).hexdigest()[:8]
        base = f"{base[:55].rstrip('_')}_{digest}"
    return base if len(base) >= 2 else f"{base}_op"


def _unique(candidate: str, taken: set[str]) -> str:
    tool_id, n = candidate, 2
    while tool_id in taken:
        suffix = f"_{n}"
        tool_id = candidate[: _ID_MAX - len(suffix)] + suffix
        n += 1
    taken.add(tool_id)
    return tool_id


def _server(
    document: dict[str, Any],
    item: dict[str, Any],
    operation: dict[str, Any],
    options: ImportOptions,
) -> str:
    if options.base_url:
        return options.base_url.rstrip("/")
    servers = (
        operation.get("servers") or item.get("servers") or document.get("servers") or [{"url": "/"}]
    )
    server: dict[str, Any] = servers[0] if isinstance(servers[0], dict) else {"url": "/"}
    url = str(server.get("url") or "/")
    variables = server.get("variables")
    for name, variable in (variables if isinstance(variables, dict) else {}).items():
        if isinstance(variable, dict) and "default" in variable:
            url = url.replace("{" + name + "}", str(variable["default"]))
    if not urlsplit(url).scheme:
        if not options.document_url:
            raise BaseUrlRequired(url)
        url = urljoin(options.document_url, url)
    return url.rstrip("/")


def _parameters(
    item: dict[str, Any], operation: dict[str, Any], resolver: Resolver[Any]
) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*(item.get("parameters") or []), *(operation.get("parameters") or [])]:
        parameter = resolver.lookup(raw["$ref"]).contents if "$ref" in raw else raw
        merged[(str(parameter.get("name")), str(parameter.get("in")))] = parameter
    return list(merged.values())


def _parameter_schema(parameter: dict[str, Any], inline: Inliner) -> dict[str, Any]:
    schema = parameter.get("schema")
    if schema is None:
        media: Any = next(iter((parameter.get("content") or {}).values()), {})
        schema = media.get("schema", {}) if isinstance(media, dict) else {}
    copied = inline(schema)
    if not isinstance(copied, dict):
        copied = {}
    if parameter.get("description") and "description" not in copied:
        copied["description"] = str(parameter["description"])[:1000]
    return copied


@dataclass
class _Arguments:
    properties: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, schema: dict[str, Any], required: bool) -> None:
        if name in self.properties:
            raise Skip("argument_clash", f"two arguments would both be named {name!r}")
        self.properties[name] = schema
        if required:
            self.required.append(name)


def _unsendable(where: str, name: str, required: bool, arguments: _Arguments) -> None:
    if required:
        raise Skip(
            "unsupported_parameter",
            f"required {where} {name!r} cannot be sent: http tools send arguments as path, "
            "query or JSON body only",
        )
    arguments.notes.append(f"optional {where} {name!r} dropped: http tools cannot send it")


def _add_parameters(
    method: str, parameters: list[dict[str, Any]], inline: Inliner, arguments: _Arguments
) -> None:
    for parameter in parameters:
        name, where = str(parameter.get("name")), parameter.get("in")
        required = bool(parameter.get("required")) or where == "path"
        if where == "path":
            argument = name if _IDENTIFIER.match(name) else slug(name)
            arguments.renamed[name] = argument
            arguments.add(argument, _parameter_schema(parameter, inline), True)
        elif where == "query" and method.upper() in QUERY_METHODS:
            arguments.add(name, _parameter_schema(parameter, inline), required)
        elif where == "header" and name.lower() == "idempotency-key":
            arguments.notes.append(
                f"header {name!r} left out: the gateway sends an Idempotency-Key itself"
            )
        else:
            place = (
                "query parameter next to a JSON body" if where == "query" else f"{where} parameter"
            )
            _unsendable(place, name, required, arguments)


def _json_media(content: dict[str, Any]) -> dict[str, Any] | None:
    for media_type, media in content.items():
        kind = media_type.split(";")[0].strip().lower()
        if kind == "application/json" or kind.endswith("+json"):
            return media if isinstance(media, dict) else {}
    return None


def _body_object(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, dict):
        return None
    if "properties" in schema or schema.get("type") == "object":
        return schema
    parts = schema.get("allOf")
    if isinstance(parts, list) and parts and all(isinstance(p, dict) for p in parts):
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in parts:
            inner = _body_object(part)
            if inner is None:
                return None
            merged["properties"].update(inner.get("properties") or {})
            merged["required"] += list(inner.get("required") or [])
        return merged
    return None


def _add_body(
    method: str, operation: dict[str, Any], inline: Inliner, arguments: _Arguments
) -> None:
    raw = operation.get("requestBody")
    if raw is None:
        return
    body = inline.root.lookup(raw["$ref"]).contents if "$ref" in raw else raw
    required = bool(body.get("required"))
    media = _json_media(body.get("content") or {})
    if method.upper() in QUERY_METHODS or media is None:
        what = "request body" if media is not None else "non-JSON request body"
        _unsendable(what, method.upper(), required, arguments)
        return
    schema = _body_object(inline(media.get("schema", {})))
    if schema is None:
        _unsendable("request body that is not a JSON object,", method.upper(), required, arguments)
        return
    needed = set(schema.get("required") or []) if required else set()
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and prop.get("readOnly") is True:
            continue
        arguments.add(name, prop if isinstance(prop, dict) else {}, name in needed)


def _output_schema(operation: dict[str, Any], inline: Inliner) -> dict[str, Any] | None:
    for status, raw in (operation.get("responses") or {}).items():
        if not str(status).startswith("2") or not isinstance(raw, dict):
            continue
        response = inline.root.lookup(raw["$ref"]).contents if "$ref" in raw else raw
        media = _json_media(response.get("content") or {})
        if media is not None and isinstance(media.get("schema"), dict) and media["schema"]:
            schema = inline(media["schema"])
            return schema if isinstance(schema, dict) else None
    return None


def _texts(method: str, path: str, operation: dict[str, Any]) -> tuple[str, str]:
    summary = str(operation.get("summary") or "").strip()
    detail = str(operation.get("description") or "").strip()
    name = (summary or str(operation.get("operationId") or "") or f"{method.upper()} {path}")[:200]
    description = detail if not summary or detail.startswith(summary) else f"{summary}. {detail}"
    description = description.strip() or name
    if len(description) < 10:
        description = f"{description} ({method.upper()} {path})"
    return name, description[:4000]


def _manifest(
    tool_id: str,
    method: str,
    path: str,
    url: str,
    operation: dict[str, Any],
    arguments: _Arguments,
    output_schema: dict[str, Any] | None,
    options: ImportOptions,
) -> dict[str, Any]:
    name, description = _texts(method, path, operation)
    verb = method.upper()
    manifest: dict[str, Any] = {
        "tool_id": tool_id,
        "name": name,
        "namespace": options.namespace,
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": arguments.properties,
            "required": arguments.required,
            "additionalProperties": False,
        },
        "endpoint": {"type": "http", "method": verb, "url": url, "auth": {"type": "none"}},
        "permission": options.permission,
        "idempotent": verb in IDEMPOTENT_METHODS,
        "tags": [str(t)[:64] for t in operation.get("tags") or [] if str(t)][:20],
        "x-openapi": {
            "operation_id": operation.get("operationId"),
            "method": verb,
            "path": path,
            "document": options.document_url or "inline",
        },
    }
    if options.scope:
        manifest["scope"] = list(options.scope)
    if output_schema is not None and options.output_schema:
        manifest["output_schema"] = output_schema
    if verb not in IDEMPOTENT_METHODS and options.approval_for_writes:
        manifest["requires_approval"] = True
    return manifest


def _url_template(server: str, path: str, renamed: dict[str, str]) -> str:
    for original, argument in renamed.items():
        path = path.replace("{" + original + "}", "{" + argument + "}")
    return server + path


def _wanted(method: str, operation: dict[str, Any], candidate: str, options: ImportOptions) -> bool:
    if options.methods is not None and method.upper() not in options.methods:
        return False
    if options.operations is None:
        return True
    return bool({str(operation.get("operationId")), candidate} & options.operations)


def _propose_one(
    document: dict[str, Any], path: str, method: str, operation: dict[str, Any],
    tool_id: str, resolver: Resolver[Any], options: ImportOptions,
) -> Proposal:  # fmt: skip
    item = document["paths"][path]
    inline = Inliner(resolver)
    arguments = _Arguments()
    _add_parameters(method, _parameters(item, operation, resolver), inline, arguments)
    _add_body(method, operation, inline, arguments)
    for name in re.findall(r"{([^{}]*)}", path):
        if name not in arguments.renamed:
            raise Skip("unsupported_parameter", f"path parameter {name!r} is not declared")
    url = _url_template(_server(document, item, operation, options), path, arguments.renamed)
    output_schema = _output_schema(operation, inline) if options.output_schema else None
    manifest = _manifest(tool_id, method, path, url, operation, arguments, output_schema, options)
    notes = arguments.notes + [
        f"recursive {ref} accepts any value where it recurs" for ref in sorted(inline.cut)
    ]
    flags = flags_for_description(manifest["name"], manifest["description"])
    return Proposal(
        tool_id, operation.get("operationId"), method.upper(), path, manifest, notes, flags
    )


def propose(
    document: dict[str, Any], options: ImportOptions
) -> tuple[int, list[Proposal], list[Skipped]]:
    """(operations found, proposals, skipped operations) for a validated document.

    Every operation gets its id first, in document order, whether it is then
    selected, skipped or imported: ids do not shift when a filter or a fix changes.
    """
    resolver = resolver_for(document)
    taken: set[str] = set()
    proposals: list[Proposal] = []
    skipped: list[Skipped] = []
    operations = list(iter_operations(document))
    for path, method, operation in operations:
        operation_id = operation.get("operationId")
        candidate = slug(options.id_prefix + slug(str(operation_id or f"{method}_{path}")))
        tool_id = _unique(candidate, taken)
        if not _wanted(method, operation, tool_id, options):
            reason = ("not_selected", "left out by the operation filter")
            skipped.append(Skipped(method.upper(), path, operation_id, *reason))
            continue
        try:
            proposals.append(
                _propose_one(document, path, method, operation, tool_id, resolver, options)
            )
        except Skip as skip:
            skipped.append(Skipped(method.upper(), path, operation_id, skip.reason, skip.message))
        except (KeyError, TypeError, AttributeError) as exc:
            where = pointer(("paths", path, method))
            raise InvalidOpenApi(where, f"cannot be read ({type(exc).__name__})") from None
    return len(operations), proposals, skipped
