"""Text as Postgres can store it: NUL characters, which ``text`` and ``jsonb`` refuse, and
halves of surrogate pairs, which UTF-8 cannot encode, as U+FFFD. For what arrives after
work was done (a model's reply, a span of a request whose
path held NUL), where refusing would lose the record of that work; input that can still
be refused is refused instead (``reach_common.middleware``, each service's schemas)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

REPLACEMENT = "\ufffd"
# Half of a UTF-16 surrogate pair, alone: Python strings can hold one, UTF-8 cannot.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def is_storable(text: str) -> bool:
    """Whether Postgres can store ``text`` as it is: encodable as UTF-8, and no NUL."""
    return "\x00" not in text and (text.isascii() or LONE_SURROGATE.search(text) is None)


def encodable_text(text: str) -> str:
    """``text`` with every half of a surrogate pair replaced by U+FFFD: UTF-8 encodes it."""
    return text if text.isascii() else LONE_SURROGATE.sub(REPLACEMENT, text)


def storable_text(text: str) -> str:
    """``text`` with NUL and every half of a surrogate pair replaced by U+FFFD."""
    return encodable_text(text.replace("\x00", REPLACEMENT) if "\x00" in text else text)


def _mapped(value: Any, text: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, list | tuple):
        return [_mapped(item, text) for item in value]
    if isinstance(value, dict):
        return {text(str(key)): _mapped(item, text) for key, item in value.items()}
    return value


def storable(value: Any) -> Any:
    """``value`` with ``storable_text`` applied to every string, and to the keys and items
    of nested dicts, lists and tuples (a tuple comes back a list, as JSON would have it)."""
    return _mapped(value, storable_text)


def encodable(value: Any) -> Any:
    """``value`` with ``encodable_text`` applied the same way (NUL kept: JSON carries it)."""
    return _mapped(value, encodable_text)


def unstorable_at(value: Any) -> str | None:
    """Where in a JSON ``value`` the first thing Postgres cannot store stands, as a path
    (``"a/2/b"``, ``""`` for the value itself), or None: a NUL or half a surrogate pair in
    a string or key, or a number that is not finite (Python's ``json`` reads ``NaN``,
    ``Infinity`` and ``1e400``). Walked without recursion: any depth costs its size."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if not is_storable(item):
                return path
        elif isinstance(item, float):
            if not math.isfinite(item):
                return path
        elif isinstance(item, dict):
            for key, inner in item.items():
                here = f"{path}/{key}" if path else str(key)
                if not is_storable(str(key)):
                    return path
                stack.append((here, inner))
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}/{i}" if path else str(i), inner) for i, inner in enumerate(item))
    return None


def storable_json(value: Any) -> Any:
    """``value`` when Postgres can store it (``unstorable_at``), else ValueError naming
    where: for a schema field's ``AfterValidator``, so the request gets a 422."""
    where = unstorable_at(value)
    if where is not None:
        raise ValueError(
            f"{where or 'the value'} holds a NUL, half a surrogate pair or a number that is "
            "not finite"
        )
    return value


Model = TypeVar("Model")


def refuse_unstorable(model: Model) -> Model:
    """A pydantic model's ``model_validator(mode="after")`` body: the model, unless a
    field holds what Postgres cannot store (``storable_json`` says where)."""
    storable_json({name: getattr(model, name) for name in type(model).model_fields})  # type: ignore[attr-defined]
    return model
