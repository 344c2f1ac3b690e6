"""The agent's model metrics, from a turn run by each vendor's real SDK against recorded
payloads: turns, rounds, one latency observation per streamed model answer, tokens."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript

CALLER = {"user_id": "u1", "roles": ["ops_admin"]}


def series(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_a_model_turn_is_counted(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    async with agent(**llm_settings) as client:
        before = series((await client.get("/metrics")).text)
        turn = await client.post(
            "/chat", json={"message": "How is SKU2024001 doing?", "user_context": CALLER}
        )
        after = series((await client.get("/metrics")).text)
    assert turn.status_code == 200, turn.text
    assert turn.json()["rounds"] == 2

    def moved(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert moved("reach_agent_turns_total", mode=vendor, stop_reason="end_turn") == 1
    assert moved("reach_agent_turn_rounds_count", mode=vendor) == 1
    assert moved("reach_agent_turn_rounds_sum", mode=vendor) == 2
    # Two tool rounds and the answer: three streamed model requests, each timed once.
    assert len(model.requests) == 3
    assert moved("reach_agent_model_request_duration_seconds_count", provider=vendor) == 3
    assert moved("reach_agent_model_tokens_total", provider=vendor, direction="input") > 0
    assert moved("reach_agent_model_tokens_total", provider=vendor, direction="output") > 0
    for (name, labels), _ in after.items():  # nothing identifies the user or the session
        assert not any(key in ("user_id", "session_id", "user") for key, _ in labels), name
