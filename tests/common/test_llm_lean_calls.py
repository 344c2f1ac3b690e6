"""The providers' lean path through the SDKs: the same requests as the SDKs' own
methods would send, chunks read as JSON objects, and the call span the Anthropic SDK
recorded now recorded by the provider, with the same attributes."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
import respx
from openai._utils import async_maybe_transform
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from reach_common.llm import spans
from reach_common.llm.anthropic import AnthropicProvider
from reach_common.llm.errors import LLMRequestError, LLMResponseError
from reach_common.llm.openai import OpenAIProvider
from reach_common.llm.types import Message, ToolCall, ToolSpec
from tests.fixtures.llm import json_response, sse_response

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
OPENAI_URL = "https://api.openai.com/v1/chat/completions"
TOOLS = [
    ToolSpec(
        "inventory_query",
        "Stock of one SKU.",
        {"type": "object", "properties": {"sku": {"type": "string", "pattern": "^SKU\\d{7}$"}}},
    )
]
CALL = ToolCall("call_1", "inventory_query", {"sku": "SKU2024001"})
HISTORY = [
    Message("user", "How is SKU2024001 doing?"),
    Message("assistant", "Checking.", tool_calls=(CALL,)),
    Message("tool", '{"available": 156}', tool_call_id="call_1"),
    Message("assistant", "156 left."),
    Message("user", "And SKU2024002? 库存"),
    Message("assistant", "", tool_calls=(ToolCall("call_2", "inventory_query", {"sku": "X"}),)),
    Message("tool", "no such SKU", tool_call_id="call_2", is_error=True),
]


@pytest.fixture
def exporter(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """The providers' call spans, recorded here."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    monkeypatch.setattr(spans, "_tracer", provider.get_tracer("test"))
    return memory


def sdk_tracer() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def body(route: respx.Route, n: int) -> dict[str, Any]:
    return json.loads(route.calls[n].request.content)


async def test_the_openai_sdk_conversion_would_leave_our_request_unchanged() -> None:
    """``chat.completions.create`` walks the body against the SDK's request types; the
    provider skips that walk because it changes nothing in what we send."""
    for base_url in (None, "http://127.0.0.1:11434/v1"):
        provider = OpenAIProvider(api_key="sk-test", model="gpt-5.4-mini", base_url=base_url)
        params = provider._params(HISTORY, "Be brief.", TOOLS, 300, 0.2)
        params |= {"stream": True, "stream_options": {"include_usage": True}}
        converted = await async_maybe_transform(params, CompletionCreateParamsStreaming)
        assert converted == params


async def test_openai_sends_what_create_would_send(api: respx.MockRouter) -> None:
    route = api.post(OPENAI_URL).mock(
        side_effect=lambda _: sse_response("openai", "stream_tool_calls.sse")
    )
    provider = OpenAIProvider(api_key="sk-test", model="gpt-5.4-mini", max_retries=0)
    events = [e async for e in provider.stream(HISTORY, system="Be brief.", tools=TOOLS)]
    assert events[-1].completion is not None
    assert events[-1].completion.tool_calls[0].arguments == {"sku": "SKU2024001"}
    params = provider._params(HISTORY, "Be brief.", TOOLS, 1024, None)
    client = openai.AsyncOpenAI(api_key="sk-test", max_retries=0)
    stream = await client.chat.completions.create(
        **params, stream=True, stream_options={"include_usage": True}
    )
    async with stream:
        async for _ in stream:
            pass
    assert body(route, 0) == body(route, 1)
    ours, theirs = route.calls[0].request.headers, route.calls[1].request.headers
    assert ours["authorization"] == theirs["authorization"] == "Bearer sk-test"
    assert ours["content-type"] == theirs["content-type"]


async def test_anthropic_sends_what_create_would_send(api: respx.MockRouter) -> None:
    route = api.post(ANTHROPIC_URL).mock(
        side_effect=lambda _: sse_response("anthropic", "stream_tool_use.sse")
    )
    provider = AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)
    events = [e async for e in provider.stream(HISTORY, system="Be brief.", tools=TOOLS)]
    assert [e.kind for e in events] == ["delta", "delta", "delta", "tool_call", "done"]
    params = provider._params(HISTORY, "Be brief.", TOOLS, 1024, None)
    client = anthropic.AsyncAnthropic(api_key="sk-ant-test", max_retries=0, open_telemetry=False)
    stream = await client.messages.create(**params, stream=True)
    async with stream:
        async for _ in stream:
            pass
    assert body(route, 0) == body(route, 1)
    ours, theirs = route.calls[0].request.headers, route.calls[1].request.headers
    for header in ("authorization", "anthropic-version", "content-type"):
        assert ours[header] == theirs[header]


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    attributes = dict(span.attributes or {})
    assert attributes.pop("gen_ai.response.time_to_first_chunk", 0.0) >= 0  # a duration
    return attributes


async def test_the_anthropic_call_span_has_what_the_sdk_span_had(
    api: respx.MockRouter, exporter: InMemorySpanExporter
) -> None:
    route = api.post(ANTHROPIC_URL).mock(
        side_effect=lambda _: sse_response("anthropic", "stream_tool_use.sse")
    )
    provider = AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)
    _ = [e async for e in provider.stream(HISTORY, tools=TOOLS)]
    (ours,) = exporter.get_finished_spans()
    tracer_provider, sdk_spans = sdk_tracer()
    client = anthropic.AsyncAnthropic(
        api_key="sk-ant-test", max_retries=0, open_telemetry={"tracer_provider": tracer_provider}
    )
    stream = await client.messages.create(
        **provider._params(HISTORY, None, TOOLS, 1024, None), stream=True
    )
    async with stream:
        async for _ in stream:
            pass
    (theirs,) = sdk_spans.get_finished_spans()
    assert ours.name == theirs.name == "anthropic.messages.create"
    assert ours.kind == theirs.kind
    assert ours.status.status_code == theirs.status.status_code
    assert "gen_ai.response.time_to_first_chunk" in (ours.attributes or {})
    assert _attributes(ours) == _attributes(theirs)
    # The call's trace context goes out with its request, as the SDK's did.
    traceparent = route.calls[0].request.headers["traceparent"]
    assert traceparent.split("-")[2] == format(ours.context.span_id, "016x")


async def test_a_refused_anthropic_call_has_the_sdk_error_attributes(
    api: respx.MockRouter, exporter: InMemorySpanExporter
) -> None:
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    api.post(ANTHROPIC_URL).mock(return_value=httpx.Response(400, json=error))
    provider = AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)
    with pytest.raises(LLMRequestError):
        _ = [e async for e in provider.stream(HISTORY, tools=TOOLS)]
    with pytest.raises(LLMRequestError):
        await provider.complete(HISTORY, tools=TOOLS)
    streamed, whole = exporter.get_finished_spans()
    for span in (streamed, whole):
        assert not span.status.is_ok
        assert (span.attributes or {})["error.type"] == "invalid_request_error"
        assert (span.attributes or {})["http.response.status_code"] == 400
    assert (whole.attributes or {})["gen_ai.request.stream"] is False


async def test_a_whole_anthropic_answer_has_its_span(
    api: respx.MockRouter, exporter: InMemorySpanExporter
) -> None:
    api.post(ANTHROPIC_URL).mock(return_value=json_response("anthropic", "message_final.json"))
    provider = AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)
    completion = await provider.complete([Message("user", "hi")])
    (span,) = exporter.get_finished_spans()
    attributes = span.attributes or {}
    assert attributes["gen_ai.usage.output_tokens"] == completion.usage.output_tokens
    assert attributes["anthropic.message.stop_reason"] == completion.stop_reason
    assert attributes["gen_ai.response.id"]


def _sse(*events: dict[str, Any]) -> httpx.Response:
    text = "".join(f"event: {e.get('type')}\ndata: {json.dumps(e)}\n\n" for e in events)
    return httpx.Response(200, content=text.encode(), headers={"content-type": "text/event-stream"})


async def test_an_unreadable_anthropic_event_is_a_bad_response(api: respx.MockRouter) -> None:
    api.post(ANTHROPIC_URL).mock(
        return_value=_sse({"type": "message_start", "message": {}}, {"type": "content_block_start"})
    )
    provider = AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)
    with pytest.raises(LLMResponseError):
        _ = [e async for e in provider.stream([Message("user", "hi")])]


async def test_an_unreadable_openai_chunk_is_a_bad_response(api: respx.MockRouter) -> None:
    text = 'data: {"choices": [{"delta": {"tool_calls": ["x"]}}]}\n\ndata: [DONE]\n\n'
    api.post(OPENAI_URL).mock(
        return_value=httpx.Response(
            200, content=text.encode(), headers={"content-type": "text/event-stream"}
        )
    )
    provider = OpenAIProvider(api_key="sk-test", model="gpt-5.4-mini", max_retries=0)
    with pytest.raises(LLMResponseError):
        _ = [e async for e in provider.stream([Message("user", "hi")])]


async def test_a_stream_left_early_ends_its_span_without_an_error(
    api: respx.MockRouter, exporter: InMemorySpanExporter
) -> None:
    api.post(ANTHROPIC_URL).mock(return_value=sse_response("anthropic", "stream_tool_use.sse"))
    provider = AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)
    stream = provider.stream([Message("user", "hi")], tools=TOOLS)
    first = await anext(stream)
    assert first.kind == "delta"
    await stream.aclose()  # type: ignore[attr-defined]
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.UNSET
    assert "error.type" not in (span.attributes or {})
