"""Search errors; each carries the ``reason`` clients branch on."""

from __future__ import annotations

from collections.abc import Sequence

from reach_common.errors import BadRequest, NotFound, ReachError, Unprocessable

LLM_HOW_TO = (
    "Configure a model: set ANTHROPIC_API_KEY (Anthropic), or OPENAI_API_KEY (OpenAI), or "
    "LLM_BASE_URL and LLM_MODEL for an OpenAI-compatible server (vLLM, llama.cpp, Ollama); "
    "LLM_PROVIDER picks one explicitly. Restart the retriever afterwards."
)


class EmptyQuery(Unprocessable):
    reason = "empty_query"

    def __init__(self) -> None:
        super().__init__("The query is empty; send some text to search for.")


class InvalidQuery(Unprocessable):
    reason = "invalid_query"

    def __init__(self, problem: str) -> None:
        super().__init__(f"The query cannot be searched: {problem}.")


class QueryTooLong(ReachError):
    status_code = 413
    reason = "query_too_long"

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(
            f"The query has {length} characters; at most {limit} are accepted.",
            length=length,
            limit=limit,
        )


class UnknownMode(Unprocessable):
    reason = "unknown_mode"

    def __init__(self, mode: str, allowed: Sequence[str]) -> None:
        super().__init__(
            f"Unknown mode {mode!r}; use one of {', '.join(allowed)}.",
            mode=mode,
            allowed=list(allowed),
        )


class UnknownRewrite(Unprocessable):
    reason = "unknown_rewrite"

    def __init__(self, rewrite: str, allowed: Sequence[str]) -> None:
        super().__init__(
            f"Unknown rewrite {rewrite!r}; use one of {', '.join(allowed)}.",
            rewrite=rewrite,
            allowed=list(allowed),
        )


class TopKOutOfRange(Unprocessable):
    reason = "top_k_out_of_range"

    def __init__(self, top_k: int, maximum: int) -> None:
        super().__init__(
            f"top_k is {top_k}; it must be between 1 and {maximum}.",
            top_k=top_k,
            minimum=1,
            maximum=maximum,
        )


def preview(name: str, limit: int = 80) -> str:
    """``name`` cut to ``limit`` characters, safe to echo in JSON (surrogates escaped)."""
    cut = name[:limit].encode("utf-8", "backslashreplace").decode()
    return cut + "…" if len(name) > limit else cut


class UnknownSources(NotFound):
    """Names at most ``SHOWN`` of the missing sources, each cut short, and counts them all."""

    reason = "source_not_found"
    SHOWN = 5

    def __init__(self, sources: Sequence[str]) -> None:
        shown = [preview(s) for s in sources[: self.SHOWN]]
        names = ", ".join(repr(s) for s in shown)
        more = len(sources) - len(shown)
        super().__init__(
            f"No source named {names}{f' (and {more} more)' if more else ''} has been "
            "ingested; GET /sources lists them.",
            sources=shown,
            missing=len(sources),
        )


class LLMUnavailable(BadRequest):
    reason = "llm_unavailable"

    def __init__(self, rewrite: str) -> None:
        super().__init__(
            f"rewrite={rewrite!r} needs an LLM and none is configured (offline mode). "
            f"{LLM_HOW_TO} Without a model, use rewrite 'none' or 'expansion'.",
            rewrite=rewrite,
        )


class InvalidSources(Unprocessable):
    reason = "invalid_sources"

    def __init__(self) -> None:
        super().__init__("sources is an empty list; omit it to search every source.")
