"""The OpenAI provider: the real SDK against recorded Chat Completions payloads (respx),
for OpenAI itself and for OpenAI-compatible servers reached through ``base_url``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from reach_common.llm.errors import (
    LLMAuthError,
    LLMOverloadedError,
    LLMRateLimitError,
    LLMRequestError,
)
from reach_common.llm.openai import OpenAIProvider, render_messages
from reach_common.llm.types import Message, StreamEvent, ToolCall, ToolSpec
from tests.fixtures.llm import json_response, sse_response

URL = "https://api.openai.com/v1/chat/completions"
LOCAL = "http://127.0.0.1:11434/v1"  # an Ollama-style server
TOOLS = [
    ToolSpec(
        "inventory_query",
        "Stock of one SKU.",
        {"type": "object", "properties": {"sku": {"type": "string"}}},
    )
]


@pytest.fixture
def provider() -> OpenAIProvider:
    return OpenAIProvider(api_key="sk-test", model="gpt-5.4-mini", max_retries=0)


async def collect(
    provider: OpenAIProvider, messages: list[Message], **kw: Any
) -> list[StreamEvent]:
    return [event async for event in provider.stream(messages, **kw)]


def sent(route: respx.Route) -> dict[str, Any]:
    return json.loads(route.calls[-1].request.content)


async def test_stream_accumulates_tool_call_deltas_by_index(
    api: respx.MockRouter, provider: OpenAIProvider
) -> None:
    route = api.post(URL).mock(return_value=sse_response("openai", "stream_tool_calls.sse"))
    events = await collect(
        provider, [Message("user", "SKU2024001?")], system="Be brief.", tools=TOOLS
    )
    assert [e.kind for e in events] == ["tool_call", "done"]
    call = events[0].tool_call
    assert call == ToolCall(
        "call_Vq4mR8tY2nL6wK1pX9sB3dF7", "inventory_query", {"sku": "SKU2024001"}
    )
    completion = events[-1].completion
    assert completion is not None
    assert completion.stop_reason == "tool_use"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (212, 19)
    body = sent(route)
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 1024
    assert "max_tokens" not in body
    assert body["tools"][0]["function"]["name"] == "inventory_query"
    assert route.calls[-1].request.headers["authorization"] == "Bearer sk-test"


async def test_stream_parallel_tool_calls(api: respx.MockRouter, provider: OpenAIProvider) -> None:
    api.post(URL).mock(return_value=sse_response("openai", "stream_parallel_tool_calls.sse"))
    events = await collect(provider, [Message("user", "stock and sales?")], tools=TOOLS)
    calls = [e.tool_call for e in events if e.kind == "tool_call"]
    assert [(c.id, c.name, c.arguments) for c in calls if c] == [
        ("call_Jm2xT6vQ9pR4nL8kW1sY5bH3", "inventory_query", {"sku": "SKU2024001"}),
        ("call_Pz7kN3wV1qT8mR5xL2jC9dF4", "sales_query", {"sku": "SKU2024001", "days": 30}),
    ]


async def test_stream_text_deltas(api: respx.MockRouter, provider: OpenAIProvider) -> None:
    api.post(URL).mock(return_value=sse_response("openai", "stream_final.sse"))
    events = await collect(provider, [Message("user", "so?")])
    text = "".join(e.text for e in events if e.kind == "delta")
    assert text == "Based on the tool results, SKU2024001 is in stock; the exact figures are above."
    assert events[-1].completion is not None
    assert events[-1].completion.text == text
    assert events[-1].completion.stop_reason == "end_turn"


async def test_error_mid_stream_raises_a_retryable_error(
    api: respx.MockRouter, provider: OpenAIProvider
) -> None:
    api.post(URL).mock(return_value=sse_response("openai", "stream_error_midstream.sse"))
    seen: list[str] = []

    async def consume() -> None:
        async for event in provider.stream([Message("user", "hi")]):
            seen.append(event.text)

    with pytest.raises(LLMOverloadedError) as caught:
        await consume()
    assert seen == ["Let me"]
    assert caught.value.retryable
    assert caught.value.details["vendor_error"] == "server_error"


async def test_length_cut_tool_call_is_marked_unusable(
    api: respx.MockRouter, provider: OpenAIProvider
) -> None:
    api.post(URL).mock(return_value=sse_response("openai", "stream_length_truncated.sse"))
    events = await collect(provider, [Message("user", "hi")], tools=TOOLS)
    completion = events[-1].completion
    assert completion is not None
    assert completion.stop_reason == "max_tokens"
    (call,) = completion.tool_calls
    assert call.arguments == {}
    assert call.raw_arguments == '{"sku": "SKU20'


async def test_compatible_server_without_index_via_base_url(api: respx.MockRouter) -> None:
    route = api.post(f"{LOCAL}/chat/completions").mock(
        return_value=sse_response("openai", "stream_ollama_no_index.sse")
    )
    local = OpenAIProvider(api_key="no-key", model="qwen3:8b", base_url=LOCAL, max_retries=0)
    events = await collect(
        local, [Message("user", "stock and sales?")], tools=TOOLS, max_tokens=200
    )
    calls = [e.tool_call for e in events if e.kind == "tool_call"]
    assert [(c.id, c.name, c.arguments) for c in calls if c] == [
        ("call_x8f2k1q9", "inventory_query", {"sku": "SKU2024001"}),
        ("call_m3v7d0p4", "sales_query", {"sku": "SKU2024001", "days": 7}),
    ]
    assert local.name == "openai-compatible"
    body = sent(route)
    assert body["model"] == "qwen3:8b"
    assert body["max_tokens"] == 200


async def test_complete_reads_a_whole_answer(
    api: respx.MockRouter, provider: OpenAIProvider
) -> None:
    api.post(URL).mock(return_value=json_response("openai", "completion_tool_calls.json"))
    completion = await provider.complete([Message("user", "SKU2024001?")], tools=TOOLS)
    assert completion.text == ""
    assert completion.tool_calls == (
        ToolCall("call_Rt5nW9kQ2mX7vL3pJ8sD1bF6", "inventory_query", {"sku": "SKU2024001"}),
    )
    assert completion.stop_reason == "tool_use"


def test_history_renders_to_chat_completions_rules() -> None:
    history = [
        Message("user", "stock?"),
        Message(
            "assistant",
            "",
            tool_calls=(
                ToolCall("call_1", "inventory_query", {"sku": "SKU2024001"}),
                ToolCall("call_2", "inventory_query", {}, raw_arguments='{"sku": "SK'),
            ),
        ),
        Message("tool", '{"available": 156}', tool_call_id="call_1"),
        Message("tool", "arguments were not JSON", tool_call_id="call_2", is_error=True),
        Message("assistant", "156 available."),
    ]
    wire = render_messages(history, "sys")
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assistant = wire[2]
    assert assistant["content"] is None  # null, not "", on a tool-only turn
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [
        {"sku": "SKU2024001"},
        {},
    ]
    assert wire[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"available": 156}'}
    assert wire[4]["content"] == "Error: arguments were not JSON"


@pytest.mark.parametrize(
    ("status", "error", "exc", "retryable"),
    [
        (
            401,
            {
                "message": "Incorrect API key provided: sk-test.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            },
            LLMAuthError,
            False,
        ),
        (
            400,
            {
                "message": "Invalid 'messages[2]': tool must follow tool_calls.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": None,
            },
            LLMRequestError,
            False,
        ),
        (
            429,
            {
                "message": "Rate limit reached for gpt-5.4-mini.",
                "type": "requests",
                "code": "rate_limit_exceeded",
            },
            LLMRateLimitError,
            True,
        ),
        (
            500,
            {
                "message": "The server had an error while processing your request.",
                "type": "server_error",
                "code": None,
            },
            LLMOverloadedError,
            True,
        ),
    ],
)
async def test_http_errors_map_to_the_taxonomy(
    api: respx.MockRouter,
    provider: OpenAIProvider,
    status: int,
    error: dict[str, Any],
    exc: type[Exception],
    retryable: bool,
) -> None:
    api.post(URL).mock(return_value=httpx.Response(status, json={"error": error}))
    with pytest.raises(exc) as caught:
        await collect(provider, [Message("user", "hi")])
    assert caught.value.retryable is retryable
    assert "sk-test" not in str(caught.value)
    if exc is LLMAuthError:
        assert "API key was refused" in str(caught.value)
    else:
        assert error["message"] in str(caught.value)
