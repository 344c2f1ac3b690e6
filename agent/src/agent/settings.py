"""Agent settings, from the environment."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from reach_common.settings import CommonSettings


class Settings(CommonSettings):
    service_name: str = "agent"
    port: int = Field(
        8081, validation_alias=AliasChoices("AGENT_PORT", "PORT"), description="HTTP port."
    )
