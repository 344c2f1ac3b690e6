"""Settings mixins shared by every service.

Each service composes one ``Settings`` class from these. Every field reads a
flat upper-case environment variable (``DATABASE_URL``, ``LOG_LEVEL``) and has
a default that runs locally. Nothing reads a config file at import time.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from reach_common.auth.settings import AuthSettings

StringList = Annotated[list[str], NoDecode]


def string_list(value: Any) -> Any:
    """A JSON list or a comma-separated string, as people write both in env files."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


class BaseServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False, populate_by_name=True)

    service_name: str = Field("reach", description="Name in logs and on spans.")
    host: str = Field("127.0.0.1", description="Interface the HTTP server binds to.")
    port: int = Field(8000, description="Port the HTTP server listens on.")
    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING or ERROR.")
    log_format: str = Field("console", description="'console' for people, 'json' for machines.")
    allowed_hosts: StringList = Field(
        default_factory=lambda: ["localhost", "127.0.0.1", "::1"],
        description=(
            "Host header values this service answers (comma-separated; `*.example.com` "
            "matches subdomains, `*` anything). Others get 400 `invalid_host`: a web page "
            "cannot reach a local service by DNS rebinding. Compose and k8s add their "
            "service names."
        ),
    )
    max_body_bytes: int = Field(
        1_048_576, ge=1, description="Largest request body accepted (413 `payload_too_large`)."
    )
    trusted_proxies: StringList = Field(
        default_factory=list,
        description=(
            "Addresses or CIDRs of reverse proxies whose X-Forwarded-For is believed; the "
            "client address (rate limits of anonymous callers) is taken from it only then."
        ),
    )

    @field_validator("allowed_hosts", "trusted_proxies", mode="before")
    @classmethod
    def _split_shell_lists(cls, value: Any) -> Any:
        return string_list(value)


class DatabaseSettings(BaseSettings):
    database_url: str | None = Field(
        None,
        description=(
            "PostgreSQL URL. Unset: the embedded PostgreSQL under REACH_DATA_DIR is "
            "started (or joined, if already running)."
        ),
    )
    database_pool_size: int = Field(10, description="SQLAlchemy pool size per process.")


class RedisSettings(BaseSettings):
    redis_url: str | None = Field(
        None,
        description="Redis URL. Unset: the embedded Redis under REACH_DATA_DIR is used.",
    )


class TelemetrySettings(BaseSettings):
    otel_exporter_otlp_endpoint: str | None = Field(
        None, description="OTLP/HTTP collector endpoint; spans go there too when set."
    )
    otel_span_store: bool = Field(
        True, description="Write spans to telemetry.spans, which GET /traces/{id} reads."
    )


class MetricsSettings(BaseSettings):
    metrics_token: SecretStr | None = Field(
        None,
        description=(
            "Bearer token a Prometheus scrape of /metrics must send. Set, or with "
            "METRICS_ALLOW_FROM set, or in strict mode, /metrics is not public "
            "(docs/metrics.md)."
        ),
    )
    metrics_allow_from: StringList = Field(
        default_factory=list,
        description=(
            "Addresses or CIDRs that may scrape /metrics without the token (comma-separated). "
            "Strict mode with neither this nor METRICS_TOKEN refuses every scrape."
        ),
    )

    @field_validator("metrics_token", mode="before")
    @classmethod
    def _empty_token_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("metrics_allow_from", mode="before")
    @classmethod
    def _split_allow_from(cls, value: Any) -> Any:
        return string_list(value)


class EmbeddedSettings(BaseSettings):
    reach_data_dir: str = Field(".reach", description="Where embedded servers keep data.")


class EmbedderSettings(BaseSettings):
    embedder_threads: int = Field(
        1,
        ge=1,
        le=64,
        description=(
            "onnxruntime threads per embedding call (EMBEDDER_SOLO_THREADS for a call that "
            "finds no other running). 1 serves concurrent requests best: measured on 2 busy "
            "cores, one short query took 4.3 ms with 1 thread and 8.7 ms with 2 threads that "
            "spin while idle (make bench-embedder)."
        ),
    )
    embedder_solo_threads: int = Field(
        2,
        ge=1,
        le=64,
        description=(
            "onnxruntime threads for an embedding call that finds no other running in the "
            "process (capped at the CPU count): a second session on the same graph, ~15 MB "
            "in int8. A request embedded alone is faster (20 tokens in int8: 3.2 ms on 2 "
            "threads, 5.0 ms on 1); calls that overlap each keep EMBEDDER_THREADS. At most "
            "EMBEDDER_THREADS: no second session."
        ),
    )
    embedder_int8: bool | None = Field(
        None,
        description=(
            "Compute the embedder's matrix products in int8 (the same int8 weights; a short "
            "query 1.5-2x faster on CPUs with int8 dot products, vectors within cosine 0.999 of "
            "float; make bench-embedder compares). Kept only if a probe at start-up gives the "
            "float vector, else float32. Unset: on in the gateway and the agent, off in the "
            "retriever (its stored vectors were made in float32)."
        ),
    )


class CommonSettings(
    BaseServiceSettings,
    AuthSettings,
    DatabaseSettings,
    RedisSettings,
    TelemetrySettings,
    EmbeddedSettings,
    EmbedderSettings,
    MetricsSettings,
):
    """Everything a service built on ``reach_common`` needs."""


class LLMSettings(BaseSettings):
    """Which model, if any. No key configured → offline mode (no LLM calls at all)."""

    llm_provider: str = Field(
        "auto",
        description=(
            "'anthropic', 'openai', 'offline', or 'auto' (anthropic if ANTHROPIC_API_KEY "
            "is set, else openai if OPENAI_API_KEY or LLM_BASE_URL is set, else offline)."
        ),
    )
    llm_model: str | None = Field(None, description="Model name; each provider has a default.")
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible server (vLLM, llama.cpp, Ollama): its /v1 URL."
    )
    anthropic_api_key: SecretStr | None = Field(None, description="Anthropic API key.")
    openai_api_key: SecretStr | None = Field(None, description="OpenAI (or compatible) key.")
    llm_timeout_s: float = Field(60.0, description="Timeout of one model call.")
    llm_max_retries: int = Field(2, description="SDK retries on connection errors, 429 and 5xx.")
