"""An identifier's shape read off the tool's own description and the catalogue's other tools.

Teams write manifests unevenly: ``payment_submit`` gives ``loanNumber`` the pattern
``^[0-9]{10}$`` and ``escrow_summary_get`` gives its ``loan_number`` nothing but "Loan
number.". The router reads a shaped parameter as an identifier (a request that holds
its value fits the tool; the value is found by its shape); an unshaped one it reads
only by its label. So a string parameter with no shape of its own (no ``pattern``,
``enum`` or ``format``) is read with the pattern its namesakes in other tools agree on:
the same name, in any spelling (``loan_number``, ``loanNumber``, ``LoanNumber``), with
one pattern wherever it has one. And a tool that gives its identifier's example only in
its own description ("Check progress on a lost property report … by its reference (e.g.
LF-26-00871)") gives it to its one required string parameter with no shape and no
example of its own (``report_id``). The call is still validated against the tool's own
schema only.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from gateway.routing.bounds import with_properties
from gateway.routing.extract import examples_of

_SPELLING = re.compile(r"[^a-z0-9]")
_SHAPED = ("pattern", "enum", "format", "const")
_MAX_PROPERTIES = 64  # read per tool, as the router reads at most that many
_MAX_DESCRIPTION = 1000  # of a tool's description, read for an identifier's example


def _key(name: str) -> str:
    return _SPELLING.sub("", name.lower())


def _patterned(schema: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name in any spelling, pattern) of each parameter the schema gives a pattern."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    found = []
    for count, (name, spec) in enumerate(properties.items()):
        if count >= _MAX_PROPERTIES:
            break
        pattern = spec.get("pattern") if isinstance(spec, Mapping) else None
        if isinstance(pattern, str) and isinstance(name, str):
            found.append((_key(name), pattern))
    return found


class Patterns:
    """Per parameter name (any spelling), the one pattern every tool that gives that name
    a pattern gives it (a name given two patterns has none), kept as tools come and go:
    a change costs the tools it touches, not the catalogue."""

    def __init__(self) -> None:
        self._by_tool: dict[str, list[tuple[str, str]]] = {}
        self._counts: dict[str, Counter[str]] = {}

    def put(self, tool_id: str, schema: Mapping[str, Any] | None) -> None:
        """Take ``tool_id``'s parameters as ``schema`` gives them (None: it is gone)."""
        for key, pattern in self._by_tool.pop(tool_id, ()):
            counts = self._counts[key]
            counts[pattern] -= 1
            if counts[pattern] <= 0:
                del counts[pattern]
            if not counts:
                del self._counts[key]
        if schema is None:
            return
        pairs = _patterned(schema)
        self._by_tool[tool_id] = pairs
        for key, pattern in pairs:
            self._counts.setdefault(key, Counter())[pattern] += 1

    def get(self, key: str) -> str | None:
        counts = self._counts.get(key)
        return next(iter(counts)) if counts is not None and len(counts) == 1 else None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __getitem__(self, key: str) -> str:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found


def shared_patterns(schemas: Iterable[Mapping[str, Any]]) -> Patterns:
    """``Patterns`` of ``schemas`` at once."""
    patterns = Patterns()
    for position, schema in enumerate(schemas):
        patterns.put(str(position), schema)
    return patterns


def _unshaped(spec: object) -> bool:
    return (
        isinstance(spec, dict)
        and spec.get("type", "string") == "string"
        and not any(k in spec for k in _SHAPED)
    )


def with_kin(schema: dict[str, Any], patterns: Patterns, description: str = "") -> dict[str, Any]:
    """``schema`` with each unshaped string parameter given its namesakes' pattern
    (``shared_patterns``), and the example of the tool's ``description`` given to its one
    unshaped required string parameter; ``schema`` itself when none is."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    borrowed = {
        name: {**spec, "pattern": patterns[_key(name)]}
        for name, spec in properties.items()
        if _unshaped(spec) and _key(name) in patterns
    }
    required = [n for n in schema.get("required") or () if isinstance(n, str)]
    plain = [n for n in required if n not in borrowed and _unshaped(properties.get(n))]
    if description and len(plain) == 1 and not examples_of(properties[plain[0]]):
        shown = examples_of({"description": description[:_MAX_DESCRIPTION]})
        if len(shown) == 1 and not _names_another(description, shown[0], plain[0], properties):
            spec = properties[plain[0]]
            said = str(spec.get("description") or "")
            borrowed[plain[0]] = {**spec, "description": f"{said} (e.g. {shown[0]})".lstrip()}
    return with_properties(schema, borrowed) if borrowed else schema


_BEFORE_EXAMPLE = 40  # characters before an example that may name whose it is


def _names_another(
    description: str, example: str, name: str, properties: Mapping[str, Any]
) -> bool:
    """Whether the words just before ``example`` in the tool's description name another
    parameter than ``name``: "(orderId like GR-123456)" is the order's example, not the
    promo code's."""
    at = description.find(example)
    before = description[max(0, at - _BEFORE_EXAMPLE) : max(0, at)]
    written = _key(before)
    return any(
        other != name and isinstance(other, str) and len(_key(other)) >= 4
        and _key(other) in written
        for other in properties
    )  # fmt: skip


def lent(schema: Mapping[str, Any], own: Mapping[str, Any]) -> set[str]:
    """The parameters ``schema`` (``with_kin`` of ``own``) reads with a lent shape."""
    mine, read = own.get("properties") or {}, schema.get("properties") or {}
    return {name for name, spec in read.items() if mine.get(name) is not spec}
