"""A tool's property schemas as the filling rules read them.

Manifests written by hand, and above all imported from OpenAPI, say one thing in several
ways: a nullable count is ``{"type": ["integer", "null"]}`` or ``{"anyOf": [{"type":
"integer"}, {"type": "null"}]}``; a choice is ``{"oneOf": [{"const": "fast"}, {"const":
"slow"}]}``; a shared shape is ``{"$ref": "#/$defs/Day"}``. The filling rules read one
form: a single ``type``, an ``enum``, the referenced schema's own keys. So each property
is rewritten to that form (:func:`readable`); the schema itself is untouched, and the
call is still validated against it.

- ``$ref`` to a place in the same schema (``#/$defs/…``, ``#/definitions/…``) is
  replaced by what it points to, the property's own keys kept over it; at most
  ``_MAX_HOPS`` references are followed (a cycle ends there). A remote reference says
  nothing.
- A list of types with one that is not ``null`` is that type.
- ``anyOf`` / ``oneOf`` of constants (or enums) is an enum of them; of one branch that is
  not ``null``, that branch, the property's own keys kept over it. ``allOf`` of one
  schema is that schema.
- ``const`` is an enum of one.
- A ``pattern``, ``enum``, ``format`` or ``type`` of the wrong JSON type says nothing.
- A string whose description writes its notation and whose schema does not: "YYYY-MM-DD"
  reads as ``format: date``, "HH:MM" as a clock's pattern ("New time, HH:MM (24h)").
"""

from __future__ import annotations

import re
from typing import Any

_MAX_HOPS = 4
_KINDS: dict[str, type] = {"pattern": str, "enum": list, "format": str, "type": str}
_BRANCHES = ("anyOf", "oneOf")


def readable(properties: object, root: object = None) -> dict[str, dict[str, Any]]:
    """Each property's schema in the one form the filling rules read (see the module
    doc); ``root``: the schema its ``$ref`` s point into. An object property's own
    properties, and a list's items (and theirs), are rewritten too, one level down."""
    if not isinstance(properties, dict):
        return {}
    read: dict[str, dict[str, Any]] = {}
    for name, spec in properties.items():
        plain = _plain(spec, root, _MAX_HOPS)
        if plain.get("type") == "array" and isinstance(plain.get("items"), dict):
            plain = {**plain, "items": _inner(_plain(plain["items"], root, _MAX_HOPS), root)}
        read[str(name)] = _inner(plain, root)
    return read


def _inner(spec: dict[str, Any], root: object) -> dict[str, Any]:
    """An object's own properties rewritten too (one level)."""
    inner = spec.get("properties")
    if spec.get("type") != "object" or not isinstance(inner, dict):
        return spec
    return {**spec, "properties": {n: _plain(p, root, _MAX_HOPS) for n, p in inner.items()}}


def _plain(spec: object, root: object, hops: int) -> dict[str, Any]:
    if not isinstance(spec, dict):
        return {}
    spec = _followed(spec, root, hops)
    kind = spec.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if isinstance(k, str) and k != "null"]
        spec = {**spec, "type": kinds[0]} if len(kinds) == 1 else _without(spec, "type")
    for key in _BRANCHES:
        if isinstance(spec.get(key), list):
            spec = _branched(spec, key, root, hops)
    every = spec.get("allOf")
    if isinstance(every, list) and len(every) == 1:
        spec = {**_plain(every[0], root, hops - 1), **_without(spec, "allOf")}
    if "const" in spec and "enum" not in spec:
        spec = {**spec, "enum": [spec["const"]]}
    spec = _notation(spec)
    return {
        key: value
        for key, value in spec.items()
        if key not in _KINDS or isinstance(value, _KINDS[key])
    }


# A notation a description writes for its value: a day, or a time of day.
_DAY_NOTATION = re.compile(r"(?<![A-Za-z])YYYY-MM-DD(?![A-Za-z0-9:T])")
_CLOCK_NOTATION = re.compile(r"(?<![A-Za-z])HH:[Mm][Mm](?!:)")
_CLOCK = "^([01]?[0-9]|2[0-3]):[0-5][0-9]$"


def _notation(spec: dict[str, Any]) -> dict[str, Any]:
    """A string the schema does not constrain, read as the notation its description
    writes (``format: date`` for "YYYY-MM-DD", a clock's pattern for "HH:MM")."""
    description = spec.get("description")
    if not isinstance(description, str) or spec.get("type", "string") != "string":
        return spec
    if any(key in spec for key in ("format", "pattern", "enum")):
        return spec
    head = description[:200]
    if _DAY_NOTATION.search(head):
        return {**spec, "format": "date"}
    if _CLOCK_NOTATION.search(head):
        return {**spec, "pattern": _CLOCK}
    return spec


def _followed(spec: dict[str, Any], root: object, hops: int) -> dict[str, Any]:
    """``spec`` with its local ``$ref`` replaced by what it points to (its own keys kept)."""
    while hops > 0 and isinstance(spec.get("$ref"), str):
        target = _pointed(root, spec["$ref"])
        own = _without(spec, "$ref")
        if not isinstance(target, dict):
            return own
        spec = {**target, **own}
        hops -= 1
    return _without(spec, "$ref") if "$ref" in spec else spec


def _pointed(root: object, reference: str) -> object:
    """What a JSON pointer in the same schema (``#/$defs/Day``) points to; None if
    nothing, or if it points elsewhere."""
    if not reference.startswith("#/"):
        return None
    node = root
    for part in reference[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _branched(spec: dict[str, Any], key: str, root: object, hops: int) -> dict[str, Any]:
    """``spec`` with its ``anyOf`` / ``oneOf`` read as one schema, where it can be."""
    branches = [_plain(b, root, hops - 1) for b in spec[key] if isinstance(b, dict)]
    real = [b for b in branches if b.get("type") != "null" and b.get("enum") != [None]]
    own = _without(spec, key)
    if real and all(isinstance(b.get("enum"), list) for b in real):
        options: list[Any] = []
        for option in (option for b in real for option in b["enum"]):
            if option is not None and option not in options:
                options.append(option)
        kinds = {b.get("type") for b in real if isinstance(b.get("type"), str)}
        typed = {"type": kinds.pop()} if len(kinds) == 1 else {}
        return {**typed, **own, "enum": options}
    if len(real) == 1:
        return {**real[0], **own}
    return own


def _without(spec: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in spec.items() if k != key}
