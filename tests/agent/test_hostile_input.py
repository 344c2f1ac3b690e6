"""What a client or a model can send that Postgres cannot store: a JSON error, or the turn
kept with the character replaced, never a 500 after a tool ran."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt as pyjwt
import pytest

from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript, retarget

ADA = {"user_id": "ada", "roles": ["ops_admin"]}
AS_ADA = {"X-User-Id": "ada"}


@pytest.mark.parametrize(
    "body",
    [
        {"message": "stock of SKU2024003\u0000?"},
        {"message": "hello", "message_id": "m\u00001"},
        {"message": "hello", "message_id": "m\n1"},
        {"message": "hello", "user_context": {"user_id": "a\u0000b"}},
        {"message": "hello", "user_context": {"user_id": "ada", "roles": ["ops\u0000"]}},
        {"message": "hello", "user_context": {"user_id": "u" * 201}},
        # The turn's user message was stored, then these failed: a 500 and half a turn.
        {"message": "hello", "user_context": {"user_id": "ada", "roles": ["\ud800"]}},
        {"message": "hello", "user_context": {"user_id": "ada", "team": {"a": "\ud800"}}},
        {"message": "hello", "user_context": {"user_id": "ada", "weight": float("inf")}},
    ],
    ids=[
        "nul-message",
        "nul-id",
        "newline-id",
        "nul-user",
        "nul-role",
        "long-user",
        "surrogate-role",
        "surrogate-extra",
        "infinite-extra",
    ],
)
async def test_unstorable_input_is_refused_before_the_turn(
    agent: AgentClient, gateway: GatewayTap, body: dict[str, Any]
) -> None:
    async with agent() as client:
        # as JSON text (ensure_ascii): "\ud800" and "Infinity" reach the server as sent
        raw = json.dumps({"session_id": "s-bad", "stream": True, **body})
        refused = await client.post(
            "/chat", content=raw, headers={"Content-Type": "application/json"}
        )
        listed = await client.get("/sessions", headers=AS_ADA)
    assert refused.status_code == 422, refused.text
    assert refused.json()["reason"] == "invalid_request"
    assert gateway.to("/run") == []  # nothing ran
    assert listed.json()["sessions"] == []  # nothing was written


@pytest.mark.parametrize("path", ["/sessions?user_id=a%00b", "/sessions/s%00x", "/memories/a%00"])
async def test_a_nul_in_a_path_or_query_is_a_json_error(
    agent: AgentClient, gateway: GatewayTap, path: str
) -> None:
    async with agent() as client:
        response = await client.get(path, headers=AS_ADA)
    assert response.status_code == 400, response.text
    assert response.json()["reason"] == "invalid_request"


async def test_a_nul_a_model_puts_in_a_tool_argument_is_stored_replaced(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    """The call has run when the round is saved: the turn must be kept (the character as
    U+FFFD), not fail with a 500 and leave the session without the call that ran."""
    one_call = {"anthropic": "stream_tool_use.sse", "openai": "stream_tool_calls.sse"}
    model.recordings["nul.sse"] = retarget(
        vendor, one_call[vendor], "inventory_query", {"sku": "SKU2024003\u0000"}
    )
    model.rounds = ("nul.sse",)
    async with agent(**llm_settings) as client:
        response = await client.post(
            "/chat",
            json={"session_id": "s-nulcall", "message": "SKU2024003?", "user_context": ADA},
        )
        detail = (await client.get("/sessions/s-nulcall", headers=AS_ADA)).json()
    assert response.status_code == 200, response.text
    assert len(gateway.to("/tools/inventory_query/invoke")) == 1
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant", "tool", "assistant"]
    (call,) = detail["messages"][1]["tool_calls"]
    assert call["arguments"] == {"sku": "SKU2024003\ufffd"}


async def test_strict_mode_refuses_a_jwt_whose_subject_cannot_be_a_user_id(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    secret = "s" * 40
    claims = {"exp": int(time.time()) + 600, "iss": "reach", "aud": "reach"}
    long_sub = pyjwt.encode({**claims, "sub": "u" * 201}, secret, algorithm="HS256")
    nul_sub = pyjwt.encode({**claims, "sub": "a\u0000b"}, secret, algorithm="HS256")
    async with agent(
        auth_mode="strict", jwt_secret=secret, jwt_issuer="reach", jwt_audience="reach"
    ) as client:
        answers = [
            await client.post(
                "/chat",
                json={"session_id": "s-jwt", "message": "hello"},
                headers={"Authorization": f"Bearer {token}"},
            )
            for token in (long_sub, nul_sub)
        ]
    for answer in answers:
        assert answer.status_code == 401, answer.text
        assert answer.json()["reason"] == "invalid_credential"
