"""Agent settings, from the environment."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, field_validator

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
    history_token_budget: int = Field(
        8000,
        ge=200,
        description=(
            "Tokens of earlier turns sent with each request. The newest whole turns that "
            "fit are kept; older ones are summarised by the model when one is configured."
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
