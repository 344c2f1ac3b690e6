"""``POST /chat`` request and reply."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent.sessions.schemas import SESSION_ID_PATTERN
from reach_common.auth.caller import UserContext, has_control_character


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str | None = Field(
        None,
        pattern=SESSION_ID_PATTERN,
        description="Continue this session; a new id starts a session with it. Omit for a new one.",
        examples=["s1"],
    )
    message: str = Field(min_length=1, max_length=32_000, description="The user's message.")
    message_id: str | None = Field(
        None,
        min_length=1,
        max_length=128,
        description=(
            "Your id for this message. Sending the same message again with the same id "
            "returns the first answer instead of running the turn twice."
        ),
    )
    user_context: UserContext = Field(
        default_factory=UserContext,
        description=(
            "Who the turn is for, as the client says. Trusted in permissive mode only; "
            "strict mode takes the caller from the API key or JWT and ignores this."
        ),
    )
    stream: bool = Field(
        False,
        description="Answer as Server-Sent Events: delta, tool_call, tool_result, done, error.",
    )

    @field_validator("message")
    @classmethod
    def _storable(cls, message: str) -> str:
        # Postgres text cannot hold NUL: refused here, not halfway through the turn.
        if "\x00" in message:
            raise ValueError("the message contains a NUL character")
        return message

    @field_validator("message_id")
    @classmethod
    def _printable(cls, message_id: str | None) -> str | None:
        if message_id is not None and has_control_character(message_id):
            raise ValueError("message_id contains a control character")
        return message_id


class ToolCallRead(BaseModel):
    """One tool call of the turn and what it returned."""

    id: str
    tool_id: str
    arguments: dict[str, Any]
    round: int
    is_error: bool
    result: Any = Field(description="The tool's output (JSON when it was JSON), or the error.")


class ChatReply(BaseModel):
    session_id: str
    message_id: str = Field(description="The id of the user message (yours, or one we made).")
    reply: str
    tool_calls: list[ToolCallRead]
    rounds: int = Field(description="Model rounds that called tools.")
    stop_reason: str = Field(
        description=(
            "end_turn, max_tool_rounds (the tool budget ran out and the model answered "
            "without tools), max_tokens, refusal, or no_matching_tool (offline mode)."
        )
    )
    mode: str = Field(description="anthropic, openai, openai-compatible or offline.")
    replayed: bool = Field(False, description="True when this is the stored answer of a retry.")
    trace_id: str | None
