"""A finished turn told again: its reply rebuilt from its stored rows, and as events.

A retried ``message_id`` whose turn finished gets the stored answer (``replayed:
true``), streamed as the same events a live turn sends.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.chat.schemas import ChatReply, ToolCallRead
from agent.react.events import TurnEvent
from agent.sessions.models import ChatMessage
from agent.sessions.service import parse_result


def replay_events(reply: ChatReply) -> list[TurnEvent]:
    events: list[TurnEvent] = []
    for call in reply.tool_calls:
        data = {
            "id": call.id,
            "tool_id": call.tool_id,
            "arguments": call.arguments,
            "round": call.round,
        }
        events.append(TurnEvent("tool_call", data))
        events.append(
            TurnEvent("tool_result", {**data, "is_error": call.is_error, "result": call.result})
        )
    events.append(TurnEvent("delta", {"text": reply.reply}))
    events.append(
        TurnEvent(
            "done", {"reply": reply.reply, "stop_reason": reply.stop_reason, "rounds": reply.rounds}
        )
    )
    return events


def stored_reply(
    rows: Sequence[ChatMessage], session_id: str, message_id: str, mode: str
) -> ChatReply | None:
    """The reply of a finished turn, rebuilt from its rows; None if it never finished."""
    final = next((r for r in rows if r.role == "assistant" and r.stop_reason), None)
    if final is None:
        return None
    results = {r.tool_call_id: r for r in rows if r.role == "tool"}
    calls: list[ToolCallRead] = []
    for row in rows:
        for call in row.tool_calls or ():
            result = results.get(str(call["id"]))
            calls.append(
                ToolCallRead(
                    id=str(call["id"]),
                    tool_id=str(call.get("tool_id") or call["name"]),
                    arguments=dict(call.get("arguments") or {}),
                    round=int(call.get("round") or 1),
                    is_error=bool(result and result.is_error),
                    result=parse_result(result.content) if result else None,
                )
            )
    return ChatReply(
        session_id=session_id,
        message_id=message_id,
        reply=final.content,
        tool_calls=calls,
        rounds=final.rounds or 0,
        stop_reason=final.stop_reason or "end_turn",
        mode=mode,
        replayed=True,
        trace_id=final.trace_id,
    )
