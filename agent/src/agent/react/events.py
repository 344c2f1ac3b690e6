"""What a turn reports while it runs; the chat layer sends these as SSE or collects them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

EventKind = Literal["delta", "tool_call", "tool_result", "done"]


@dataclass(frozen=True)
class TurnEvent:
    """``delta``: ``{text}``; ``tool_call``: ``{id, tool_id, arguments, round}``;
    ``tool_result``: the same plus ``{is_error, result, latency_ms}``;
    ``done``: ``{reply, stop_reason, rounds}``."""

    kind: EventKind
    data: dict[str, Any]
