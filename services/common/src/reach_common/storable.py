"""Text as Postgres can store it: NUL characters, which ``text`` and ``jsonb`` refuse, as
U+FFFD. For what arrives after work was done (a model's reply, a span of a request whose
path held NUL), where refusing would lose the record of that work; input that can still
be refused is refused instead (``reach_common.middleware``, each service's schemas)."""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
# Half of a UTF-16 surrogate pair, alone: Python strings can hold one, UTF-8 cannot.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def is_storable(text: str) -> bool:
    """Whether Postgres can store ``text`` as it is: encodable as UTF-8, and no NUL."""
    return "\x00" not in text and (text.isascii() or LONE_SURROGATE.search(text) is None)


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
