"""OpenAI Chat Completions (and any compatible server) behind the provider interface.

``base_url`` points the same code at vLLM, llama.cpp or Ollama. Wire rules
this module owns:

- the system prompt is the first ``system`` message;
- an assistant turn with tool calls has ``content: null`` when it has no
  text, and ``arguments`` as a JSON *string* (``{}`` for a call whose own
  arguments were unusable);
- each result is its own ``tool`` message right after the call, in call
  order; there is no error flag, so failures are prefixed ``Error:``;
- streamed tool-call deltas are accumulated **by index** (``id`` and
  ``name`` arrive only on a call's first delta). Servers that omit ``index``
  or repeat ``index=0`` for every call are handled by watching for new ids;
- ``finish_reason: length`` means the arguments were cut off: such calls are
  marked unusable, never run.

Finish reasons are normalised to the Anthropic names the rest of Reach uses:
``stop`` → ``end_turn``, ``tool_calls`` → ``tool_use``, ``length`` →
``max_tokens``, ``content_filter`` → ``refusal``.

Requests go through the SDK client's own ``post`` (its HTTP client and pool,
auth, retries, error classes and stream parser), with the body already in wire
form. ``chat.completions.create`` would first walk the whole body against the
SDK's request types (renaming aliased keys, formatting dates and files): none
apply to what :func:`render_messages` builds, so the walk returns the body
unchanged, and it cost more CPU than the rest of a call (about 3 ms a call on a
20-message history). A test checks the walk still leaves our bodies unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from reach_common.llm.errors import LLMConnectionError, LLMResponseError, from_openai
from reach_common.llm.history import parse_arguments, repair
from reach_common.llm.types import Completion, Message, StreamEvent, ToolCall, ToolSpec, Usage

COMPLETIONS_PATH = "/chat/completions"
# What ``chat.completions.create`` sends with every request besides the body.
REQUEST_OPTIONS: openai.RequestOptions = {"security": {"bearer_auth": True}}

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def render_messages(messages: Sequence[Message], system: str | None) -> list[dict[str, Any]]:
    """Vendor-neutral history → Chat Completions ``messages``."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for message in repair(messages):
        if message.role == "user":
            out.append({"role": "user", "content": message.content})
        elif message.role == "tool":
            content = message.content or "(no output)"
            if message.is_error and not content.lower().startswith("error"):
                content = f"Error: {content}"
            out.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": content})
        elif message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.content or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                # An unusable call is replayed with ``{}``: servers
                                # that parse history (vLLM chat templates) reject
                                # broken JSON; its error result says what was wrong.
                                "arguments": json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        elif message.content:
            out.append({"role": "assistant", "content": message.content})
    return out


def render_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


def _mark_truncated(calls: list[ToolCall], raws: list[str]) -> list[ToolCall]:
    return [
        call
        if call.raw_arguments is not None
        else ToolCall(call.id, call.name, {}, raw_arguments=raw or "(cut off by the token limit)")
        for call, raw in zip(calls, raws, strict=True)
    ]


def _completion(response: ChatCompletion, provider: str) -> Completion:
    if not response.choices:
        raise LLMResponseError(f"{provider} answered with no choices", provider=provider)
    choice = response.choices[0]
    calls: list[ToolCall] = []
    raws: list[str] = []
    for call in choice.message.tool_calls or ():
        function = getattr(call, "function", None)
        if function is None:  # a custom (non-function) tool call; we never offer those
            continue
        arguments, raw = parse_arguments(function.arguments or "")
        calls.append(ToolCall(call.id, function.name, arguments, raw_arguments=raw))
        raws.append(function.arguments or "")
    # Typed as always present, but compatible servers do send null.
    reason: str | None = choice.finish_reason
    stop = STOP_REASONS.get(reason or "stop", reason or "end_turn")
    if stop == "max_tokens":
        calls = _mark_truncated(calls, raws)
    usage = (
        Usage(response.usage.prompt_tokens, response.usage.completion_tokens)
        if response.usage
        else Usage()
    )
    return Completion(choice.message.content or "", tuple(calls), stop, usage)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _StreamState:
    """Text and tool calls accumulated from chunks; calls keyed by their index."""

    texts: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    def _slot(self, index: int | None, call_id: str | None) -> _PartialCall:
        if index is None:  # Ollama / Gemini-compatible: no index; a new id starts a call
            index = len(self.calls) if call_id or not self.calls else max(self.calls)
        current = self.calls.get(index)
        if current is not None and call_id and current.id and call_id != current.id:
            # A server that sends index 0 for every call: a new id is a new call.
            index = max(self.calls) + 1
            current = None
        if current is None:
            current = self.calls[index] = _PartialCall()
        return current

    def handle(self, chunk: Any) -> str | None:
        """Take one chunk, as the JSON object it came as (keys a server leaves out, or
        sends as null, count as absent); the text it adds, if any. A chunk of another
        shape raises ``AttributeError``, ``TypeError`` or ``IndexError``."""
        usage = chunk.get("usage")
        if usage is not None:
            self.usage = Usage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
        choices = chunk.get("choices")
        if not choices:
            return None
        choice = choices[0]
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta") or {}
        for tool_delta in delta.get("tool_calls") or ():
            call_id = tool_delta.get("id")
            slot = self._slot(tool_delta.get("index"), call_id)
            if call_id:
                slot.id = call_id
            function = tool_delta.get("function")
            if function is not None:
                if function.get("name"):
                    slot.name = function["name"]
                if function.get("arguments"):
                    slot.arguments.append(function["arguments"])
        content: str | None = delta.get("content")
        if content:
            self.texts.append(content)
            return content
        return None

    def finish(self) -> Completion:
        calls: list[ToolCall] = []
        raws: list[str] = []
        for position, index in enumerate(sorted(self.calls)):
            partial = self.calls[index]
            raw = "".join(partial.arguments)
            arguments, unusable = parse_arguments(raw)
            call_id = partial.id or f"call_{position}"  # some servers never send one
            calls.append(ToolCall(call_id, partial.name, arguments, raw_arguments=unusable))
            raws.append(raw)
        reason = self.finish_reason or "stop"
        stop = STOP_REASONS.get(reason, reason)
        if stop == "max_tokens":
            calls = _mark_truncated(calls, raws)
        return Completion("".join(self.texts), tuple(calls), stop, self.usage)


class OpenAIProvider:
    """GPT models, or any OpenAI-compatible server via ``base_url``, through the official SDK."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 2,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.name = "openai" if base_url is None else "openai-compatible"
        self._compatible = base_url is not None
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=max_retries,
            http_client=http_client,
        )

    def _params(
        self,
        messages: Sequence[Message],
        system: str | None,
        tools: Sequence[ToolSpec],
        max_tokens: int,
        temperature: float | None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": render_messages(messages, system),
        }
        # OpenAI's current models refuse ``max_tokens``; compatible servers
        # (llama.cpp, older vLLM and Ollama) only know ``max_tokens``.
        params["max_tokens" if self._compatible else "max_completion_tokens"] = max_tokens
        if tools:
            params["tools"] = render_tools(tools)
        if temperature is not None:
            params["temperature"] = temperature
        return params

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> Completion:
        params = self._params(messages, system, tools, max_tokens, temperature)
        try:
            response = await self._client.post(
                COMPLETIONS_PATH, body=params, options=REQUEST_OPTIONS, cast_to=ChatCompletion
            )
        except openai.OpenAIError as exc:
            raise from_openai(exc, self.name) from exc
        return _completion(response, self.name)

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> AsyncIterator[StreamEvent]:
        params = self._params(messages, system, tools, max_tokens, temperature)
        state = _StreamState()
        try:
            chunks = await self._client.post(
                COMPLETIONS_PATH,
                body={**params, "stream": True, "stream_options": {"include_usage": True}},
                options=REQUEST_OPTIONS,
                cast_to=ChatCompletion,
                stream=True,
                # Each chunk as the JSON object it is (``object``: the SDK builds no
                # model of it); see ``_StreamState.handle``.
                stream_cls=openai.AsyncStream[object],
            )
            async with chunks:
                async for chunk in chunks:
                    try:
                        text = state.handle(chunk)
                    except (AttributeError, TypeError, IndexError) as exc:
                        raise LLMResponseError(
                            f"{self.name} sent a chunk of an unexpected shape", provider=self.name
                        ) from exc
                    if text:
                        yield StreamEvent("delta", text=text)
        except openai.OpenAIError as exc:
            raise from_openai(exc, self.name) from exc
        except httpx2.HTTPError as exc:
            raise LLMConnectionError(
                f"{self.name} stream broke: {type(exc).__name__}", provider=self.name
            ) from exc
        if state.finish_reason is None:
            raise LLMConnectionError(
                f"{self.name} stream ended without a finish_reason", provider=self.name
            )
        completion = state.finish()
        for call in completion.tool_calls:
            yield StreamEvent("tool_call", tool_call=call)
        yield StreamEvent("done", completion=completion)

    async def aclose(self) -> None:
        await self._client.close()
