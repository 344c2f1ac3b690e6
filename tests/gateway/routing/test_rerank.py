"""The LLM re-rank, with the real anthropic and openai SDKs against recorded payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import respx
from jsonschema import Draft202012Validator

from gateway.routing.rerank import rerank, vendor_names
from reach_common.llm.anthropic import AnthropicProvider
from reach_common.llm.openai import OpenAIProvider
from tests.fixtures.llm import HTTPCore2Mocker  # noqa: F401 - registers respx's httpcore2 mocker

PAYLOADS = Path(__file__).parent / "payloads"
SALES = {
    "tool_id": "sales_query",
    "description": "Recent sales of one SKU.",
    "input_schema": {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "pattern": "^SKU\\d{7}$"},
            "days": {"type": "integer", "minimum": 1},
        },
        "required": ["sku"],
    },
}
INVENTORY = {**SALES, "tool_id": "inventory_query", "description": "Stock of one SKU."}
FACTORIAL = {
    "tool_id": "math.factorial",
    "description": "Calculate the factorial of a given number.",
    "input_schema": {
        "type": "object",
        "properties": {"number": {"type": "integer"}},
        "required": ["number"],
    },
}


def payload(name: str) -> httpx.Response:
    return httpx.Response(200, json=json.loads((PAYLOADS / name).read_text()))


def validator_for(*manifests: dict[str, Any]):  # type: ignore[no-untyped-def]
    validators = {m["tool_id"]: Draft202012Validator(m["input_schema"]) for m in manifests}

    def validate(tool_id: str, arguments: dict[str, Any]) -> str | None:
        errors = list(validators[tool_id].iter_errors(arguments))
        return "; ".join(e.message for e in errors) or None

    return validate


def anthropic_provider() -> AnthropicProvider:
    return AnthropicProvider(api_key="sk-ant-test", model="claude-sonnet-5-5", max_retries=0)


def openai_provider() -> OpenAIProvider:
    return OpenAIProvider(api_key="sk-test", model="gpt-5.4-mini", max_retries=0)


async def test_anthropic_retries_once_after_a_validation_error() -> None:
    with respx.mock(using="httpcore2") as mock:
        route = mock.post("https://api.anthropic.com/v1/messages").mock(
            side_effect=[
                payload("anthropic_route_invalid.json"),
                payload("anthropic_route_fixed.json"),
            ]
        )
        result = await rerank(
            anthropic_provider(),
            "那这个 SKU 最近卖得怎么样",
            [INVENTORY, SALES],
            validate=validator_for(INVENTORY, SALES),
        )
    assert (result.tool_id, result.arguments) == ("sales_query", {"sku": "SKU2024001", "days": 30})
    assert result.attempts == 2
    assert result.validation_error is None
    first = json.loads(route.calls[0].request.content)
    second = json.loads(route.calls[1].request.content)
    assert {t["name"] for t in first["tools"]} == {"inventory_query", "sales_query"}
    assert first["system"].startswith("You route")
    tool_result = second["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result"
    assert tool_result["tool_use_id"] == "toolu_01Hn4Wq8eZk2VbT7yR3mC5dX"
    assert tool_result["is_error"] is True
    assert "does not match" in json.dumps(tool_result["content"])


async def test_anthropic_none_fits() -> None:
    with respx.mock(using="httpcore2") as mock:
        mock.post("https://api.anthropic.com/v1/messages").mock(
            return_value=payload("anthropic_route_none.json")
        )
        result = await rerank(
            anthropic_provider(), "book a flight", [INVENTORY], validate=validator_for(INVENTORY)
        )
    assert result.tool_id is None
    assert "NONE" in result.reason


async def test_openai_maps_dotted_ids_and_retries_once() -> None:
    with respx.mock(using="httpcore2") as mock:
        route = mock.post("https://api.openai.com/v1/chat/completions").mock(
            side_effect=[payload("openai_route_invalid.json"), payload("openai_route_fixed.json")]
        )
        result = await rerank(
            openai_provider(),
            "Calculate the factorial of 5",
            [FACTORIAL],
            validate=validator_for(FACTORIAL),
        )
    assert (result.tool_id, result.arguments, result.attempts) == (
        "math.factorial",
        {"number": 5},
        2,
    )
    first = json.loads(route.calls[0].request.content)
    assert first["tools"][0]["function"]["name"] == "math_factorial"
    second = json.loads(route.calls[1].request.content)
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_Bq2Wn7Xk9Lp3Vd6Rt1Ms8Fh4"
    assert "is not of type 'integer'" in tool_message["content"]


async def test_openai_two_invalid_answers_end_in_a_validation_error() -> None:
    with respx.mock(using="httpcore2") as mock:
        mock.post("https://api.openai.com/v1/chat/completions").mock(
            side_effect=[payload("openai_route_invalid.json"), payload("openai_route_invalid.json")]
        )
        result = await rerank(
            openai_provider(), "factorial of five", [FACTORIAL], validate=validator_for(FACTORIAL)
        )
    assert result.tool_id == "math.factorial"
    assert result.attempts == 2
    assert result.validation_error is not None
    assert "integer" in result.validation_error


async def test_openai_none_fits() -> None:
    with respx.mock(using="httpcore2") as mock:
        mock.post("https://api.openai.com/v1/chat/completions").mock(
            return_value=payload("openai_route_none.json")
        )
        result = await rerank(
            openai_provider(),
            "convert 5 USD to EUR",
            [FACTORIAL],
            validate=validator_for(FACTORIAL),
        )
    assert result.tool_id is None
    assert "currencies" in result.reason


def test_vendor_names_are_safe_and_unique() -> None:
    names = vendor_names(["math.factorial", "math_factorial", "a b/c"])
    assert names == {
        "math.factorial": "math_factorial",
        "math_factorial": "math_factorial_2",
        "a b/c": "a_b_c",
    }
