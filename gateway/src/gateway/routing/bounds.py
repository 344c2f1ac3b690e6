"""How much of a tool's schema a request is read for.

A manifest may declare thousands of parameters (an upstream MCP server's tool, an
imported OpenAPI operation, a 1 MB body), and the router reads a request for each one it
reads: the filling rules (0.2-0.8 ms a parameter with examples in its description) and
the tool's words. 10,000 parameters cost 0.2-4.6 s a request on the event loop. The
router reads at most ``MAX_READ_PROPERTIES``, the required ones first; a required one
past them is reported missing, and the schema still judges the call.

A parameter's description is read by a dozen rules (does it take a country, a currency,
a file, which examples does it give …), each over the whole text: 60 descriptions of
15,000 characters cost 1 s a request. The router reads the first
``MAX_READ_DESCRIPTION`` characters of each (the longest in the request sets and BFCL
has 221).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_READ_PROPERTIES = 64
MAX_READ_DESCRIPTION = 500


def _read_properties(properties: dict[str, Any], first: Sequence[str] = ()) -> dict[str, Any]:
    """``properties``, at most ``MAX_READ_PROPERTIES`` of them: those named in ``first``
    (the required ones), then the others as declared."""
    if len(properties) <= MAX_READ_PROPERTIES:
        return properties
    names = [n for n in dict.fromkeys([*first, *properties]) if n in properties]
    return {n: properties[n] for n in names[:MAX_READ_PROPERTIES]}


class RoutingSchema(dict[str, Any]):
    """An input schema as the router reads it (``routing_schema``); ``unread``: the
    properties it leaves out (a required one among them is missing)."""

    unread: frozenset[str] = frozenset()


def with_properties(schema: dict[str, Any], changed: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the ``changed`` properties in place of its own (a shape or a zone
    lent to a parameter); what the router leaves out of a ``RoutingSchema`` stays out."""
    out = {**schema, "properties": {**(schema.get("properties") or {}), **changed}}
    if not isinstance(schema, RoutingSchema):
        return out
    kept = RoutingSchema(out)
    kept.unread = schema.unread
    return kept


def routing_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """What the router reads of an input schema: at most ``MAX_READ_PROPERTIES``
    properties (the required first) and each description (a property's, its items')
    cut at ``MAX_READ_DESCRIPTION`` characters; ``required`` as it is. ``schema`` itself
    when nothing is cut; what is kept is shared, not copied."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    required = schema.get("required")
    names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    kept = _read_properties(properties, names)
    cut = {name: _cut(spec) for name, spec in kept.items()}
    if len(cut) == len(properties) and all(cut[n] is properties[n] for n in cut):
        return schema
    bounded = RoutingSchema({**schema, "properties": cut})
    bounded.unread = frozenset(properties) - frozenset(cut)
    return bounded


def _cut(spec: Any) -> Any:
    """``spec`` with its description and its items' cut at ``MAX_READ_DESCRIPTION``."""
    if not isinstance(spec, dict):
        return spec
    cut = spec
    description = spec.get("description")
    if isinstance(description, str) and len(description) > MAX_READ_DESCRIPTION:
        cut = {**spec, "description": description[:MAX_READ_DESCRIPTION]}
    items = spec.get("items")
    if isinstance(items, dict) and _cut(items) is not items:
        cut = {**cut, "items": _cut(items)}
    return cut
