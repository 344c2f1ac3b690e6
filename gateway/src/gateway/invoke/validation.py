"""Argument validation with messages a model can act on.

Arguments are checked in two steps. First one iterative walk that runs no regex
on ASCII text: no string value or object key may be longer than the tool's
``max_argument_chars`` (``MAX_ARGUMENT_CHARS``) or hold text that cannot be
stored or answered (a NUL character, half of a UTF-16 surrogate pair); no number
may be NaN or infinite (Python's ``json`` reads ``NaN``, ``Infinity`` and
``1e999``; a JSON answer and the audit log's JSONB cannot carry them); nothing
may nest deeper than :data:`MAX_DEPTH` levels. Then the tool's ``input_schema``
(its regexes run on RE2, see ``gateway.registry.patterns``).
A refusal never echoes a bad value back whole: a value shows as a short preview
(:data:`PREVIEW_CHARS` characters and "…"), and each problem is clipped.
"""

from __future__ import annotations

import math
import re
from itertools import islice
from typing import Any

from jsonschema.exceptions import ValidationError

from gateway.catalog.spec import ToolSpec
from gateway.executor.errors import InvalidArguments
from gateway.registry.keywords import shown_whole

PREVIEW_CHARS = 80
PROBLEM_CHARS = 300
FIELD_CHARS = 120
MAX_PROBLEMS = 10
_ERRORS_READ = 50  # a huge invalid array yields an error per item: read a few, not all
_ELLIPSIS = "…"
MAX_DEPTH = 64  # levels of objects and arrays in a call's arguments
_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")  # NUL; a lone UTF-16 surrogate
_REPLACEMENT = "\ufffd"


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with "…" when something was cut."""
    return text if len(text) <= limit else text[:limit] + _ELLIPSIS


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A short, quoted picture of ``value`` for an error message: never the value whole."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}{_ELLIPSIS} ({len(value)} characters)"
    if isinstance(value, dict):
        return f"an object with {len(value)} key(s)" if len(repr(value)) > limit else repr(value)
    if isinstance(value, list):
        return f"an array of {len(value)} item(s)" if len(repr(value)) > limit else repr(value)
    return clip(repr(value), limit)


def preview_arguments(value: Any, limit: int = PREVIEW_CHARS, *, _depth: int = 0) -> Any:
    """``value`` with every string clipped to ``limit`` characters and containers cut to
    20 entries (4 levels deep): what an error envelope may show of rejected arguments.
    Whatever they hold, the preview can be answered and audited: NUL and lone surrogates
    show as U+FFFD, a NaN or infinite number as text."""
    if isinstance(value, str):
        return _safe_text(value, limit)
    if isinstance(value, dict):
        if _depth >= 4:
            return f"{{{len(value)} key(s)}}"
        items = list(islice(value.items(), 20))
        shown = {
            _safe_text(str(k), limit): preview_arguments(v, limit, _depth=_depth + 1)
            for k, v in items
        }
        if len(value) > len(items):
            shown[_ELLIPSIS] = f"{len(value) - len(items)} more key(s)"
        return shown
    if isinstance(value, list):
        if _depth >= 4:
            return f"[{len(value)} item(s)]"
        out = [preview_arguments(v, limit, _depth=_depth + 1) for v in value[:20]]
        if len(value) > 20:
            out.append(f"{_ELLIPSIS} {len(value) - 20} more item(s)")
        return out
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def _bad_text(text: str) -> bool:
    """Holds a NUL or a lone surrogate: neither Postgres nor a UTF-8 answer takes it."""
    return "\x00" in text if text.isascii() else _UNSENDABLE.search(text) is not None


def _text_problem(text: str, limit: int, what: str) -> str | None:
    if len(text) > limit:
        return f"the {what} is {len(text)} characters long; at most {limit} are accepted"
    if _bad_text(text):
        return (
            f"the {what} holds a NUL character or an unpaired UTF-16 surrogate, "
            "which are not accepted"
        )
    return None


def _unacceptable(arguments: Any, limit: int) -> tuple[str, str] | None:
    """The first value or key the tool must not get, as (field, problem): text longer
    than ``limit`` or not storable, a non-finite number, nesting deeper than
    :data:`MAX_DEPTH`. Iterative, so deep nesting cannot exhaust the stack."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(arguments, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if problem := _text_problem(value, limit, "value"):
                return _dotted(path), problem
        elif isinstance(value, dict):
            if len(path) >= MAX_DEPTH:
                return _dotted(path), f"the arguments nest deeper than {MAX_DEPTH} levels"
            for key, item in value.items():
                name = str(key)
                if problem := _text_problem(name, limit, "key"):
                    return _dotted((*path, _safe_text(name, PREVIEW_CHARS))), problem
                stack.append((item, (*path, name)))
        elif isinstance(value, list):
            if len(path) >= MAX_DEPTH:
                return _dotted(path), f"the arguments nest deeper than {MAX_DEPTH} levels"
            stack.extend((item, (*path, str(i))) for i, item in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            return _dotted(path), (
                "the number is NaN or infinite; only finite numbers are accepted"
            )
    return None


# Arguments holding more values than this (keys, items; text counted by its length too)
# are redacted and checked in a worker thread: a megabyte of them costs the walks
# several hundred ms, which on the event loop held every other call of the gateway
# (docs/security.md, finding 22).
OFF_LOOP_VALUES = 2_000
_TEXT_PER_VALUE = 1_024  # characters of text that cost the walks about what one value does


def sizeable(arguments: Any, values: int = OFF_LOOP_VALUES) -> bool:
    """Whether ``arguments`` hold more than ``values`` values. Stops as soon as they do,
    so a huge call costs this about ``values`` steps, and a small one its own size."""
    budget = values
    stack = [arguments]
    while stack:
        value = stack.pop()
        budget -= 1
        if isinstance(value, dict):
            budget -= len(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            budget -= len(value) // _TEXT_PER_VALUE
        if budget < 0:
            return True
    return False


def _safe_text(text: str, limit: int) -> str:
    """``text`` clipped, with NUL and lone surrogates shown as U+FFFD."""
    text = clip(text, limit)
    return _UNSENDABLE.sub(_REPLACEMENT, text) if _bad_text(text) else text


def _dotted(path: tuple[str, ...] | list[str]) -> str:
    return _safe_text(".".join(p for p in path if p), FIELD_CHARS) or "(arguments)"


def _field(error: ValidationError) -> str:
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = error.message.split("'")[1] if "'" in error.message else ""
        path.append(missing)
    return _dotted(path)


def _hint(spec: ToolSpec, error: ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "required":
        name = _field(error).rsplit(".", 1)[-1]
        props = schema.get("properties", {})
        schema = props.get(name, {}) if isinstance(props, dict) else {}
    description = schema.get("description") if isinstance(schema, dict) else None
    return f" ({clip(str(description), PROBLEM_CHARS)})" if description else ""


def _problem(error: ValidationError) -> str:
    """jsonschema's message, with the offending value shown as a preview, then clipped."""
    message = error.message
    instance = error.instance
    # A larger object or array is not looked for (its full repr is what costs): every
    # message shows it cut short already (registry.keywords), and the message is clipped.
    if isinstance(instance, str) or (isinstance(instance, (dict, list)) and shown_whole(instance)):
        shown = repr(instance)  # once: a megabyte's repr holds the interpreter ~30 ms
        if len(shown) > PREVIEW_CHARS:
            message = message.replace(shown, preview(instance))
    return clip(message, PROBLEM_CHARS)


def check_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> None:
    """Raise 422 ``invalid_arguments`` naming each problem and what a valid value looks like."""
    unacceptable = _unacceptable(arguments, spec.max_argument_chars)
    if unacceptable is None and spec.validator.is_valid(arguments):
        return
    allowed = ", ".join(sorted(spec.input_schema.get("properties", {})))
    if unacceptable is not None:
        field, problem = unacceptable
        raise InvalidArguments(
            f"Arguments for tool {spec.tool_id!r} are invalid: {field}: {problem}. "
            f"Accepted arguments: {allowed or 'none'}. Fix them and call again.",
            errors=[{"field": field, "problem": problem}],
        )
    found = islice(spec.validator.iter_errors(arguments), _ERRORS_READ)
    errors = sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
    problems = [
        {"field": _field(e), "problem": _problem(e) + _hint(spec, e)} for e in errors[:MAX_PROBLEMS]
    ]
    summary = "; ".join(f"{p['field']}: {p['problem']}" for p in problems)
    raise InvalidArguments(
        f"Arguments for tool {spec.tool_id!r} are invalid: {summary}. "
        f"Accepted arguments: {allowed or 'none'}. Fix them and call again.",
        errors=problems,
    )
