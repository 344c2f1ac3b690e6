"""Redaction of arguments before they are audited.

A value is replaced by ``[REDACTED]`` when its name looks like a secret
(password, token, api_key, ...) or its schema marks it sensitive
(``writeOnly: true``, ``format: password`` or ``x-sensitive: true``) or its description
calls it one (a password or passcode, a PIN, a CVV, 密码, 验证码: a gate's ``new_code``
described as 新密码). Nested objects and arrays are followed, with their sub-schemas,
down to :data:`MAX_DEPTH` levels; anything deeper (arguments the gateway refuses anyway:
they may nest 64 levels at most) shows as :data:`TOO_DEEP`, so no input can exhaust the
stack.
"""

from __future__ import annotations

import functools
import re
from typing import Any

REDACTED = "[REDACTED]"
TOO_DEEP = "[TOO DEEP]"
MAX_DEPTH = 100  # more than invoke.validation.MAX_DEPTH: valid arguments are never cut
_NO_SCHEMA: dict[str, Any] = {}
_SECRET_NAME = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|apikey|authori[sz]ation|credential|"
    r"private[_-]?key|cookie|session[_-]?id|otp|pin$",
    re.IGNORECASE,
)


# A description that calls its value a secret: "新密码，4-6位数字" of a gate's ``new_code``,
# "PIN of the card", "the card's CVV".
_SECRET_DESCRIBED = re.compile(
    r"\bpass(?:word|code|phrase)s?\b|\bpin\b|\bcvv\b|\bcvc\b|密码|口令|验证码",
    re.IGNORECASE,
)


def _sensitive(schema: dict[str, Any]) -> bool:
    return bool(
        schema.get("writeOnly")
        or schema.get("x-sensitive")
        or schema.get("format") == "password"
        or _described_secret(schema.get("description"))
    )


@functools.lru_cache(maxsize=4096)
def _described_secret(description: object) -> bool:
    """Whether a property's description calls its value a secret (read once per text)."""
    return isinstance(description, str) and _SECRET_DESCRIBED.search(description) is not None


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    """Whether a key names a secret: keys repeat across an array's objects, so each is
    matched once."""
    return _SECRET_NAME.search(name) is not None


def redact(value: Any, schema: dict[str, Any] | None = None, *, _depth: int = 0) -> Any:
    schema = schema if isinstance(schema, dict) else {}
    if isinstance(value, (dict, list)) and _depth >= MAX_DEPTH:
        return TOO_DEEP
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            properties = {}
        out = {}
        for name, item in value.items():
            sub = properties.get(name, _NO_SCHEMA)
            if _secret_name(str(name)) or (isinstance(sub, dict) and _sensitive(sub)):
                out[name] = REDACTED
            elif isinstance(item, (dict, list)):
                out[name] = redact(item, sub, _depth=_depth + 1)
            else:  # a scalar under a name that is no secret: as it is
                out[name] = item
        return out
    if isinstance(value, list):
        items = schema.get("items", {})
        return [
            redact(item, items, _depth=_depth + 1) if isinstance(item, (dict, list)) else item
            for item in value
        ]
    return value
