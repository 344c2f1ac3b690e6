"""Manifest-supplied regular expressions, run by RE2 and never by Python's ``re``.

A manifest's ``input_schema`` may carry ``pattern`` and ``patternProperties``
regexes that the gateway matches against caller-supplied text. Python's
backtracking engine can take exponential time on a crafted pattern
(``^(a+)+$`` against ``"a" * 40 + "!"``) and would freeze the event loop, so
every such regex is compiled by RE2, which matches in time linear in the input
and refuses the constructs that need backtracking (backreferences,
lookaround). Registration refuses a pattern RE2 cannot compile
(:func:`pattern_problems`), so a registered pattern can never stall.

:data:`SchemaValidator` is Draft 2020-12 with the three keywords that apply
schema regexes (``pattern``, ``patternProperties`` and the property filter of
``additionalProperties``) re-implemented on RE2, the keywords whose cost grew with
a hostile value or a long enum replaced (``gateway.registry.keywords``), and no
remote ``$ref`` retrieval. ``unevaluatedProperties`` would match ``patternProperties`` with
``re`` inside jsonschema, so a schema may not combine the two (refused at
registration).

The dialect is ECMA-262 as JSON Schema asks, within what RE2 supports:
``\\uXXXX`` escapes are accepted (rewritten to RE2's ``\\x{XXXX}``).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import re2
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend
from referencing import Registry

from gateway.registry.keywords import KEYWORDS, keyed_enums, listed

_HEX = frozenset("0123456789abcdefABCDEF")
# Keywords whose values are data, not schemas: a "pattern" inside them is not a regex.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "example"})
# Keywords whose values map names to subschemas (the names are not keywords).
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "dependentSchemas"})


class PatternError(ValueError):
    """RE2 cannot compile the pattern (backreference, lookaround, bad syntax, too big)."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # the refusal is reported to the caller, not to stderr
    return options


_OPTIONS = _options()


def to_re2(pattern: str) -> str:
    """ECMA-262 ``\\uXXXX`` escapes as RE2's ``\\x{XXXX}``; everything else unchanged."""
    if "\\u" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            digits = pattern[i + 2 : i + 6]
            if escaped == "u" and len(digits) == 4 and set(digits) <= _HEX:
                out.append(f"\\x{{{digits}}}")
                i += 6
                continue
            out.append(pattern[i : i + 2])  # an escape pair: `\\u` stays a backslash + u
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> Any:
    """The RE2 program of a schema ``pattern`` (cached); raises :class:`PatternError`."""
    if not isinstance(pattern, str):
        raise PatternError("a pattern must be a string")
    try:
        return re2.compile(to_re2(pattern), _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise PatternError(str(detail)) from None
    except (TypeError, ValueError) as exc:  # e.g. a NUL byte, a surrogate
        raise PatternError(str(exc)) from None


def pattern_problems(schema: Any, path: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """``(json_path, problem)`` for every regex in ``schema`` that RE2 cannot compile,
    and for ``unevaluatedProperties`` combined with ``patternProperties``.

    Walks every subschema, including ones under unknown keywords (a ``$ref`` may
    point there); skips data keywords (``const``, ``enum``, ``default``, ``examples``).
    """
    problems: list[tuple[str, str]] = []
    seen: dict[str, bool] = {"patternProperties": False, "unevaluatedProperties": False}

    def check(pattern: str, where: tuple[str, ...]) -> None:
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            problems.append(
                (
                    json_path(where),
                    f"pattern {pattern[:200]!r} is not supported: {exc} (patterns run on RE2: "
                    "no backreferences or lookaround)",
                )
            )

    def walk(node: Any, where: tuple[str, ...]) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, (*where, str(index)))
            return
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            here = (*where, str(key))
            if key in _DATA_KEYWORDS:
                continue
            if key == "pattern" and isinstance(value, str):
                check(value, here)
            elif key == "patternProperties" and isinstance(value, dict):
                seen["patternProperties"] = True
                for name, sub in value.items():
                    check(str(name), (*here, str(name)))
                    walk(sub, (*here, str(name)))
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                for name, sub in value.items():
                    walk(sub, (*here, str(name)))
            else:
                if key == "unevaluatedProperties":
                    seen["unevaluatedProperties"] = True
                walk(value, here)

    walk(schema, path)
    if seen["patternProperties"] and seen["unevaluatedProperties"]:
        problems.append(
            (
                json_path(path),
                "patternProperties cannot be combined with unevaluatedProperties; "
                "use additionalProperties instead",
            )
        )
    return problems


def external_refs(schema: Any, path: tuple[str, ...] = ()) -> list[str]:
    """JSON paths of ``$ref`` / ``$dynamicRef`` that point outside ``schema`` itself."""
    found: list[str] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(schema, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                here = (*where, str(key))
                if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                    if not value.startswith("#"):
                        found.append(json_path(here))
                elif key not in _DATA_KEYWORDS:
                    stack.append((value, here))
        elif isinstance(node, list):
            stack.extend((item, (*where, str(i))) for i, item in enumerate(node))
    return sorted(found)


def json_path(parts: tuple[str, ...]) -> str:
    """``input_schema/properties/code/pattern`` (JSON Pointer without the leading slash)."""
    segments = (p if len(p) <= 100 else p[:100] + "…" for p in parts)
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in segments) or "(root)"


def search(program: Any, text: str) -> Any:
    """``program.search(text)``; text RE2 cannot read (a lone surrogate) matches nothing."""
    try:
        return program.search(text)
    except UnicodeEncodeError:
        return None


# --- the jsonschema keywords -------------------------------------------------------------------


def _compiled_or_error(pattern: str) -> tuple[Any, ValidationError | None]:
    try:
        return compile_pattern(pattern), None
    except PatternError as exc:
        return None, ValidationError(f"pattern {pattern[:200]!r} is not supported: {exc}")


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    compiled, error = _compiled_or_error(pattern)
    if error is not None:
        yield error
    elif search(compiled, instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        compiled, error = _compiled_or_error(pattern)
        if error is not None:
            yield error
            continue
        for key, value in instance.items():
            if search(compiled, key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: dict[str, Any], schema: dict[str, Any]) -> Iterator[str]:
    properties = schema.get("properties", {})
    compiled = []
    for pattern in schema.get("patternProperties", {}):
        program, error = _compiled_or_error(pattern)
        if error is None:
            compiled.append(program)
    for key in instance:
        if key in properties:
            continue
        if any(search(program, key) is not None for program in compiled):
            continue
        yield key


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """jsonschema's ``additionalProperties``, with the ``patternProperties`` filter on RE2."""
    if not validator.is_type(instance, "object"):
        return
    extras = sorted(set(_additional(instance, schema)), key=str)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = listed(extras)
        if "patternProperties" in schema:
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{names} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({names} {verb} unexpected)"
            )


def _regex_format(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        compile_pattern(instance)
    except PatternError:
        return False
    return True


#: ``format: regex`` checked by RE2: what check_schema accepts is what RE2 runs.
FORMAT_CHECKER = FormatChecker(formats=())
FORMAT_CHECKER.checkers = {**Draft202012Validator.FORMAT_CHECKER.checkers}
FORMAT_CHECKER.checks("regex")(_regex_format)

#: Draft 2020-12 with every schema regex on RE2.
SchemaValidator = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        **KEYWORDS,
    },
)

# Only the bundled meta-schemas: a `$ref` never makes the gateway fetch a URL.
_REGISTRY: Registry[Any] = Registry()


def schema_validator(schema: dict[str, Any]) -> Validator:
    """A validator for ``schema`` that runs its regexes on RE2 and resolves no remote refs."""
    validator: Validator = SchemaValidator(keyed_enums(schema), registry=_REGISTRY)
    return validator


def check_schema(schema: Any) -> None:
    """Draft 2020-12 meta-schema check, with ``format: regex`` judged by RE2."""
    SchemaValidator.check_schema(schema, format_checker=FORMAT_CHECKER)
