"""Vendor-neutral messages, tool specs and results shared by every provider.

Providers translate these to and from each vendor's wire format (Anthropic
``tool_use`` / ``tool_result`` blocks, OpenAI ``tool_calls`` and ``tool``
messages), so callers never see vendor quirks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: its name, when to use it, and its JSON Schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """The model asking for one tool call.

    ``raw_arguments`` is set only when the model's argument text could not be
    used: not a JSON object, or cut off by the token limit. ``arguments`` is
    then ``{}`` and the call must not run; callers answer it with an error
    result instead.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None


@dataclass(frozen=True)
class Message:
    """One turn of a conversation.

    - ``user``: ``content`` is the user's text.
    - ``assistant``: ``content`` is text (may be empty) and ``tool_calls`` the calls it made.
    - ``tool``: the result of the call ``tool_call_id``; ``is_error`` marks a failure.
    """

    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """A whole model answer: text, tool calls, and why it stopped."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str = "end_turn"
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class StreamEvent:
    """One event of a streamed answer.

    ``kind`` is ``delta`` (``text`` holds new text), ``tool_call`` (a complete
    call, emitted once its arguments are fully accumulated), or ``done``
    (``completion`` holds the whole answer).
    """

    kind: Literal["delta", "tool_call", "done"]
    text: str = ""
    tool_call: ToolCall | None = None
    completion: Completion | None = None


class LLMProvider(Protocol):
    """What every provider offers. Errors surface as ``reach_common.llm.errors.LLMError``."""

    name: str
    model: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> AsyncIterator[StreamEvent]: ...
