"""Agent settings, from the environment."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, field_validator, model_validator

from reach_common.settings import CommonSettings, LLMSettings, StringList, string_list

DEFAULT_SYSTEM_PROMPT = (
    "You are Reach, an operations assistant. Answer with facts from tool results; "
    "call a tool whenever the answer depends on live data (stock, orders, sales, "
    "documents). Several independent lookups may be requested at once. If a tool "
    "fails, say what failed and what the user can do. Answer in the user's language."
)


class Settings(CommonSettings, LLMSettings):
    service_name: str = "agent"
    port: int = Field(
        8081, validation_alias=AliasChoices("AGENT_PORT", "PORT"), description="HTTP port."
    )
    gateway_url: str = Field(
        "http://127.0.0.1:8080",
        description="Base URL of the gateway; tools are listed and run there.",
    )
    gateway_timeout_s: float = Field(
        30.0, description="Longest wait for one gateway call (listing, invoking or /run)."
    )
    max_tool_rounds: int = Field(
        5,
        ge=0,
        le=50,
        description=(
            "Model rounds that may call tools in one turn; then one last call without "
            "tools produces the answer, with stop_reason max_tool_rounds."
        ),
    )
    max_output_tokens: int = Field(1024, ge=16, description="Token limit of each model answer.")
    context_token_budget: int = Field(
        16000,
        ge=1000,
        description=(
            "Most tokens one model request may hold: system prompt, memories, tool "
            "definitions, summary and history (estimated, calibrated by the provider's "
            "reported usage). Older turns are folded into a running summary to stay under it."
        ),
    )
    summary_token_budget: int = Field(
        800, ge=50, description="Longest running summary of folded turns, in tokens."
    )
    turn_token_reserve: int = Field(
        4000,
        ge=0,
        description=(
            "Tokens kept free for the current turn's tool rounds when earlier turns are "
            "chosen; if the turn still outgrows the budget, its oldest tool outputs are elided."
        ),
    )
    tools_token_share: float = Field(
        0.5,
        gt=0,
        le=1,
        description=(
            "Share of a model request's room (95 % of CONTEXT_TOKEN_BUDGET, less "
            "SUMMARY_TOKEN_BUDGET and TURN_TOKEN_RESERVE: 5,200 tokens at the defaults) that "
            "tool definitions may take. A caller's catalogue larger than that is shortlisted "
            "each turn: the tools the last turns called, then the gateway's ranking of the "
            "caller's tools for the message, while they fit."
        ),
    )
    memory_enabled: bool = Field(
        True,
        description=(
            "Long-term memory per user: facts from earlier sessions are recalled into each "
            "turn and new ones kept. Off: nothing is read or written."
        ),
    )
    memory_top_k: int = Field(3, ge=1, le=20, description="Memories recalled into one turn.")
    memory_min_similarity: float = Field(
        0.2,
        ge=-1.0,
        le=1.0,
        description=(
            "Least relevance to the message for a memory to be recalled: cosine similarity "
            "plus up to 0.2 for the memory's words the message repeats."
        ),
    )
    tool_result_max_chars: int = Field(
        8000, ge=200, description="Longest tool output shown to the model; the rest is cut."
    )
    session_lock_ttl_s: float = Field(
        30.0,
        gt=0,
        description=(
            "Lifetime of the one-writer lock of a session; renewed while a turn runs, so a "
            "crashed agent frees the session after at most this long."
        ),
    )
    system_prompt: str = Field(
        DEFAULT_SYSTEM_PROMPT,
        description=(
            "The model's instructions. A fixed note that tool output is data, never "
            "instructions, is always appended (see docs/agent-tool-policy.md)."
        ),
    )
    admin_roles: StringList = Field(
        default_factory=lambda: ["admin"],
        description=(
            "Roles that may list, read and delete every user's sessions (never append to "
            "them). In permissive mode a claimed role counts."
        ),
    )

    @field_validator("admin_roles", mode="before")
    @classmethod
    def _split_agent_lists(cls, value: Any) -> Any:
        return string_list(value)

    @model_validator(mode="after")
    def _budget_has_room(self) -> Settings:
        room = self.context_token_budget - self.summary_token_budget - self.turn_token_reserve
        if room < 500:
            raise ValueError(
                "CONTEXT_TOKEN_BUDGET must exceed SUMMARY_TOKEN_BUDGET + TURN_TOKEN_RESERVE "
                f"by at least 500 tokens (it leaves {room})"
            )
        return self
