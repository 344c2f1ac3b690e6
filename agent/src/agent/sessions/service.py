"""Sessions as the loop sees them: stored rows ↔ model messages, and turn writes.

Each write is its own short transaction, never held across a model or tool
call. A round (the assistant's tool calls plus all of their results) is one
statement, so one transaction: a crash or a cancelled turn leaves either the
whole round or nothing of it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agent.sessions import repository
from agent.sessions.models import ChatMessage
from agent.sessions.repository import NewMessage
from reach_common.llm.types import Message, ToolCall


def to_llm(row: ChatMessage) -> Message:
    """A stored row as the vendor-neutral message the providers render."""
    if row.role == "assistant":
        calls = tuple(
            ToolCall(
                id=str(call["id"]),
                name=str(call["name"]),
                arguments=dict(call.get("arguments") or {}),
                raw_arguments=call.get("raw_arguments"),
            )
            for call in row.tool_calls or ()
        )
        return Message(role="assistant", content=row.content, tool_calls=calls)
    if row.role == "tool":
        return Message(
            role="tool", content=row.content, tool_call_id=row.tool_call_id, is_error=row.is_error
        )
    return Message(role="user", content=row.content)


def call_record(call: ToolCall, tool_id: str, round_no: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": call.id,
        "name": call.name,
        "tool_id": tool_id,
        "arguments": call.arguments,
        "round": round_no,
    }
    if call.raw_arguments is not None:
        record["raw_arguments"] = call.raw_arguments
    return record


def parse_result(content: str) -> Any:
    try:
        return json.loads(content)
    except ValueError:
        return content


class TurnStore:
    """Writes one turn's messages, each step in its own transaction."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        session_id: str,
        turn_id: uuid.UUID,
        trace_id: str | None,
    ) -> None:
        self._sessionmaker = sessionmaker
        self.session_id = session_id
        self.turn_id = turn_id
        self._trace_id = trace_id

    async def _append(self, batch: Sequence[NewMessage]) -> None:
        # One statement, atomic by itself (see repository.append), so it runs in autocommit:
        # no BEGIN and COMMIT round trips around it.
        async with self._sessionmaker() as db:
            await db.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
            await repository.append(db, self.session_id, batch)

    async def save_round(
        self,
        text: str,
        calls: Sequence[tuple[ToolCall, str]],
        results: Sequence[Message],
        round_no: int,
    ) -> None:
        """The assistant's calls (with the tool id each maps to) and every result, atomically."""
        batch = [
            NewMessage(
                role="assistant",
                turn_id=self.turn_id,
                content=text,
                tool_calls=[call_record(call, tool_id, round_no) for call, tool_id in calls],
                trace_id=self._trace_id,
            )
        ]
        tool_ids = {call.id: tool_id for call, tool_id in calls}
        batch.extend(
            NewMessage(
                role="tool",
                turn_id=self.turn_id,
                content=result.content,
                tool_call_id=result.tool_call_id,
                tool_name=tool_ids.get(result.tool_call_id or ""),
                is_error=result.is_error,
                trace_id=self._trace_id,
            )
            for result in results
        )
        await self._append(batch)

    async def save_final(self, text: str, stop_reason: str, rounds: int) -> None:
        await self._append(
            [
                NewMessage(
                    role="assistant",
                    turn_id=self.turn_id,
                    content=text,
                    stop_reason=stop_reason,
                    rounds=rounds,
                    trace_id=self._trace_id,
                )
            ]
        )
