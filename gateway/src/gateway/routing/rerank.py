"""The fine stage with an LLM: the model picks among the coarse candidates and fills arguments.

Candidates go to the model as function definitions. The model calls one, or
answers in text that none fits. Arguments that fail the tool's
``input_schema`` go back once as an error tool result carrying the validation
message; a second failure ends in ``invalid_arguments``.

Vendors accept tool names matching ``^[A-Za-z0-9_-]{1,64}$``, while catalogue
ids may hold dots (``math.factorial``); names are mapped for the model and
mapped back here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.routing.context import PastCall
from reach_common.llm.types import LLMProvider, Message, ToolCall, ToolSpec

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

SYSTEM_PROMPT = """You route a user's request to exactly one tool.
Call the single tool that does what the user asks, with arguments taken from the request
(or from the recent calls below when the user refers back to them, e.g. "this SKU").
Never invent argument values the user did not give. If no tool fits, do not call any tool:
reply with the single word NONE and a short reason."""


@dataclass
class RerankResult:
    tool_id: str | None
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    attempts: int = 1
    validation_error: str | None = None


def vendor_names(tool_ids: Sequence[str]) -> dict[str, str]:
    """tool id → a vendor-safe, unique function name."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for tool_id in tool_ids:
        base = _UNSAFE.sub("_", tool_id)[:60] or "tool"
        name, n = base, 2
        while name in taken:
            name, n = f"{base[:57]}_{n}", n + 1
        taken.add(name)
        names[tool_id] = name
    return names


def _context_note(recent: Sequence[PastCall]) -> str:
    if not recent:
        return ""
    lines = [
        f"- {c.tool_id}({json.dumps(c.arguments, ensure_ascii=False)}) -> {c.output[:300]}"
        for c in recent
    ]
    return "\n\nRecent calls in this session, newest first:\n" + "\n".join(lines)


async def rerank(
    provider: LLMProvider,
    query: str,
    manifests: Sequence[dict[str, Any]],
    *,
    recent: Sequence[PastCall] = (),
    validate: Callable[[str, dict[str, Any]], str | None],
    max_tokens: int = 512,
) -> RerankResult:
    """Ask the model to choose; ``validate(tool_id, args)`` returns an error message or None."""
    names = vendor_names([str(m["tool_id"]) for m in manifests])
    by_name = {name: tool_id for tool_id, name in names.items()}
    tools = [
        ToolSpec(
            name=names[str(m["tool_id"])],
            description=str(m.get("description") or m.get("name") or m["tool_id"]),
            input_schema=m.get("input_schema") or {"type": "object", "properties": {}},
        )
        for m in manifests
    ]
    system = SYSTEM_PROMPT + _context_note(recent)
    messages: list[Message] = [Message(role="user", content=query)]
    result = RerankResult(tool_id=None)
    for attempt in (1, 2):
        completion = await provider.complete(
            messages, system=system, tools=tools, max_tokens=max_tokens
        )
        result.attempts = attempt
        call: ToolCall | None = next((c for c in completion.tool_calls if c.name in by_name), None)
        if call is None:
            result.tool_id = None
            result.reason = completion.text.strip() or "the model chose no tool"
            return result
        tool_id = by_name[call.name]
        error: str | None = (
            "the arguments were not a JSON object of values JSON can carry"
            if call.raw_arguments is not None  # not an object, cut off, or 1e999 in it
            else validate(tool_id, call.arguments)
        )
        result.tool_id, result.arguments = tool_id, call.arguments
        if error is None:
            result.validation_error = None
            return result
        result.validation_error = error
        messages += [
            Message(role="assistant", content=completion.text, tool_calls=(call,)),
            Message(
                role="tool",
                tool_call_id=call.id,
                is_error=True,
                content=f"Invalid arguments: {error} Call the tool again with corrected arguments.",
            ),
        ]
    return result
