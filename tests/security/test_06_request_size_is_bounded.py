"""Finding 6: a huge request body was read whole, and the 422 that answered a huge
argument echoed it back several times (jsonschema's messages carry the value).

Now a body over ``MAX_BODY_BYTES`` is refused with 413 ``payload_too_large`` before
it is read (declared length) or as soon as it passes the limit (chunked), and an
invalid argument is shown in the 422 only as a short preview, so the answer stays
small whatever the caller sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from tests.conftest import assert_error
from tests.gateway import conftest as gateway_fixtures
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool

# The gateway tests' fixtures: the shared embedder and the in-process app factory.
embedder = gateway_fixtures.embedder
gateway_env = gateway_fixtures.gateway_env
make_gateway = gateway_fixtures.make_gateway

MIB = 1024 * 1024
HUGE = 60 * MIB
CODE_SCHEMA = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^C\\d{4}$", "maxLength": 5}},
    "required": ["code"],
}


def huge_json(field: str, size: int) -> bytes:
    return b'{"' + field.encode() + b'": "' + b"a" * size + b'"}'


async def chunked(size: int, chunk: int = MIB) -> AsyncIterator[bytes]:
    """A body sent without Content-Length, ``chunk`` bytes at a time."""
    yield b'{"arguments": {"code": "'
    for _ in range(size // chunk):
        yield b"a" * chunk
    yield b'"}}'


async def test_a_huge_body_is_refused_with_413(
    make_gateway: GatewayFactory, make_client: Any
) -> None:
    json_type = {"content-type": "application/json"}
    async with make_client(make_gateway()) as client:
        await client.post(
            "/tools/register",
            json=python_tool("sized", "echo", input_schema=CODE_SCHEMA),
            headers=ADMIN,
        )
        register = await client.post(
            "/tools/register",
            content=huge_json("description", HUGE),
            headers={**ADMIN, **json_type},
        )
        invoke = await client.post(
            "/tools/sized/invoke", content=huge_json("arguments", HUGE), headers=json_type
        )
        streamed = await client.post(
            "/tools/sized/invoke", content=chunked(HUGE), headers=json_type
        )
        still_serving = await client.post(
            "/tools/sized/invoke", json={"arguments": {"code": "C1234"}}
        )
    for response in (register, invoke, streamed):
        body = assert_error(response, 413, "payload_too_large")
        assert body["max_bytes"] == 1_048_576
        assert len(response.content) < 1024
    assert "content-length" in {k.lower() for k in invoke.request.headers}
    assert "content-length" not in {k.lower() for k in streamed.request.headers}
    assert still_serving.status_code == 200, still_serving.text


async def test_a_large_invalid_argument_gets_a_small_422(
    make_gateway: GatewayFactory, make_client: Any
) -> None:
    big = "x" * (2 * MIB)
    near_cap = "y" * 60_000  # under MAX_ARGUMENT_CHARS: validated, shown only as a preview
    async with make_client(make_gateway(max_body_bytes=8 * MIB)) as client:
        await client.post(
            "/tools/register",
            json=python_tool("sized", "echo", input_schema=CODE_SCHEMA),
            headers=ADMIN,
        )
        over_cap = await client.post("/tools/sized/invoke", json={"arguments": {"code": big}})
        invalid = await client.post(
            "/tools/sized/invoke", json={"arguments": {"code": near_cap, "more": [near_cap] * 5}}
        )
    body = assert_error(over_cap, 422, "invalid_arguments")
    assert body["error"]["errors"][0]["field"] == "code"
    body = assert_error(invalid, 422, "invalid_arguments")
    problems = body["error"]["errors"]
    assert problems[0]["field"] == "code"
    assert all(len(p["problem"]) < 400 for p in problems)
    assert "y" * 100 not in json.dumps(body["error"])
    # The whole answer stays small: the envelope shows no argument whole either.
    assert len(over_cap.content) < 4096
    assert len(invalid.content) < 4096
