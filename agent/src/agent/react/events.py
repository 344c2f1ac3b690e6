"""What a turn reports while it runs; the chat layer sends these as SSE or collects them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

EventKind = Literal["delta", "tool_call", "tool_result", "approval_required", "done"]


@dataclass(frozen=True)
class TurnEvent:
    """``delta``: ``{text}``; ``tool_call``: ``{id, tool_id, arguments, round}``;
    ``tool_result``: the same plus ``{is_error, result, latency_ms}``;
    ``approval_required``: ``{tool_id, approval_id, status_url}`` (the turn then ends with
    ``stop_reason: awaiting_approval``); ``done``: ``{reply, stop_reason, rounds}``."""

    kind: EventKind
    data: dict[str, Any]
