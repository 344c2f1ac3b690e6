"""Read an OpenAPI document as untrusted input: bounded, parsed safely, validated.

An import reads a document someone else wrote, possibly from the network. So,
before any library walks it:

- its size is capped (``OPENAPI_MAX_BYTES``) before parsing; JSON goes to
  ``json.loads``, anything else to PyYAML's ``SafeLoader`` (what ``yaml.safe_load``
  uses: no Python objects, and a Python-level parser whose recursion is bounded);
- it is copied into plain JSON values while nesting depth and the number of
  nodes are counted (``OPENAPI_MAX_DEPTH``, ``OPENAPI_MAX_NODES``): a YAML alias
  bomb, whose aliases share one object, is counted as its expansion and refused;
- it must be OpenAPI 3.x and have at most ``OPENAPI_MAX_OPERATIONS`` operations;
- every ``$ref`` must point inside the document (nothing is fetched), resolve, and
  not be a cycle of references to references (which sends validators into
  endless recursion);
- then ``openapi-spec-validator`` validates it, with remote retrieval refused.

A problem is a 422 ``invalid_openapi`` naming the JSON pointer where it is, or a
413 ``openapi_too_large`` naming the limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NoReturn

import yaml
from jsonschema_path import SchemaPath
from openapi_spec_validator.shortcuts import get_validator_cls
from openapi_spec_validator.validation.exceptions import ValidatorDetectError
from referencing import Registry
from referencing._core import Resolver
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from gateway.openapi.errors import InvalidOpenApi, OpenApiTooLarge

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DOCUMENT_URI = "urn:reach:openapi-document"
# Values that are data, not structure: a "$ref" key inside them is not a reference.
_DATA_KEYS = frozenset({"example", "default", "enum", "const", "value"})
_MAX_REF_HOPS = 32


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 2_097_152
    max_depth: int = 64
    max_nodes: int = 200_000
    max_operations: int = 500


def pointer(parts: Iterable[str | int]) -> str:
    """RFC 6901 JSON pointer of a path: ``("paths", "/a/{b}")`` → ``/paths/~1a~1{b}``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def resolver_for(document: dict[str, Any]) -> Resolver[Any]:
    """A ``referencing`` resolver over the document alone: no retrieval of anything else."""
    resource = DRAFT202012.create_resource(document)
    resolver: Resolver[Any] = (
        Registry().with_resource(DOCUMENT_URI, resource).resolver(base_uri=DOCUMENT_URI)
    )
    return resolver


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.nodes = 0


def _plain(value: Any, depth: int, budget: _Budget, where: tuple[str | int, ...]) -> Any:
    budget.nodes += 1
    if budget.nodes > budget.limits.max_nodes:
        raise OpenApiTooLarge(
            "nodes (keys and values)", budget.limits.max_nodes, "OPENAPI_MAX_NODES"
        )
    if depth > budget.limits.max_depth:
        raise OpenApiTooLarge("levels of nesting", budget.limits.max_depth, "OPENAPI_MAX_DEPTH")
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str | int | float | bool):
                raise InvalidOpenApi(pointer(where), f"a key of type {type(key).__name__}")
            name = key if isinstance(key, str) else json.dumps(key)
            out[name] = _plain(item, depth + 1, budget, (*where, name))
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, depth + 1, budget, (*where, i)) for i, item in enumerate(value)]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise InvalidOpenApi(pointer(where), f"a value of type {type(value).__name__} is not JSON")


def _parse_text(data: bytes, limits: Limits) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidOpenApi("", f"not UTF-8 text (byte {exc.start})") from None
    try:
        if text.lstrip()[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError as exc:
                raise InvalidOpenApi("", f"not valid JSON: {exc}") from None
        try:
            return yaml.load(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            problem = getattr(exc, "problem", None) or "unreadable"
            raise InvalidOpenApi("", f"not valid JSON or YAML: {problem}{where}") from None
    except RecursionError:
        raise _too_deep(limits) from None


def _too_deep(limits: Limits) -> OpenApiTooLarge:
    return OpenApiTooLarge("levels of nesting", limits.max_depth, "OPENAPI_MAX_DEPTH")


def load(raw: bytes | str | Mapping[str, Any], limits: Limits) -> dict[str, Any]:
    """The document as plain JSON values, within ``limits``; OpenAPI 3.x checked."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if isinstance(raw, bytes):
        if len(raw) > limits.max_bytes:
            raise OpenApiTooLarge("bytes", limits.max_bytes, "OPENAPI_MAX_BYTES")
        raw = _parse_text(raw, limits)
    try:
        document = _plain(raw, 0, _Budget(limits), ())
    except RecursionError:
        raise _too_deep(limits) from None
    if not isinstance(document, dict):
        raise InvalidOpenApi("", "the document must be an object (JSON or YAML mapping)")
    _check_version(document)
    operations = sum(1 for _ in iter_operations(document))
    if operations > limits.max_operations:
        raise OpenApiTooLarge("operations", limits.max_operations, "OPENAPI_MAX_OPERATIONS")
    return document


def _check_version(document: dict[str, Any]) -> None:
    version = document.get("openapi")
    if "swagger" in document and version is None:
        raise InvalidOpenApi("/swagger", "Swagger 2.0 is not supported; convert it to OpenAPI 3")
    if not isinstance(version, str) or not version.startswith("3."):
        raise InvalidOpenApi("/openapi", "must be an OpenAPI 3.x version, e.g. '3.1.0'")
    if not isinstance(document.get("paths", {}), dict):
        raise InvalidOpenApi("/paths", "must be an object")


def iter_operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(path, method, operation)`` in document order (methods in a fixed order)."""
    paths = document.get("paths") or {}
    for path, item in paths.items():
        if not isinstance(item, dict):
            continue
        for method in HTTP_METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                yield path, method, operation


def _refs(document: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield where, ref
            for key, value in node.items():
                if key in _DATA_KEYS or (key == "examples" and isinstance(value, list)):
                    continue
                stack.append((value, (*where, key)))
        elif isinstance(node, list):
            stack.extend((value, (*where, i)) for i, value in enumerate(node))


def _refused(where: tuple[str | int, ...], problem: str) -> NoReturn:
    raise InvalidOpenApi(pointer((*where, "$ref")), problem)


def check_refs(document: dict[str, Any]) -> None:
    """Every ``$ref`` is local, resolves, and does not loop through references alone."""
    resolver = resolver_for(document)
    for where, ref in _refs(document):
        if not ref.startswith("#"):
            _refused(where, f"{ref!r} points outside the document; only '#/...' is followed")
        seen = [ref]
        current = ref
        for _ in range(_MAX_REF_HOPS):
            try:
                target = resolver.lookup(current).contents
            except Unresolvable:
                _refused(where, f"{current!r} points at nothing in the document")
            if not (isinstance(target, dict) and isinstance(target.get("$ref"), str)):
                break
            current = target["$ref"]
            if not current.startswith("#"):
                _refused(where, f"{current!r} points outside the document")
            if current in seen:
                _refused(where, "circular $ref: " + " → ".join([*seen, current]))
            seen.append(current)
        else:
            _refused(where, f"more than {_MAX_REF_HOPS} references in a row")


class _NoRetrieval(Mapping[str, Any]):
    """``jsonschema-path`` handlers for every URI scheme, each refusing: nothing is fetched."""

    def __getitem__(self, scheme: str) -> Any:
        def refuse(uri: str) -> NoReturn:
            raise InvalidOpenApi("", f"references outside the document are not followed ({uri})")

        return refuse

    def __contains__(self, scheme: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def validate(document: dict[str, Any]) -> None:
    """``openapi-spec-validator``'s verdict; the first problem as ``InvalidOpenApi``."""
    try:
        validator_cls = get_validator_cls(document)
        spec = SchemaPath.from_dict(document, base_uri=DOCUMENT_URI, handlers=_NoRetrieval())
        error = next(iter(validator_cls(spec).iter_errors()), None)
    except RecursionError:
        raise InvalidOpenApi("", "nested or referenced too deeply to validate") from None
    except ValidatorDetectError:
        raise InvalidOpenApi("/openapi", "not a version openapi-spec-validator knows") from None
    except (Unresolvable, LookupError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidOpenApi("", f"cannot be read ({type(exc).__name__})") from None
    if error is not None:
        where = pointer(getattr(error, "absolute_path", ()) or ())
        message = str(getattr(error, "message", error)).splitlines()[0][:300]
        raise InvalidOpenApi(where, message)
