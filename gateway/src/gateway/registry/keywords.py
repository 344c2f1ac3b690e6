"""JSON Schema keywords whose cost does not grow with a hostile value or a long enum.

jsonschema decides these keywords correctly but not cheaply for what a gateway is
sent (docs/security.md, finding 24):

- ``enum`` and ``const`` compare a value with each option in turn. An enum of 80,000
  options (an imported OpenAPI document, an upstream MCP server) checked against an
  array of 1,000 items took 8.7 s, on the event loop.
- ``uniqueItems`` compares every pair of items it cannot sort (990 small objects:
  1.5 s; a megabyte of them: hours).
- Most keywords write the whole offending value into their message, and a message
  is built for each error, whether or not anyone reads it: ``repr`` of a megabyte
  holds the interpreter ~30 ms, an ``anyOf`` pays it once per branch, and a wrong
  item of an 80,000-option enum wrote all the options (63 MB for 50 items).

Here the same keywords give the same verdicts (JSON equality: ``1`` equals ``1.0``,
``true`` is not ``1``), but a value is looked up by a canonical key (:func:`key`; an
enum's keys are built once per schema), uniqueness is a set of keys, and a message
shows a large value, an enum's options and a list of unexpected names cut short.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

_JSONSCHEMA = Draft202012Validator.VALIDATORS  # jsonschema's own, for what is not replaced
# A value shown in a message: as ``repr`` shows it, unless it holds more than
# SHOWN_WHOLE_ITEMS values (nested ones included), when reprlib cuts it short.
SHOWN_WHOLE_ITEMS = 100
SHOWN_OPTIONS = 20  # an enum's options, or unexpected names, a message lists
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxtuple, _SHOWN.maxdict = 4, 10, 10, 10
_SHOWN.maxstring, _SHOWN.maxlong, _SHOWN.maxother = 200, 200, 200

_TRUE, _FALSE = ("boolean", True), ("boolean", False)
_NOTHING = object()  # a key no option has
_DATA = frozenset({"const", "default", "examples", "example"})  # values that are no schema
# Keywords whose value maps names (not keywords) to schemas.
_NAME_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


def shown_whole(value: Any) -> bool:
    """Whether ``value`` is small enough to show whole: at most SHOWN_WHOLE_ITEMS values
    in all, nested values and keys included, a string counting one more per 200
    characters. The walk stops at the bound, so it costs no more than the bound."""
    budget = SHOWN_WHOLE_ITEMS
    pending = [value]
    while pending:
        item = pending.pop()
        budget -= 1 + (len(item) // 200 if isinstance(item, str) else 0)
        if budget < 0:
            return False
        if isinstance(item, list):
            if len(item) > budget:
                return False
            pending.extend(item)
        elif isinstance(item, dict):
            if 2 * len(item) > budget:
                return False
            pending.extend(item)  # the keys
            pending.extend(item.values())
    return True


def shown(value: Any) -> str:
    """``repr(value)``, or a short picture of it (reprlib) when it is a large object or
    array. A string is shown whole (its length is bounded by ``max_argument_chars``, and
    ``gateway.invoke.validation`` puts a preview in its place)."""
    if isinstance(value, str) or shown_whole(value):
        return repr(value)
    return _SHOWN.repr(value)


def listed(items: list[Any]) -> str:
    """The first SHOWN_OPTIONS of ``items`` as ``repr`` writes them, and how many more."""
    head = ", ".join(shown(each) for each in items[:SHOWN_OPTIONS])
    more = len(items) - SHOWN_OPTIONS
    return head if more <= 0 else f"{head}, … and {more} more"


def _kind(value: Any) -> str:
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else ""


def key(value: Any) -> Any:
    """A hashable key, equal for two JSON values exactly when JSON Schema calls them equal.

    Numbers compare by value (``1`` and ``1.0`` are one key, as in Python); a boolean is
    tagged, so ``true`` is not ``1``; arrays and objects are keyed item by item. Depth is
    bounded by the caller (arguments are checked to 64 levels before any schema).
    """
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    if isinstance(value, list):
        return ("array", *map(key, value))
    if isinstance(value, dict):
        return ("object", frozenset((name, key(item)) for name, item in value.items()))
    return value  # a string, a number or null


def _keyed(value: Any) -> Any | None:
    """``key(value)``, or None for a value nested past the interpreter's recursion limit
    (only a manifest's own enum or const can be: arguments are checked to 64 levels)."""
    try:
        return key(value)
    except RecursionError:
        return None


class Options(list[Any]):
    """An enum's options, with their keys and kinds worked out once, when the schema is
    compiled (:func:`keyed_enums`), not at each check."""

    __slots__ = ("keys", "kinds")

    def __init__(self, options: list[Any]) -> None:
        super().__init__(options)
        self.keys = frozenset(map(key, options))
        self.kinds = frozenset(map(_kind, options))


def keyed_enums(schema: Any) -> Any:
    """A copy of ``schema`` in which every ``enum`` list is :class:`Options` (equal to the
    list, so the schema means what it did). Data (``const``, ``default``, examples) is
    not copied. An enum nested past the recursion limit stays a list."""
    top = [schema]
    pending: list[tuple[Any, Any, bool]] = [(top, 0, False)]  # holder, slot, a map of names?
    while pending:
        holder, slot, names = pending.pop()
        node = holder[slot]
        if isinstance(node, dict):
            node = holder[slot] = dict(node)
            for name, value in node.items():
                if not names and name == "enum" and isinstance(value, list):
                    node[name] = _options(value)
                elif names or name not in _DATA:
                    pending.append((node, name, not names and name in _NAME_MAPS))
        elif isinstance(node, list):
            node = holder[slot] = list(node)
            pending.extend((node, index, False) for index in range(len(node)))
    return top[0]


def _options(options: list[Any]) -> list[Any]:
    try:
        return Options(options)
    except RecursionError:
        return options


def enum(validator: Any, options: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not isinstance(options, Options):  # a meta-schema's (short), or one nested too deep
        options = _options(options)
    if not isinstance(options, Options):
        yield from _JSONSCHEMA["enum"](validator, options, instance, schema)
        return
    if _kind(instance) not in options.kinds:  # no option of its kind: not keyed to learn it
        given: Any = _NOTHING
    else:
        given = _keyed(instance)
    if given is None:
        yield from _JSONSCHEMA["enum"](validator, options, instance, schema)
    elif given not in options.keys:
        yield ValidationError(f"{shown(instance)} is not one of [{listed(options)}]")


def const(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if _kind(value) != _kind(instance):
        yield ValidationError(f"{shown(value)} was expected")
        return
    wanted, given = _keyed(value), _keyed(instance)
    if wanted is None or given is None:
        yield from _JSONSCHEMA["const"](validator, value, instance, schema)
    elif wanted != given:
        yield ValidationError(f"{shown(value)} was expected")


def unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        item_key = key(item)
        if item_key in seen:
            yield ValidationError(f"{shown(instance)} has non-unique elements")
            return
        seen.add(item_key)


def _size(kind: str, least: bool, empty: str, wrong: str) -> Any:
    """``minItems``/``maxItems``/``minProperties``/``maxProperties``: jsonschema's verdicts
    and words, with a large value shown cut short."""

    def check(validator: Any, bound: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        if not validator.is_type(instance, kind):
            return
        if (len(instance) < bound) if least else (len(instance) > bound):
            edge = 1 if least else 0
            yield ValidationError(f"{shown(instance)} {empty if bound == edge else wrong}")

    return check


def type_(validator: Any, types: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    types = [types] if isinstance(types, str) else types
    if not any(validator.is_type(instance, each) for each in types):
        names = ", ".join(repr(each) for each in types)
        yield ValidationError(f"{shown(instance)} is not of type {names}")


def _first_holding(
    validator: Any, branches: Any, instance: Any
) -> tuple[int | None, list[ValidationError]]:
    """The first branch ``instance`` is valid under, and the errors of those before it."""
    errors: list[ValidationError] = []
    for index, branch in enumerate(branches):
        found = list(validator.descend(instance, branch, schema_path=index))
        if not found:
            return index, errors
        errors.extend(found)
    return None, errors


def any_of(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    holding, errors = _first_holding(validator, branches, instance)
    if holding is None:
        yield ValidationError(
            f"{shown(instance)} is not valid under any of the given schemas", context=errors
        )


def one_of(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    holding, errors = _first_holding(validator, branches, instance)
    if holding is None:
        yield ValidationError(
            f"{shown(instance)} is not valid under any of the given schemas", context=errors
        )
        return
    also = [
        index
        for index in range(holding + 1, len(branches))
        if validator.evolve(schema=branches[index]).is_valid(instance)
    ]
    if also:
        which = ", ".join(f"#{index}" for index in [holding, *also][:SHOWN_OPTIONS])
        yield ValidationError(f"{shown(instance)} is valid under each of schemas {which}")


def not_(validator: Any, denied: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.evolve(schema=denied).is_valid(instance):
        yield ValidationError(f"{shown(instance)} should not be valid under the given schema")


def contains(validator: Any, wanted: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "array"):
        return
    least = schema.get("minContains", 1)
    most = schema.get("maxContains", len(instance))
    matching = validator.evolve(schema=wanted)
    matches = 0
    for each in instance:
        if matching.is_valid(each):
            matches += 1
            if matches > most:
                yield ValidationError(
                    f"Too many items match the given schema (expected at most {most})",
                    validator="maxContains",
                    validator_value=most,
                )
                return
    if not matches and least > 0:
        yield ValidationError(f"{shown(instance)} does not contain items matching the given schema")
    elif matches < least:
        yield ValidationError(
            "Too few items match the given schema "
            f"(expected at least {least} but only {matches} matched)",
            validator="minContains",
            validator_value=least,
        )


def items(validator: Any, allowed: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's ``items``, with ``items: false``'s extra items shown cut short."""
    if allowed is not False or not validator.is_type(instance, "array"):
        yield from _JSONSCHEMA["items"](validator, allowed, instance, schema)
        return
    prefix = len(schema.get("prefixItems", []))
    extra = len(instance) - prefix
    if extra > 0:
        noun = "item" if prefix == 1 else "items"
        yield ValidationError(
            f"Expected at most {prefix} {noun} but found {extra} extra: {listed(instance[prefix:])}"
        )


#: The replacements, by keyword (``gateway.registry.patterns.SchemaValidator``).
KEYWORDS = {
    "type": type_,
    "enum": enum,
    "const": const,
    "uniqueItems": unique_items,
    "minItems": _size("array", True, "should be non-empty", "is too short"),
    "maxItems": _size("array", False, "is expected to be empty", "is too long"),
    "minProperties": _size(
        "object", True, "should be non-empty", "does not have enough properties"
    ),
    "maxProperties": _size("object", False, "is expected to be empty", "has too many properties"),
    "anyOf": any_of,
    "oneOf": one_of,
    "not": not_,
    "contains": contains,
    "items": items,
}
