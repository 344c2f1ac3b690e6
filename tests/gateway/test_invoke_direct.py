"""``POST /tools/{id}/invoke`` answered by ``gateway.api.invoke_direct`` is answered as the
FastAPI route answers it; whatever that layer is unsure of reaches the route unchanged."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.api import invoke_direct
from reach_common.errors import ReachError
from tests.conftest import app_client, assert_error
from tests.gateway.conftest import GatewayFactory, python_tool

ADD = python_tool(
    "adder",
    "add",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
ECHO = python_tool("echo_tool", "echo", input_schema={"type": "object"})
VOLATILE = ("latency_ms", "trace_id", "task_id", "status_url")


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """One entry per invoke request: True when the direct layer answered it."""
    seen: list[bool] = []
    parse = invoke_direct._parse

    def spy(headers: Any, body: bytes) -> Any:
        call = parse(headers, body)
        seen.append(call is not None)
        return call

    monkeypatch.setattr(invoke_direct, "_parse", spy)
    return seen


def _stable(response: httpx.Response) -> tuple[int, Any]:
    body = response.json()

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        return value

    return response.status_code, strip(body)


CALLS = [
    ("adder", {"arguments": {"a": 2, "b": 3}}, {}),  # 200
    ("adder", {"arguments": {"a": "two", "b": 3}}, {}),  # 422 invalid_arguments
    ("adder", {"arguments": {"a": 2, "b": 3, "a2": float("nan")}}, {}),  # json: NaN → 422
    ("missing_tool", {"arguments": {}}, {}),  # 404
    ("echo_tool", {}, {}),  # arguments default to {}
    ("echo_tool", {"arguments": {"x": [1, {"y": "z"}]}, "mode": "sync"}, {}),
    ("echo_tool", {"arguments": {"x": 1}, "mode": "async"}, {}),  # 202, a task
    ("echo_tool", {"arguments": {"x": 1}, "user_context": {"user_id": "u7"}}, {}),
    ("echo_tool", {"arguments": {"x": 1}}, {"idempotency-key": "k" * 255}),
    ("echo_tool", {"arguments": {"x": 1}}, {"content-type": "application/json; charset=utf-8"}),
]


@pytest.mark.parametrize(("tool_id", "body", "headers"), CALLS)
async def test_a_plain_call_is_answered_directly_as_the_route_answers_it(
    make_gateway: GatewayFactory,
    taken: list[bool],
    tool_id: str,
    body: dict[str, Any],
    headers: dict[str, str],
) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        for manifest in (ADD, ECHO):
            await app.state.runtime.registry_service.register(manifest)
        url = f"/tools/{tool_id}/invoke"
        sent = {"content-type": "application/json", **headers}
        direct = await client.post(url, content=json.dumps(body), headers=sent)
        # An unknown field is ignored by the route's model, and sends the call there.
        unknown = json.dumps({**body, "unknown": 1})
        routed = await client.post(url, content=unknown, headers=sent)
    assert taken == [True, False]
    assert _stable(direct) == _stable(routed)
    assert direct.headers["content-type"] == routed.headers["content-type"]
    assert direct.headers["x-trace-id"]
    assert routed.headers["x-trace-id"]
    assert direct.status_code in (200, 202, 404, 422)


UNSURE = [
    ("adder", b"not json", {"content-type": "application/json"}),  # 400 malformed_json
    ("adder", b"", {"content-type": "application/json"}),
    ("adder", b"[1, 2]", {"content-type": "application/json"}),
    ("adder", b'{"arguments": [1, 2]}', {"content-type": "application/json"}),
    ("adder", b'{"arguments": {}, "mode": "later"}', {"content-type": "application/json"}),
    ("adder", b'{"arguments": {}, "mode": ["sync"]}', {"content-type": "application/json"}),
    ("adder", b'{"arguments": {}, "approval_id": 7}', {"content-type": "application/json"}),
    ("adder", b'{"approval_id": "' + b"a" * 65 + b'"}', {"content-type": "application/json"}),
    ("adder", b'{"callback_url": "' + b"u" * 2001 + b'"}', {"content-type": "application/json"}),
    ("adder", b'{"user_context": {"roles": "x"}}', {"content-type": "application/json"}),
    ("adder", b'{"arguments": {"a": 1, "b": 2}}', {"content-type": "text/plain"}),
    ("adder", b"[" * 100_000, {"content-type": "application/json"}),  # 400 http_error
    (
        "adder",
        b'{"arguments": {}}',
        {"content-type": "application/json", "idempotency-key": "k" * 256},
    ),
    ("a" * 201, b'{"arguments": {}}', {"content-type": "application/json"}),
]


@pytest.mark.parametrize(("tool_id", "raw", "headers"), UNSURE)
async def test_what_the_direct_layer_is_unsure_of_gets_the_routes_answer(
    make_gateway: GatewayFactory,
    taken: list[bool],
    tool_id: str,
    raw: bytes,
    headers: dict[str, str],
) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(ADD)
        response = await client.post(f"/tools/{tool_id}/invoke", content=raw, headers=headers)
    assert taken in ([], [False])  # a tool id over 200 characters is not even parsed
    expected = {b"not json": (400, "malformed_json"), b"[" * 100_000: (400, "http_error")}
    assert_error(response, *expected.get(raw, (422, "invalid_request")))


async def test_other_routes_under_tools_are_not_taken(
    make_gateway: GatewayFactory, taken: list[bool]
) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(ADD)
        wrong_method = await client.get("/tools/adder/invoke")
        nested = await client.post("/tools/a/b/invoke", json={"arguments": {}})
        listed = await client.get("/tools/adder")
    assert taken == []
    assert wrong_method.status_code == 405
    assert nested.status_code == 404
    assert listed.status_code == 200


async def test_a_direct_call_is_metered_under_its_route_template(
    make_gateway: GatewayFactory, taken: list[bool]
) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(ADD)
        for _ in range(3):
            ok = await client.post("/tools/adder/invoke", json={"arguments": {"a": 1, "b": 2}})
            assert ok.status_code == 200, ok.text
        scrape = (await client.get("/metrics")).text
    assert taken == [True] * 3
    counts = {
        (sample.labels["route"], sample.labels["status"]): sample.value
        for family in text_string_to_metric_families(scrape)
        for sample in family.samples
        if sample.name == "reach_http_requests_total"
    }
    assert counts.get(("/tools/{tool_id}/invoke", "200")) == 3, counts


async def test_an_error_raised_by_the_call_is_answered_as_the_route_answers_it(
    make_gateway: GatewayFactory, taken: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_gateway()
    async with app_client(app) as client:

        async def refuse(*args: Any, **kwargs: Any) -> Any:
            raise ReachError("The queue is down.", reason="queue_unavailable", status_code=503)

        monkeypatch.setattr(app.state.runtime.invoke, "invoke", refuse)
        direct = await client.post("/tools/adder/invoke", json={"arguments": {}})
        routed = await client.post("/tools/adder/invoke", json={"arguments": {}, "x": 1})
    assert taken == [True, False]
    assert _stable(direct) == _stable(routed)
    assert_error(direct, 503, "queue_unavailable")
