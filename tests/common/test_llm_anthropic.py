"""The Anthropic provider: the real SDK against recorded Messages API payloads (respx)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from reach_common.llm.anthropic import AnthropicProvider, render_messages
from reach_common.llm.errors import (
    LLMAuthError,
    LLMConnectionError,
    LLMOverloadedError,
    LLMRateLimitError,
    LLMRequestError,
)
from reach_common.llm.types import Message, StreamEvent, ToolCall, ToolSpec
from tests.fixtures.llm import json_response, sse_response

URL = "https://api.anthropic.com/v1/messages"
TOOLS = [
    ToolSpec(
        "inventory_query",
        "Stock of one SKU.",
        {"type": "object", "properties": {"sku": {"type": "string"}}},
    ),
    ToolSpec(
        "sales_query",
        "Sales of one SKU.",
        {"type": "object", "properties": {"sku": {"type": "string"}}},
    ),
]


@pytest.fixture
def provider() -> AnthropicProvider:
    return AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)


async def collect(
    provider: AnthropicProvider, messages: list[Message], **kw: Any
) -> list[StreamEvent]:
    return [event async for event in provider.stream(messages, **kw)]


def sent(route: respx.Route, n: int = -1) -> dict[str, Any]:
    request = route.calls[n].request
    assert request.headers["authorization"] == "Bearer sk-ant-test"  # how SDK 2.x sends the key
    return json.loads(request.content)


async def test_stream_accumulates_tool_use_deltas(
    api: respx.MockRouter, provider: AnthropicProvider
) -> None:
    route = api.post(URL).mock(return_value=sse_response("anthropic", "stream_tool_use.sse"))
    events = await collect(
        provider, [Message("user", "SKU2024001?")], system="Be brief.", tools=TOOLS
    )
    kinds = [e.kind for e in events]
    assert kinds == ["delta", "delta", "delta", "tool_call", "done"]
    assert (
        "".join(e.text for e in events if e.kind == "delta")
        == "I'll check the current stock for SKU2024001."
    )
    call = events[3].tool_call
    assert call == ToolCall(
        "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "inventory_query", {"sku": "SKU2024001"}
    )
    completion = events[-1].completion
    assert completion is not None
    assert completion.stop_reason == "tool_use"
    assert completion.tool_calls == (call,)
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (684, 71)
    body = sent(route)
    assert body["system"] == "Be brief."  # top level, never a message
    assert all(m["role"] != "system" for m in body["messages"])
    assert body["stream"] is True
    assert body["model"] == "claude-sonnet-5-5"
    assert body["tools"][0] == {
        "name": "inventory_query",
        "description": "Stock of one SKU.",
        "input_schema": TOOLS[0].input_schema,
    }


async def test_stream_parallel_tool_use(api: respx.MockRouter, provider: AnthropicProvider) -> None:
    api.post(URL).mock(return_value=sse_response("anthropic", "stream_parallel_tool_use.sse"))
    events = await collect(provider, [Message("user", "stock and sales?")], tools=TOOLS)
    calls = [e.tool_call for e in events if e.kind == "tool_call"]
    assert [(c.name, c.arguments) for c in calls if c] == [
        ("inventory_query", {"sku": "SKU2024001"}),
        ("sales_query", {"sku": "SKU2024001", "days": 30}),
    ]


async def test_error_event_mid_stream_raises_a_retryable_error(
    api: respx.MockRouter, provider: AnthropicProvider
) -> None:
    api.post(URL).mock(return_value=sse_response("anthropic", "stream_overloaded_midstream.sse"))
    seen: list[StreamEvent] = []

    async def consume() -> None:
        async for event in provider.stream([Message("user", "hi")]):
            seen.append(event)

    with pytest.raises(LLMOverloadedError) as caught:
        await consume()
    assert [e.text for e in seen] == ["I'll check the"]  # what came before the error
    assert caught.value.retryable
    assert caught.value.reason == "llm_overloaded"
    assert caught.value.details["vendor_error"] == "overloaded_error"
    assert "Overloaded" in caught.value.message


async def test_tool_use_cut_off_by_max_tokens_is_marked_unusable(
    api: respx.MockRouter, provider: AnthropicProvider
) -> None:
    api.post(URL).mock(return_value=sse_response("anthropic", "stream_max_tokens_tool_use.sse"))
    events = await collect(provider, [Message("user", "hi")], tools=TOOLS)
    completion = events[-1].completion
    assert completion is not None
    assert completion.stop_reason == "max_tokens"
    (call,) = completion.tool_calls
    assert call.arguments == {}
    assert call.raw_arguments == '{"sku": "SKU20'


async def test_complete_reads_a_whole_message(
    api: respx.MockRouter, provider: AnthropicProvider
) -> None:
    route = api.post(URL).mock(return_value=json_response("anthropic", "message_tool_use.json"))
    completion = await provider.complete(
        [Message("user", "SKU2024001?")], tools=TOOLS, max_tokens=300
    )
    assert completion.text == "I'll check the current stock for SKU2024001."
    assert completion.tool_calls[0].arguments == {"sku": "SKU2024001"}
    assert completion.stop_reason == "tool_use"
    body = sent(route)
    assert body["max_tokens"] == 300
    assert "stream" not in body


def test_history_renders_to_the_messages_api_rules() -> None:
    history = [
        Message("user", "stock and sales of SKU2024001?"),
        Message(
            "assistant",
            "",
            tool_calls=(
                ToolCall("toolu_1", "inventory_query", {"sku": "SKU2024001"}),
                ToolCall("functions.sales:0", "sales_query", {"sku": "SKU2024001"}),
            ),
        ),
        Message("tool", '{"available": 156}', tool_call_id="toolu_1"),
        Message("tool", "rate limited", tool_call_id="functions.sales:0", is_error=True),
        Message("user", "and now?"),
        Message("tool", "orphan", tool_call_id="toolu_gone"),
    ]
    turns = render_messages(history)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assistant = turns[1]["content"]
    assert [b["type"] for b in assistant] == ["tool_use", "tool_use"]  # no empty text block
    safe_id = assistant[1]["id"]
    assert safe_id.startswith("functions_sales_0_")
    assert all(c.isalnum() or c in "_-" for c in safe_id)
    results = turns[2]["content"]
    # Both results in ONE user turn, results first, then the user's text; the orphan is gone.
    assert [b["type"] for b in results] == ["tool_result", "tool_result", "text"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": '{"available": 156}',
        "is_error": False,
    }
    assert results[1]["tool_use_id"] == safe_id
    assert results[1]["is_error"] is True


async def test_no_tools_with_tool_history_declares_them_unusable(
    api: respx.MockRouter, provider: AnthropicProvider
) -> None:
    route = api.post(URL).mock(return_value=sse_response("anthropic", "stream_final.sse"))
    history = [
        Message("user", "SKU2024001?"),
        Message("assistant", "", tool_calls=(ToolCall("toolu_1", "inventory_query", {}),)),
        Message("tool", "{}", tool_call_id="toolu_1"),
    ]
    events = await collect(provider, history)
    assert events[-1].kind == "done"
    body = sent(route)
    assert body["tool_choice"] == {"type": "none"}
    assert [t["name"] for t in body["tools"]] == ["inventory_query"]


async def test_a_history_tool_this_request_does_not_offer_is_declared_unavailable(
    api: respx.MockRouter, provider: AnthropicProvider
) -> None:
    """A turn's shortlist may leave out a tool an earlier turn called: the request still
    declares it (Anthropic refuses undeclared tool blocks), as unavailable, and the
    offered tools stay callable."""
    route = api.post(URL).mock(return_value=sse_response("anthropic", "stream_final.sse"))
    history = [
        Message("user", "SKU2024001?"),
        Message("assistant", "", tool_calls=(ToolCall("toolu_1", "inventory_query", {}),)),
        Message("tool", "{}", tool_call_id="toolu_1"),
        Message("assistant", "120 units."),
        Message("user", "And its sales?"),
    ]
    offered = ToolSpec("sales_query", "Sales of a SKU.", {"type": "object"})
    events = await collect(provider, history, tools=[offered])
    assert events[-1].kind == "done"
    body = sent(route)
    assert "tool_choice" not in body
    assert [(t["name"], t["description"]) for t in body["tools"]] == [
        ("sales_query", "Sales of a SKU."),
        ("inventory_query", "Not available in this request."),
    ]


@pytest.mark.parametrize(
    ("status", "body", "error", "retryable"),
    [
        (
            401,
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid x-api-key"},
            },
            LLMAuthError,
            False,
        ),
        (
            400,
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "messages: roles must alternate",
                },
            },
            LLMRequestError,
            False,
        ),
        (
            429,
            {
                "type": "error",
                "error": {
                    "type": "rate_limit_error",
                    "message": "Number of request tokens has exceeded your per-minute rate limit",
                },
            },
            LLMRateLimitError,
            True,
        ),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            LLMOverloadedError,
            True,
        ),
    ],
)
async def test_http_errors_map_to_the_taxonomy(
    api: respx.MockRouter,
    provider: AnthropicProvider,
    status: int,
    body: dict[str, Any],
    error: type[Exception],
    retryable: bool,
) -> None:
    api.post(URL).mock(return_value=httpx.Response(status, json=body))
    with pytest.raises(error) as caught:
        await provider.complete([Message("user", "hi")])
    assert caught.value.retryable is retryable
    expected = "API key was refused" if error is LLMAuthError else body["error"]["message"]
    assert expected in str(caught.value)
    assert "sk-ant-test" not in str(caught.value)
    with pytest.raises(error):
        await collect(provider, [Message("user", "hi")])


async def test_unreachable_api_is_a_connection_error(
    api: respx.MockRouter, provider: AnthropicProvider
) -> None:
    api.post(URL).mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(LLMConnectionError) as caught:
        await provider.complete([Message("user", "hi")])
    assert caught.value.retryable
    assert caught.value.reason == "llm_unreachable"
