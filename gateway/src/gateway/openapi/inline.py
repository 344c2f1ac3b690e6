"""Schemas copied out of an OpenAPI document with every ``$ref`` resolved.

``referencing`` (the library ``jsonschema`` uses) resolves each reference inside the
document; nothing outside it is ever retrieved. A reference that recurs inside
itself is cut where it recurs (an empty schema: any value) and remembered, so
the proposal can say so. A schema that expands past ``MAX_SCHEMA_NODES`` (a
fan-out of references that doubles at every level) skips its operation. OpenAPI
3.0's ``nullable`` and boolean ``exclusiveMinimum``/``exclusiveMaximum`` become
JSON Schema 2020-12; 3.1 schemas pass unchanged.
"""

from __future__ import annotations

from typing import Any

from referencing._core import Resolver

MAX_SCHEMA_NODES = 5000
_DATA_KEYS = frozenset({"example", "examples", "default", "enum", "const"})


class Skip(Exception):
    """An operation that cannot become a tool; its reason and message go to `skipped`."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Inliner:
    """Copies a schema with ``$ref``s resolved, within MAX_SCHEMA_NODES."""

    def __init__(self, resolver: Resolver[Any]) -> None:
        self.root = resolver
        self.nodes = 0
        self.cut: set[str] = set()

    def __call__(
        self, node: Any, resolver: Resolver[Any] | None = None, stack: tuple[str, ...] = ()
    ) -> Any:
        resolver = resolver or self.root
        self.nodes += 1
        if self.nodes > MAX_SCHEMA_NODES:
            raise Skip(
                "schema_too_large", f"a schema expands to more than {MAX_SCHEMA_NODES} nodes"
            )
        if isinstance(node, list):
            return [self(item, resolver, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            siblings = {k: self(v, resolver, stack) for k, v in node.items() if k != "$ref"}
            if ref in stack:
                self.cut.add(ref)
                return siblings
            resolved = resolver.lookup(ref)
            target = self(resolved.contents, resolved.resolver, (*stack, ref))
            return {**target, **siblings} if isinstance(target, dict) else target
        out = {k: (v if k in _DATA_KEYS else self(v, resolver, stack)) for k, v in node.items()}
        return _json_schema(out)


def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0 schema words as JSON Schema 2020-12; 3.1 schemas pass unchanged."""
    if schema.pop("nullable", False) is True and "type" in schema:
        kind = schema["type"]
        kinds = kind if isinstance(kind, list) else [kind]
        schema["type"] = [*kinds, "null"] if "null" not in kinds else kinds
    for word, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if isinstance(schema.get(word), bool) and schema.pop(word) and bound in schema:
            schema[word] = schema.pop(bound)
    for word in ("discriminator", "xml", "externalDocs"):
        schema.pop(word, None)
    return schema
