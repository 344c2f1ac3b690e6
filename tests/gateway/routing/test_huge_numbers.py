"""A number too large to be finite never reaches a tool call, an answer or a 500.

Python reads a run of 309 digits or more as an infinite float, and a length of time
converted to smaller units can overflow as well. Offline, such a run in a request
("1" written 400 times, then "days") had filled a number parameter with ``inf``: the
dry run's answer could not be encoded (500), and an integer parameter raised
OverflowError while rounding (500). A model's arguments can say ``1e999`` as well.
Such a value is no argument: the extractor leaves it out, and the router refuses any
argument JSON cannot carry (``invalid_arguments``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
import pytest
import respx

from gateway.app import create_app
from gateway.routing.extract import ArgumentExtractor
from reach_common.embeddings import Embedder
from tests.conftest import Backends, app_client, reset_state
from tests.fixtures.llm import HTTPCore2Mocker  # noqa: F401 - registers respx's httpcore2 mocker
from tests.gateway.conftest import ADMIN
from tests.gateway.routing.conftest import dry_run, manifest
from tests.gateway.routing.test_run import settings_for

DIGITS = "1" * 400  # float(DIGITS) is inf
CATALOGUE = [
    manifest(
        "log_workout",
        "POST",
        "Log a workout: how far it went, for how many minutes, over how many days.",
        {
            "distance": {"type": "number", "description": "Distance covered."},
            "duration_minutes": {"type": "integer", "description": "Length in minutes."},
            "days": {"type": "number", "description": "Window in days."},
        },
        required=[],
    )
]
SCHEMA: dict[str, Any] = CATALOGUE[0]["input_schema"]
extractor = ArgumentExtractor()


@pytest.mark.parametrize(
    "query",
    [
        f"log a workout of {DIGITS}",
        f"log a workout over the last {DIGITS} days",
        f"log a workout that took {DIGITS} hours",
        f"log a workout of {DIGITS} minutes",
        f"记录一次锻炼，{DIGITS}天",
        f"记录一次锻炼，{DIGITS}小时",
        f"log a workout of {DIGITS}万",
        f"log a workout of {DIGITS}k",
        "log a workout over the last 1" + "0" * 307 + " weeks",  # finite, but not in minutes
    ],
)
def test_a_run_of_digits_too_long_to_be_finite_fills_no_number(query: str) -> None:
    result = extractor.extract(query, SCHEMA)
    for value in result.arguments.values():
        assert not isinstance(value, float) or math.isfinite(value), result.arguments
    json.dumps(result.arguments, allow_nan=False)


def test_an_ordinary_number_still_fills_its_parameter() -> None:
    result = extractor.extract("log a workout of 5.5 km that took 40 minutes", SCHEMA)
    assert result.arguments["distance"] == 5.5
    assert result.arguments["duration_minutes"] == 40


async def test_run_answers_a_request_of_huge_numbers_without_a_500(
    gateway: httpx.AsyncClient,
) -> None:
    for query in (f"log a workout of {DIGITS}", f"log a workout of {DIGITS} minutes"):
        response = await dry_run(gateway, query, "huge_numbers")
        assert response.status_code < 500, response.text
        body = response.json()
        assert body["tool_id"] == "log_workout", body
        assert all(not isinstance(v, float) for v in body.get("arguments", {}).values())


async def test_a_models_infinite_argument_is_refused_as_invalid(
    backends: Backends, shop_url: str, embedder: Embedder
) -> None:
    """Anthropic answers ``"distance": 1e999`` twice: the router sends the refusal back once
    (a request the SDK could not encode with the value in it), then answers 422
    ``invalid_arguments``. JSON Schema alone accepts it as a number, and the tool has no
    required parameter, so the call's arguments are not simply dropped either."""
    reset_state(backends)
    settings = settings_for(
        backends, shop_url, llm_provider="anthropic", anthropic_api_key="sk-ant-test"
    )
    settings.tool_auto_discovery = False
    raw = json.dumps(
        {
            "id": "msg_01HugeNumberQ8sVv2LmA9xJ3",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-5-5",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_01HugeNumberVbT7yR3mC5dX",
                    "name": "log_workout",
                    "input": {"distance": "HUGE"},
                }
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 412, "output_tokens": 41},
        }
    ).replace('"HUGE"', "1e999")
    reply = httpx.Response(200, content=raw, headers={"content-type": "application/json"})
    with respx.mock(using="httpcore2") as mock:
        model = mock.post("https://api.anthropic.com/v1/messages").mock(side_effect=[reply, reply])
        async with app_client(create_app(settings, embedder=embedder)) as client:
            registered = await client.post("/tools/register", json=CATALOGUE[0], headers=ADMIN)
            assert registered.status_code in (200, 201), registered.text
            response = await dry_run(client, "log a run of 5 km", "huge_numbers")
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["reason"] == "invalid_arguments"
    assert "values JSON can carry" in body["message"]
    assert model.call_count == 2
    retried = json.loads(model.calls[1].request.content)["messages"][-1]
    assert "values JSON can carry" in json.dumps(retried)
