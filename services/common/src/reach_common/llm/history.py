"""Make a message history provider-valid before it is sent.

Both vendors reject a history where a tool call has no result, a result has
no call, or results do not directly follow their call. Writers should never
produce such a history (the agent saves a call and its results in one
transaction), but a history that was written by an older version, cut by a
budget, or edited by hand must not poison every later request. The repair is
deterministic, so the same stored history always renders the same prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from hashlib import sha256
from typing import Any

from reach_common.llm.types import Message, ToolCall

INTERRUPTED_RESULT = "The tool call was interrupted before it returned a result."

_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def safe_tool_call_id(call_id: str) -> str:
    """An id Anthropic accepts (``[A-Za-z0-9_-]+``), stable for the same input.

    Ids minted by other providers (``functions.x:0``, ``call_…|fc_…``) are
    rewritten; a short hash keeps two different ids from colliding.
    """
    if call_id and _SAFE_ID.match(call_id):
        return call_id
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[:48] or "call"
    return f"{cleaned}_{sha256(call_id.encode()).hexdigest()[:8]}"


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """``(arguments, None)`` for a JSON object, else ``({}, text)``: the raw text marks it unusable.

    Empty text means no arguments: some servers stream ``""`` for a
    parameterless call. An object holding a number no JSON can carry (``1e999``, which
    Python reads as infinite) is unusable too: it could be neither sent back to the
    model nor sent to a tool. (A NUL can be: a tool refuses it, and it is stored as
    U+FFFD.)
    """
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}, text
    if not isinstance(value, dict) or not _carried(value):
        return {}, text
    return value, None


def usable_arguments(value: object) -> tuple[dict[str, Any], str | None]:
    """``parse_arguments`` for arguments a vendor's SDK has already parsed (Anthropic's
    ``tool_use.input``): ``({}, their JSON text)`` when they are unusable."""
    if isinstance(value, dict) and _carried(value):
        return value, None
    return {}, json.dumps(value, default=str)  # "Infinity": the model's value, as text


def _carried(value: object) -> bool:
    """Whether JSON can carry ``value``: no number in it is infinite or NaN."""
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def repair(messages: Sequence[Message]) -> list[Message]:
    """Drop orphan results, answer unanswered calls, keep results right after their call.

    - a ``tool`` message whose call is not in the assistant message just before is dropped;
    - a duplicate result for one call keeps the first;
    - a call with no result gets an ``is_error`` result saying it was interrupted;
    - leading ``assistant``/``tool`` messages are dropped, so the history opens with the user.
    """
    out: list[Message] = []
    pending: dict[str, ToolCall] = {}
    answered: set[str] = set()

    def close_pending() -> None:
        for call_id in pending:
            if call_id not in answered:
                out.append(
                    Message(
                        role="tool",
                        content=INTERRUPTED_RESULT,
                        tool_call_id=call_id,
                        is_error=True,
                    )
                )
        pending.clear()
        answered.clear()

    for message in messages:
        if message.role == "tool":
            call_id = message.tool_call_id
            if call_id is None or call_id not in pending or call_id in answered:
                continue
            answered.add(call_id)
            out.append(message)
            continue
        close_pending()
        if not out and message.role != "user":
            continue
        out.append(message)
        if message.role == "assistant":
            pending.update((call.id, call) for call in message.tool_calls)
    close_pending()
    return out
