"""What can go wrong when calling a model, mapped once from each SDK's exceptions.

::

    LLMError (ReachError, 502 llm_error)          terminal unless a subclass says otherwise
    ├── LLMConfigError        llm_not_configured  bad or missing settings; raised at startup
    ├── LLMAuthError          llm_auth_failed     the key was refused (401/403)
    ├── LLMRequestError       llm_bad_request     the vendor rejected the request (400/404/413/422)
    ├── LLMResponseError      llm_bad_response    the answer could not be read
    └── LLMRetryableError     llm_unavailable     worth retrying later (retryable = True)
        ├── LLMConnectionError   llm_unreachable  connect failure or timeout
        ├── LLMRateLimitError    llm_rate_limited 429
        └── LLMOverloadedError   llm_overloaded   5xx, 529, or an ``error`` event mid-stream

Callers branch on ``retryable`` (or the class), never on vendor exception
types; the vendor's own message travels in ``message``, the API key never does.
The SDKs already retry connection errors, 429 and 5xx ``LLM_MAX_RETRIES``
times before one of these reaches a caller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reach_common.errors import ReachError

if TYPE_CHECKING:  # the SDKs take seconds to import; offline services never load them
    import anthropic
    import openai


class LLMError(ReachError):
    """A model call failed. ``retryable`` says whether trying again later may succeed."""

    status_code = 502
    reason = "llm_error"
    retryable = False

    def __init__(self, message: str, *, provider: str = "", **details: Any) -> None:
        if provider:
            details["provider"] = provider
        super().__init__(message, **details)
        self.provider = provider


class LLMConfigError(LLMError):
    status_code = 503
    reason = "llm_not_configured"


class LLMAuthError(LLMError):
    reason = "llm_auth_failed"


class LLMRequestError(LLMError):
    reason = "llm_bad_request"


class LLMResponseError(LLMError):
    reason = "llm_bad_response"


class LLMRetryableError(LLMError):
    status_code = 503
    reason = "llm_unavailable"
    retryable = True


class LLMConnectionError(LLMRetryableError):
    reason = "llm_unreachable"


class LLMRateLimitError(LLMRetryableError):
    status_code = 429
    reason = "llm_rate_limited"


class LLMOverloadedError(LLMRetryableError):
    reason = "llm_overloaded"


# Error ``type`` values the vendors send in a body or an SSE ``error`` event.
_RETRYABLE_TYPES = {
    "overloaded_error": LLMOverloadedError,
    "api_error": LLMOverloadedError,
    "server_error": LLMOverloadedError,
    "rate_limit_error": LLMRateLimitError,
    "rate_limit_exceeded": LLMRateLimitError,
    "timeout_error": LLMConnectionError,
}


def _by_status(status: int) -> type[LLMError]:
    if status in (401, 403):
        return LLMAuthError
    if status == 429:
        return LLMRateLimitError
    if status == 408:
        return LLMConnectionError
    if status >= 500:
        return LLMOverloadedError
    if 400 <= status < 500:
        return LLMRequestError
    return LLMError


def _error_fields(body: object) -> tuple[str | None, str | None]:
    """``(type, message)`` from ``{"error": {...}}`` or a bare ``{"type", "message"}``."""
    if not isinstance(body, dict):
        return None, None
    inner = body.get("error", body)
    if not isinstance(inner, dict):
        return None, None
    kind, message = inner.get("type"), inner.get("message")
    code = inner.get("code")
    if kind is None and isinstance(code, str):
        kind = code
    return (
        kind if isinstance(kind, str) else None,
        message if isinstance(message, str) else None,
    )


def _classify(status: int | None, body: object, fallback: str, provider: str) -> LLMError:
    kind, message = _error_fields(body)
    text = message or fallback
    if kind in _RETRYABLE_TYPES:
        cls: type[LLMError] = _RETRYABLE_TYPES[kind]
    elif status is not None and status != 200:
        cls = _by_status(status)
    else:
        # An error with no status (OpenAI-compatible servers put ``{"error": ...}``
        # in a 200 stream) and an unknown type: the request itself may be fine.
        cls = LLMOverloadedError if kind is None else LLMError
    if cls is LLMAuthError:
        # Vendors quote (part of) the refused key; it must not reach a response or a log.
        text = "the API key was refused; check the provider's *_API_KEY setting"
    details: dict[str, Any] = {}
    if status is not None and status != 200:
        details["vendor_status"] = status
    if kind:
        details["vendor_error"] = kind
    return cls(f"{provider} call failed: {text}", provider=provider, **details)


def from_anthropic(exc: anthropic.AnthropicError) -> LLMError:
    """Map any Anthropic SDK exception to the taxonomy above."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return LLMConnectionError("anthropic call timed out", provider="anthropic")
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMConnectionError("anthropic is unreachable", provider="anthropic")
    if isinstance(exc, anthropic.APIResponseValidationError):
        return LLMResponseError("anthropic answered with an unexpected shape", provider="anthropic")
    if isinstance(exc, anthropic.APIStatusError):
        # A mid-stream ``error`` event arrives on a 200 response.
        return _classify(exc.status_code, exc.body, exc.message, "anthropic")
    if isinstance(exc, anthropic.APIError):
        return _classify(None, exc.body, exc.message, "anthropic")
    return LLMError(f"anthropic call failed: {type(exc).__name__}", provider="anthropic")


def from_openai(exc: openai.OpenAIError, provider: str = "openai") -> LLMError:
    """Map any OpenAI SDK exception (also from compatible servers) to the taxonomy above."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return LLMConnectionError(f"{provider} call timed out", provider=provider)
    if isinstance(exc, openai.APIConnectionError):
        return LLMConnectionError(f"{provider} is unreachable", provider=provider)
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMResponseError(f"{provider} answered with an unexpected shape", provider=provider)
    if isinstance(exc, openai.APIStatusError):
        return _classify(exc.status_code, exc.body, exc.message, provider)
    if isinstance(exc, openai.APIError):
        # The SDK raises a bare APIError for ``{"error": ...}`` inside a stream;
        # its body is the inner error object.
        return _classify(None, {"error": exc.body}, exc.message, provider)
    return LLMError(f"{provider} call failed: {type(exc).__name__}", provider=provider)
