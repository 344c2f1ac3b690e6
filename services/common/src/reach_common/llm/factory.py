"""Choose and build the provider from settings, once, at startup.

``create_provider(settings)`` returns ``None`` in offline mode. A provider
chosen explicitly (``LLM_PROVIDER=anthropic``) without its key raises
:class:`LLMConfigError` here, so a misconfigured service refuses to start with
a message that says what to set, instead of failing in the middle of a turn.
"""

from __future__ import annotations

from typing import Any

from reach_common.llm.errors import LLMConfigError
from reach_common.llm.types import LLMProvider
from reach_common.settings import LLMSettings

DEFAULT_MODELS = {"anthropic": "claude-sonnet-5-5", "openai": "gpt-5.4-mini"}
PROVIDERS = ("auto", "anthropic", "openai", "offline")


def resolve_provider_name(settings: LLMSettings) -> str:
    """``anthropic``, ``openai`` or ``offline``, after applying ``auto``."""
    name = settings.llm_provider.strip().lower()
    if name not in PROVIDERS:
        raise LLMConfigError(
            f"LLM_PROVIDER={settings.llm_provider!r} is not one of {', '.join(PROVIDERS)}."
        )
    if name != "auto":
        return name
    if settings.anthropic_api_key is not None:
        return "anthropic"
    if settings.openai_api_key is not None or settings.llm_base_url:
        return "openai"
    return "offline"


def check_settings(settings: LLMSettings) -> str:
    """Validate the LLM settings without building anything; the provider name it resolves to.

    Call it where a service is created, so a bad configuration stops the
    service at startup. Raises :class:`LLMConfigError` with what to set.
    """
    name = resolve_provider_name(settings)
    if name == "anthropic" and settings.anthropic_api_key is None:
        raise LLMConfigError(
            "LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY. Set it, or set "
            "LLM_PROVIDER=offline to run without a model.",
            provider="anthropic",
        )
    if name == "openai":
        if settings.openai_api_key is None and not settings.llm_base_url:
            raise LLMConfigError(
                "LLM_PROVIDER=openai needs OPENAI_API_KEY, or LLM_BASE_URL for an "
                "OpenAI-compatible server (vLLM, llama.cpp, Ollama). Set one, or set "
                "LLM_PROVIDER=offline to run without a model.",
                provider="openai",
            )
        if settings.llm_base_url and not settings.llm_model:
            raise LLMConfigError(
                "LLM_BASE_URL is set, so LLM_MODEL must name the model that server serves "
                "(for example the name given to `vllm serve` or `ollama pull`).",
                provider="openai",
            )
    return name


def create_provider(settings: LLMSettings, **client_options: Any) -> LLMProvider | None:
    """The configured provider, or ``None`` for offline mode.

    ``client_options`` go to the provider's SDK client (tests pass an
    ``http_client``). Raises :class:`LLMConfigError` for a provider chosen
    without what it needs (see :func:`check_settings`).
    """
    name = check_settings(settings)
    explicit = settings.llm_provider.strip().lower() == name
    if name == "offline":
        return None
    timeout, retries = settings.llm_timeout_s, settings.llm_max_retries
    if name == "anthropic":
        from reach_common.llm.anthropic import AnthropicProvider

        assert settings.anthropic_api_key is not None  # check_settings
        return AnthropicProvider(
            api_key=settings.anthropic_api_key.get_secret_value(),
            model=settings.llm_model or DEFAULT_MODELS["anthropic"],
            # LLM_BASE_URL names an OpenAI-compatible server unless Anthropic was
            # chosen explicitly (then it is an Anthropic-compatible proxy).
            base_url=settings.llm_base_url if explicit else None,
            timeout_s=timeout,
            max_retries=retries,
            **client_options,
        )

    from reach_common.llm.openai import OpenAIProvider

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    return OpenAIProvider(
        # Local servers ignore the key, but the SDK insists on one.
        api_key=key or "no-key",
        model=settings.llm_model or DEFAULT_MODELS["openai"],
        base_url=settings.llm_base_url,
        timeout_s=timeout,
        max_retries=retries,
        **client_options,
    )
