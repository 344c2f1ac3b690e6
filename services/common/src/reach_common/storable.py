"""Text as Postgres can store it: NUL characters, which ``text`` and ``jsonb`` refuse, as
U+FFFD. For what arrives after work was done (a model's reply, a span of a request whose
path held NUL), where refusing would lose the record of that work; input that can still
be refused is refused instead (``reach_common.middleware``, each service's schemas)."""

from __future__ import annotations

from typing import Any

REPLACEMENT = "\ufffd"


def storable_text(text: str) -> str:
    return text.replace("\x00", REPLACEMENT) if "\x00" in text else text


def storable(value: Any) -> Any:
    """``value`` with NUL replaced in every string, and in the keys and items of nested
    dicts, lists and tuples (a tuple comes back a list, as JSON would have it)."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, list | tuple):
        return [storable(item) for item in value]
    if isinstance(value, dict):
        return {storable_text(str(key)): storable(item) for key, item in value.items()}
    return value
