"""Retriever settings, from the environment."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from reach_common.settings import CommonSettings


class Settings(CommonSettings):
    service_name: str = "retriever"
    port: int = Field(
        8082, validation_alias=AliasChoices("RETRIEVER_PORT", "PORT"), description="HTTP port."
    )
