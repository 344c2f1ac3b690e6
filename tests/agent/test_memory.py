"""Long-term memory: what a user told the agent in one session is there in the next, for
that user only, and a forgotten memory stays forgotten. Offline mode and, for extraction
by the model, recorded payloads of both vendors; the real gateway throughout."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript, system_text

ADA = {"user_id": "ada", "roles": ["ops_admin"]}
BOB = {"user_id": "bob", "roles": ["ops_admin"]}
AS_ADA = {"X-User-Id": "ada"}
AS_BOB = {"X-User-Id": "bob"}
TOLD = "My usual SKU is SKU2024003, how much stock is left?"
ASKED = "how is my usual product selling?"


async def chat(client: httpx.AsyncClient, session: str, message: str, who: dict[str, Any]) -> Any:
    response = await client.post(
        "/chat", json={"session_id": session, "message": message, "user_context": who}
    )
    assert response.status_code == 200, response.text
    return response.json()


async def test_a_usual_sku_told_in_one_session_is_used_in_the_next(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        first = await chat(client, "s-a", TOLD, ADA)
        second = await chat(client, "s-b", ASKED, ADA)
        memories = (await client.get("/memories", headers=AS_ADA)).json()
    (stock,) = first["tool_calls"]
    assert stock["tool_id"] == "inventory_query"
    assert stock["arguments"] == {"sku": "SKU2024003"}
    (sales,) = second["tool_calls"]
    assert sales["tool_id"] == "sales_query"
    assert sales["arguments"]["sku"] == "SKU2024003"
    assert not sales["is_error"]
    assert sales["result"]["sku"] == "SKU2024003"
    # What went to the gateway: the recalled fact, and nothing in the first turn.
    first_run, second_run = gateway.to("/run")
    assert "memories" not in first_run["body"]
    assert "My usual SKU is SKU2024003" in second_run["body"]["memories"]
    texts = {m["text"]: m for m in memories["memories"]}
    assert texts["My usual SKU is SKU2024003"]["kind"] == "preference"
    assert texts["My usual SKU is SKU2024003"]["source_session_id"] == "s-a"
    assert memories["enabled"] is True


async def test_memories_are_per_user_and_a_deleted_one_is_never_recalled(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        await chat(client, "s-ada", TOLD, ADA)
        bobs = await chat(client, "s-bob", ASKED, BOB)
        ada_memories = (await client.get("/memories", headers=AS_ADA)).json()["memories"]
        preference = next(m for m in ada_memories if m["kind"] == "preference")
        # Bob sees none of Ada's memories, by list or by id, and cannot delete them.
        assert (await client.get("/memories", headers=AS_BOB)).json()["memories"] == []
        peek = await client.get(f"/memories/{preference['id']}", headers=AS_BOB)
        steal = await client.delete(f"/memories/{preference['id']}", headers=AS_BOB)
        assert peek.status_code == steal.status_code == 404
        assert peek.json()["reason"] == "memory_not_found"
        # Ada forgets it; it is gone from the list and never sent again.
        mine = await client.get(f"/memories/{preference['id']}", headers=AS_ADA)
        assert mine.status_code == 200
        gone = await client.delete(f"/memories/{preference['id']}", headers=AS_ADA)
        assert gone.status_code == 200, gone.text
        assert gone.json()["deleted"] == 1
        again = await client.delete(f"/memories/{preference['id']}", headers=AS_ADA)
        assert again.status_code == 404
        await chat(client, "s-ada-2", ASKED, ADA)
        left = (await client.get("/memories", headers=AS_ADA)).json()["memories"]
    assert (bobs["tool_calls"] or [{}])[0].get("arguments", {}).get("sku") != "SKU2024003"
    runs = gateway.to("/run")
    bob_run = runs[1]
    assert bob_run["body"]["user_context"]["user_id"] == "bob"
    assert "memories" not in bob_run["body"]
    assert preference["text"] not in str(runs[2]["body"].get("memories"))
    assert preference["id"] not in {m["id"] for m in left}


async def test_secrets_are_never_remembered_and_anonymous_callers_have_no_memory(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        await chat(client, "s-secret", "Remember that my password is hunter2", ADA)
        await chat(client, "s-key", "my api key is sk-live-abcdefghijklmnopqrstuvwx", ADA)
        await chat(client, "s-anon", "Remember that I like short answers", {})
        listed = (await client.get("/memories", headers=AS_ADA)).json()
        anonymous = await client.get("/memories")
        bad_id = await client.get("/memories/not-a-uuid", headers=AS_ADA)
    assert listed["memories"] == []
    assert anonymous.status_code == 401
    assert anonymous.json()["reason"] == "unauthenticated"
    assert bad_id.status_code == 422
    assert bad_id.json()["reason"] == "invalid_request"


async def test_memory_off_keeps_and_recalls_nothing(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent(memory_enabled=False) as client:
        await chat(client, "s-off-a", TOLD, ADA)
        second = await chat(client, "s-off-b", ASKED, ADA)
        listed = (await client.get("/memories", headers=AS_ADA)).json()
    assert listed == {**listed, "memories": [], "total": 0, "enabled": False}
    assert all("memories" not in run["body"] for run in gateway.to("/run"))
    assert second["stop_reason"] != "end_turn" or not second["tool_calls"][0]["arguments"].get(
        "sku"
    )


async def test_with_a_model_facts_it_extracts_are_recalled_into_the_system_prompt(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    # The recorded extraction answer: two facts, one of them a secret the filter drops.
    model.complete_text = "- Prefers answers in German\n- Their api key is sk-abcdefghijklmnop"
    async with agent(**llm_settings) as client:
        await chat(client, "s-model-a", "Please answer in German from now on.", ADA)
        before = len(model.requests)
        await chat(client, "s-model-b", "What do you know about my answer language?", ADA)
        memories = (await client.get("/memories", headers=AS_ADA)).json()["memories"]
    extraction = model.extractions[:1]
    assert len(model.extractions) == 2  # one a turn that speaks of the user
    assert all(r.get("stream") for r in model.requests)  # the turns themselves
    # Only the user's message went to the extraction call, never tool output.
    assert "Please answer in German" in json.dumps(extraction[0]["messages"])
    assert "tool_result" not in json.dumps(extraction[0]["messages"])
    assert [m["text"] for m in memories] == ["Prefers answers in German"]
    assert memories[0]["kind"] == "model"
    first_of_b = next(r for r in model.requests[before:] if r.get("stream"))
    assert "Prefers answers in German" in system_text(first_of_b, vendor)
