"""Choosing the provider from settings: offline by default, clear errors at startup."""

from __future__ import annotations

from typing import Any

import pytest

from reach_common.llm.anthropic import AnthropicProvider
from reach_common.llm.errors import LLMConfigError
from reach_common.llm.factory import check_settings, create_provider
from reach_common.llm.openai import OpenAIProvider
from reach_common.settings import LLMSettings


def settings(**values: Any) -> LLMSettings:
    # Explicit values only: the test must not depend on keys in the environment.
    base: dict[str, Any] = {
        "llm_provider": "auto",
        "anthropic_api_key": None,
        "openai_api_key": None,
        "llm_base_url": None,
        "llm_model": None,
    }
    return LLMSettings(**{**base, **values})


def test_no_key_means_offline() -> None:
    assert create_provider(settings()) is None
    assert create_provider(settings(llm_provider="offline", anthropic_api_key="k")) is None


def test_auto_prefers_anthropic_then_openai_then_a_local_server() -> None:
    anthropic = create_provider(settings(anthropic_api_key="a", openai_api_key="o"))
    assert isinstance(anthropic, AnthropicProvider)
    assert anthropic.model == "claude-sonnet-5-5"
    openai = create_provider(settings(openai_api_key="o", llm_model="gpt-5.4"))
    assert isinstance(openai, OpenAIProvider)
    assert (openai.name, openai.model) == (
        "openai",
        "gpt-5.4",
    )
    local = create_provider(settings(llm_base_url="http://127.0.0.1:8000/v1", llm_model="qwen3"))
    assert isinstance(local, OpenAIProvider)
    assert local.name == "openai-compatible"


@pytest.mark.parametrize(
    ("values", "needs"),
    [
        ({"llm_provider": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"llm_provider": "openai"}, "OPENAI_API_KEY"),
        ({"llm_provider": "openai", "llm_base_url": "http://127.0.0.1:8000/v1"}, "LLM_MODEL"),
        ({"llm_provider": "gemini"}, "LLM_PROVIDER"),
    ],
)
def test_an_explicit_provider_without_what_it_needs_fails_clearly(
    values: dict[str, Any], needs: str
) -> None:
    with pytest.raises(LLMConfigError) as caught:
        check_settings(settings(**values))
    assert needs in caught.value.message
    assert caught.value.reason == "llm_not_configured"
    with pytest.raises(LLMConfigError):
        create_provider(settings(**values))


def test_the_agent_refuses_to_start_without_the_key(service_env: dict[str, Any]) -> None:
    from agent.app import create_app
    from agent.settings import Settings

    with pytest.raises(LLMConfigError, match="ANTHROPIC_API_KEY"):
        create_app(Settings(**service_env, llm_provider="anthropic", anthropic_api_key=None))
