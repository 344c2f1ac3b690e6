"""Gateway settings, from the environment."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from reach_common.settings import CommonSettings


class Settings(CommonSettings):
    service_name: str = "gateway"
    port: int = Field(
        8080, validation_alias=AliasChoices("GATEWAY_PORT", "PORT"), description="HTTP port."
    )
    shop_url: str = Field("http://127.0.0.1:9000", description="Base URL of the shop service.")
    retriever_url: str = Field(
        "http://127.0.0.1:8082", description="Base URL of the retriever service."
    )
    agent_url: str = Field("http://127.0.0.1:8081", description="Base URL of the agent service.")
