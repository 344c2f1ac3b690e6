"""Anthropic Messages API behind the vendor-neutral provider interface.

Wire rules this module owns (see the Messages API tool-use docs):

- the system prompt is the top-level ``system`` parameter, never a message;
- an assistant turn is its text block (if any) followed by its ``tool_use``
  blocks, whose ``input`` is a JSON object;
- every ``tool_use`` is answered in the very next user turn by a
  ``tool_result`` with the same id, ``is_error`` marking failures; results of
  consecutive tool messages are merged into ONE user turn, results first,
  then any user text;
- text blocks are never empty, and ids are rewritten to ``[A-Za-z0-9_-]``;
- a stream's ``error`` event (sent after HTTP 200, e.g. ``overloaded_error``)
  fails the call like any other error.

A streamed call goes through the SDK client's ``post`` (its HTTP client and pool,
auth, retries, error classes and SSE parser) with each event handed over as the
JSON object it is: :class:`_StreamState` reads the few fields it needs, where
typed events cost a pydantic model per event. The SDK's own span is off; the
provider records the call's span itself (:mod:`reach_common.llm.spans`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message as AnthropicMessage

from reach_common.llm.errors import LLMConnectionError, LLMError, LLMResponseError, from_anthropic
from reach_common.llm.history import parse_arguments, repair, safe_tool_call_id, usable_arguments
from reach_common.llm.spans import CallSpan
from reach_common.llm.types import Completion, Message, StreamEvent, ToolCall, ToolSpec, Usage

MESSAGES_PATH = "/v1/messages"
SPAN_NAME = "anthropic.messages.create"


def render_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Vendor-neutral history → Anthropic ``messages`` (alternating user/assistant)."""
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for message in repair(messages):
        if message.role == "user":
            if message.content.strip():
                add("user", [{"type": "text", "text": message.content}])
        elif message.role == "tool":
            assert message.tool_call_id is not None  # repair() drops results without an id
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": safe_tool_call_id(message.tool_call_id),
                        "content": message.content or "(no output)",
                        "is_error": message.is_error,
                    }
                ],
            )
        else:
            blocks: list[dict[str, Any]] = []
            if message.content.strip():
                blocks.append({"type": "text", "text": message.content})
            blocks.extend(
                {
                    "type": "tool_use",
                    "id": safe_tool_call_id(call.id),
                    "name": call.name,
                    "input": call.arguments,
                }
                for call in message.tool_calls
            )
            add("assistant", blocks)
    # Results must come before any text in a user turn.
    for turn in turns:
        if turn["role"] == "user":
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return turns


def render_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in tools
    ]


def _tool_names_in(turns: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    has_blocks = False
    for turn in turns:
        for block in turn["content"]:
            if block["type"] == "tool_use":
                names[block["name"]] = None
            has_blocks = has_blocks or block["type"] in ("tool_use", "tool_result")
    if has_blocks and not names:  # results only; cannot happen after repair(), but be valid
        names["tool"] = None
    return list(names)


def _completion(message: AnthropicMessage) -> Completion:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            arguments, raw = usable_arguments(block.input)
            calls.append(ToolCall(block.id, block.name, arguments, raw_arguments=raw))
    stop = message.stop_reason or "end_turn"
    if stop == "max_tokens":
        calls = [_truncated(call, "") for call in calls]
    usage = Usage(message.usage.input_tokens, message.usage.output_tokens)
    return Completion("".join(texts), tuple(calls), stop, usage)


def _message_attributes(message: AnthropicMessage) -> dict[str, Any]:
    """What the call's span reports of a whole (not streamed) answer."""
    usage = message.usage
    return {
        "gen_ai.response.id": message.id,
        "gen_ai.response.model": message.model,
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_write.input_tokens": usage.cache_creation_input_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_input_tokens,
        "anthropic.response.service_tier": usage.service_tier,
        "anthropic.message.stop_reason": message.stop_reason,
    }


def _truncated(call: ToolCall, raw: str) -> ToolCall:
    """A call cut off by the token limit: never run it, even if its JSON happens to parse."""
    if call.raw_arguments is not None:
        return call
    return ToolCall(call.id, call.name, {}, raw_arguments=raw or "(cut off by the token limit)")


@dataclass
class _StreamState:
    """What one streamed message has said so far, block by block."""

    texts: list[str] = field(default_factory=list)
    kinds: dict[int, str] = field(default_factory=dict)
    tool_ids: dict[int, tuple[str, str]] = field(default_factory=dict)
    json_parts: dict[int, list[str]] = field(default_factory=dict)
    calls: list[ToolCall] = field(default_factory=list)
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    finished: bool = False
    # What the call's span reports of the answer (see ``reach_common.llm.spans``).
    response: dict[str, Any] = field(default_factory=dict)
    last: str = ""  # the type of the last event

    def handle(self, event: Any) -> StreamEvent | None:
        """Take one event, as the JSON object it came as; what it completes, if anything.
        An event of another shape raises ``AttributeError``, ``TypeError`` or ``KeyError``."""
        kind = self.last = event["type"]
        if kind == "content_block_delta":  # most events: checked first
            delta = event["delta"]
            if delta["type"] == "text_delta":
                self.texts.append(delta["text"])
                return StreamEvent("delta", text=delta["text"])
            parts = self.json_parts.get(event["index"])
            if delta["type"] == "input_json_delta" and parts is not None:
                parts.append(delta["partial_json"])
        elif kind == "message_start":
            self._message_start(event["message"])
        elif kind == "content_block_start":
            return self._block_start(event["index"], event["content_block"])
        elif kind == "content_block_stop":
            if event["index"] in self.tool_ids:
                call_id, name = self.tool_ids.pop(event["index"])
                arguments, raw = parse_arguments("".join(self.json_parts.pop(event["index"])))
                call = ToolCall(call_id, name, arguments, raw_arguments=raw)
                self.calls.append(call)
                return StreamEvent("tool_call", tool_call=call)
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            self.output_tokens = (event.get("usage") or {}).get("output_tokens") or 0
        elif kind == "message_stop":
            self.finished = True
        return None

    def _message_start(self, message: dict[str, Any]) -> None:
        usage = message.get("usage") or {}
        self.input_tokens = usage.get("input_tokens") or 0
        self.response.update(
            {
                "gen_ai.response.id": message.get("id"),
                "gen_ai.response.model": message.get("model"),
                "gen_ai.usage.cache_write.input_tokens": usage.get("cache_creation_input_tokens"),
                "gen_ai.usage.cache_read.input_tokens": usage.get("cache_read_input_tokens"),
                "anthropic.response.service_tier": usage.get("service_tier"),
            }
        )

    def span_attributes(self) -> dict[str, Any]:
        return {
            **self.response,
            "gen_ai.usage.input_tokens": self.input_tokens,
            "gen_ai.usage.output_tokens": self.output_tokens,
            "anthropic.message.stop_reason": self.stop_reason,
        }

    def _block_start(self, index: int, block: dict[str, Any]) -> StreamEvent | None:
        self.kinds[index] = block["type"]
        if block["type"] == "tool_use":
            self.tool_ids[index] = (block["id"], block["name"])
            self.json_parts[index] = []
        elif block["type"] == "text" and block.get("text"):
            self.texts.append(block["text"])
            return StreamEvent("delta", text=block["text"])
        return None

    def completion(self) -> Completion:
        calls = self.calls
        stop = self.stop_reason or "end_turn"
        if stop == "max_tokens":
            calls = [_truncated(call, call.raw_arguments or "") for call in calls]
        return Completion(
            "".join(self.texts), tuple(calls), stop, Usage(self.input_tokens, self.output_tokens)
        )


class AnthropicProvider:
    """Claude through the official SDK (``anthropic`` 2.x, on ``httpx2``)."""

    name = "anthropic"

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
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=max_retries,
            http_client=http_client,
            open_telemetry=False,  # the provider records each call's span itself
        )

    def _span(self, params: dict[str, Any], *, stream: bool) -> CallSpan:
        request = {
            "gen_ai.request.model": params["model"],
            "gen_ai.request.max_tokens": params["max_tokens"],
            "gen_ai.request.stream": stream,
        }
        return CallSpan(SPAN_NAME, self.name, self._client.base_url, MESSAGES_PATH, request)

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
            "max_tokens": max_tokens,
            "messages": render_messages(messages),
        }
        if system:
            params["system"] = system
        # Anthropic refuses a history with tool blocks unless tools are defined. A tool
        # the history called but this request does not offer (none now, or a turn's
        # shortlist without it) is declared as unavailable; with no tools offered,
        # tool_choice none so none can be called.
        offered = render_tools(tools)
        declared = {tool["name"] for tool in offered}
        unavailable = [
            {
                "name": name,
                "description": "Not available in this request.",
                "input_schema": {"type": "object"},
            }
            for name in _tool_names_in(params["messages"])
            if name not in declared
        ]
        if offered or unavailable:
            params["tools"] = offered + unavailable
        if unavailable and not offered:
            params["tool_choice"] = {"type": "none"}
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
        span = self._span(params, stream=False)
        try:
            message = await self._client.messages.create(**params, extra_headers=span.headers())
        except anthropic.AnthropicError as exc:
            error = from_anthropic(exc)
            span.fail(error)
            raise error from exc
        except BaseException as exc:
            span.fail(exc)
            raise
        completion = _completion(message)
        span.responded(200, message._request_id)
        span.finish(_message_attributes(message))
        return completion

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
        span = self._span(params, stream=True)
        try:
            # Closed as soon as this stream is: the response goes back to the pool at once.
            async with aclosing(self._events(params, state, span)) as events:
                async for out in events:
                    yield out
        except BaseException as exc:
            span.fail(exc)
            raise
        span.finish(state.span_attributes())
        yield StreamEvent("done", completion=state.completion())

    async def _events(
        self, params: dict[str, Any], state: _StreamState, span: CallSpan
    ) -> AsyncGenerator[StreamEvent, None]:
        """The stream's events as they come; the SDK's errors as ours."""
        try:
            events = await self._client.post(
                MESSAGES_PATH,
                body={**params, "stream": True},
                options={"headers": span.headers()},
                cast_to=AnthropicMessage,
                stream=True,
                # Each event as the JSON object it is (``object``: the SDK builds
                # no model of it); see ``_StreamState.handle``.
                stream_cls=anthropic.AsyncStream[object],
            )
            span.responded(events.response.status_code, events.response.headers.get("request-id"))
            async with events:
                async for event in events:
                    try:
                        out = state.handle(event)
                    except (AttributeError, TypeError, KeyError) as exc:
                        raise LLMResponseError(
                            "anthropic sent an event of an unexpected shape", provider=self.name
                        ) from exc
                    if state.last == "content_block_delta":
                        span.first_chunk()
                    if out is not None:
                        yield out
        except anthropic.AnthropicError as exc:
            raise from_anthropic(exc) from exc
        except httpx2.HTTPError as exc:
            raise LLMConnectionError(
                f"anthropic stream broke: {type(exc).__name__}", provider=self.name
            ) from exc
        if not state.finished:
            raise LLMConnectionError(
                "anthropic stream ended before message_stop", provider=self.name
            )

    async def aclose(self) -> None:
        await self._client.close()


__all__ = ["AnthropicProvider", "LLMError", "render_messages", "render_tools"]
