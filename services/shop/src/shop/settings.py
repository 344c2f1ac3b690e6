"""Shop settings, from the environment."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from reach_common.settings import CommonSettings


class Settings(CommonSettings):
    service_name: str = "shop"
    port: int = Field(
        9000, validation_alias=AliasChoices("SHOP_PORT", "PORT"), description="HTTP port."
    )
    report_delay_ms: int = Field(
        1500,
        ge=0,
        description="How long GET /api/reports/monthly takes, to exercise caller timeouts.",
    )
