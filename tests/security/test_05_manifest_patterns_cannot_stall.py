"""Finding 5: a manifest's ``pattern`` ran through Python's backtracking ``re`` on the
event loop, so one crafted pattern (``^(a+)+$``) and a 25-character argument froze a
gateway replica.

Now every manifest-supplied regex (``pattern``, ``patternProperties`` keys, and the
router's pattern search) runs on RE2, which matches in linear time. A pattern RE2
cannot compile (backreferences, lookaround) is refused at registration with the JSON
path of the pattern, and an argument string longer than ``MAX_ARGUMENT_CHARS`` is
refused before any regex runs.
"""

from __future__ import annotations

from typing import Any

from tests.conftest import assert_error
from tests.gateway import conftest as gateway_fixtures
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool

# The gateway tests' fixtures: the shared embedder and the in-process app factory.
embedder = gateway_fixtures.embedder
gateway_env = gateway_fixtures.gateway_env
make_gateway = gateway_fixtures.make_gateway


def patterned(tool_id: str, pattern: str) -> dict[str, Any]:
    return python_tool(
        tool_id,
        "echo",
        input_schema={
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": pattern}},
            "required": ["code"],
        },
    )


async def test_a_catastrophic_pattern_answers_promptly(
    make_gateway: GatewayFactory, make_client: Any
) -> None:
    async with make_client(make_gateway()) as client:
        registered = await client.post(
            "/tools/register", json=patterned("evil_pattern", "^(a+)+$"), headers=ADMIN
        )
        attack = await client.post(
            "/tools/evil_pattern/invoke", json={"arguments": {"code": "a" * 40 + "!"}}
        )
        fine = await client.post("/tools/evil_pattern/invoke", json={"arguments": {"code": "aaa"}})
    assert registered.status_code == 201, registered.text
    body = assert_error(attack, 422, "invalid_arguments")
    assert body["error"]["reason"] == "invalid_arguments"
    assert body["error"]["errors"][0]["field"] == "code"
    assert "does not match" in body["error"]["errors"][0]["problem"]
    assert fine.status_code == 200, fine.text
    assert fine.json()["output"] == {"echo": {"code": "aaa"}}


async def test_a_pattern_re2_cannot_run_is_refused_at_registration(
    make_gateway: GatewayFactory, make_client: Any
) -> None:
    async with make_client(make_gateway()) as client:
        backreference = await client.post(
            "/tools/register", json=patterned("backref_tool", "(a)\\1"), headers=ADMIN
        )
        lookahead = await client.post(
            "/tools/register", json=patterned("lookahead_tool", "^(?=a)a+$"), headers=ADMIN
        )
        listed = await client.get("/tools/list")
    body = assert_error(backreference, 422, "invalid_manifest")
    assert "input_schema/properties/code/pattern" in body["message"]
    assert any(p.startswith("input_schema/properties/code/pattern") for p in body["problems"])
    body = assert_error(lookahead, 422, "invalid_manifest")
    assert "input_schema/properties/code/pattern" in body["message"]
    ids = [tool["tool_id"] for tool in listed.json()["tools"]]
    assert "backref_tool" not in ids
    assert "lookahead_tool" not in ids


async def test_an_overlong_argument_is_refused_before_matching_with_a_small_answer(
    make_gateway: GatewayFactory, make_client: Any
) -> None:
    async with make_client(make_gateway()) as client:
        await client.post(
            "/tools/register", json=patterned("capped_tool", "^(a+)+$"), headers=ADMIN
        )
        response = await client.post(
            "/tools/capped_tool/invoke", json={"arguments": {"code": "a" * 100_000}}
        )
    body = assert_error(response, 422, "invalid_arguments")
    assert body["error"]["errors"] == [
        {
            "field": "code",
            "problem": "the value is 100000 characters long; at most 65536 are accepted",
        }
    ]
    assert len(response.content) < 4096
