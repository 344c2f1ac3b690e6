"""Long-term memory under pressure: "forget" right after a turn stays forgotten, secrets
never become memories (in Latin or CJK text), and one message cannot flood the memory.
Offline mode and the real gateway, as in tests/agent/test_memory.py."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
import pytest

from agent.app import create_app
from agent.memory.extract import MAX_FACTS_PER_TURN, facts_of_turn
from agent.settings import Settings
from reach_common.embeddings import Embedder, Vectors
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.conftest import app_client

ADA = {"user_id": "ada", "roles": ["ops_admin"]}
AS_ADA = {"X-User-Id": "ada"}
GRACE = "Remember that I report to Grace Hopper"


async def chat(client: httpx.AsyncClient, session: str, message: str) -> Any:
    response = await client.post(
        "/chat", json={"session_id": session, "message": message, "user_context": ADA}
    )
    assert response.status_code == 200, response.text
    return response.json()


async def texts(client: httpx.AsyncClient) -> list[str]:
    listed = await client.get("/memories?limit=200", headers=AS_ADA)
    assert listed.status_code == 200, listed.text
    return sorted(m["text"] for m in listed.json()["memories"])


class SlowEmbedder(Embedder):
    """The session's real embedder, each model run 0.5 s late: a turn's learning is still
    under way when the client's next request arrives."""

    def __init__(self, model: Embedder) -> None:
        self.__dict__.update(model.__dict__)

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        time.sleep(0.5)
        return super().embed(texts, batch_size=batch_size)


async def test_forget_everything_right_after_a_turn_forgets_what_it_taught(
    agent_settings: Callable[..., Settings], embedder: Embedder, gateway: GatewayTap
) -> None:
    app = create_app(agent_settings(), embedder=SlowEmbedder(embedder))
    async with app_client(app) as client:
        await chat(client, "s-forget", GRACE)
        deleted = await client.delete("/memories", headers=AS_ADA)
        left = await texts(client)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["deleted"] == 1  # the turn's fact: waited for, then deleted
    assert left == []


async def test_a_memory_deleted_by_id_is_not_written_back_by_a_turn_still_learning(
    agent_settings: Callable[..., Settings], embedder: Embedder, gateway: GatewayTap
) -> None:
    app = create_app(agent_settings(), embedder=SlowEmbedder(embedder))
    async with app_client(app) as client:
        await chat(client, "s-one-a", GRACE)
        listed = (await client.get("/memories", headers=AS_ADA)).json()["memories"]
        (grace,) = [m for m in listed if m["text"] == "I report to Grace Hopper"]
        # Said again with a new fact: the learning writes both once the new one is embedded.
        await chat(client, "s-one-b", f"{GRACE}. My usual warehouse is Shanghai")
        gone = await client.delete(f"/memories/{grace['id']}", headers=AS_ADA)
        left = await texts(client)
    assert gone.status_code == 200, gone.text
    assert left == ["My usual warehouse is Shanghai"]


SECRETS = [
    "Remember that my passcode is 4711-9932",
    "Remember that my pw is Tr0ub4dor&3",
    "记住我的PIN是4321",
    "my door code is 1234#",
    "Remember that my pass code is 8812",
    "my pwd is correcthorse",
    "My PIN: 1234",
    "my PIN code is 0000",
    "the OTP is 445566",
    "my one-time code is 998877",
    "my CVV is 123",
    "my access code is 4455",
    "my security code is 5150",
    "my alarm code is 9090",
    "my 2FA code is 123456",
    "remember the code for the front door is 5521",
    "my safe combination is 10-20-30",
    "my wifipassword is kitten77",
    "remember my passphrase is horse battery staple",
    "我的验证码是829301",
    "我的支付密码是123456",
    "记住门禁码是1234#",
    "记住我的密码是hunter2",
]


@pytest.mark.parametrize("message", SECRETS)
def test_a_secret_is_never_a_fact(message: str) -> None:
    assert facts_of_turn(message, []) == []


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("My usual SKU is SKU2024003", "My usual SKU is SKU2024003"),
        (GRACE, "I report to Grace Hopper"),
        ("我常用的SKU是SKU2024003", "我常用的SKU是SKU2024003"),
        ("记住我负责的仓库是上海仓", "我负责的仓库是上海仓"),
        # A postcode, a discount code or a country code is no secret.
        ("my zip code is 10115", "my zip code is 10115"),
        ("Remember that our discount code is SPRING24", "our discount code is SPRING24"),
        # Words that merely contain a short secret word.
        ("Remember that I like hotpot", "I like hotpot"),
        ("Remember that I type in pinyin", "I type in pinyin"),
        ("Remember that my secretary is Grace", "my secretary is Grace"),
    ],
)
def test_an_ordinary_fact_is_kept(message: str, fact: str) -> None:
    assert [f.text for f in facts_of_turn(message, [])] == [fact]


async def test_secrets_said_in_turns_are_never_stored_and_facts_are(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        for n, message in enumerate([*SECRETS[:4], SECRETS[-1]]):
            await chat(client, f"s-secret-{n}", message)
        await chat(client, "s-fact", f"{GRACE}. My usual SKU is SKU2024003")
        left = await texts(client)
    assert "I report to Grace Hopper" in left
    assert "My usual SKU is SKU2024003" in left
    assert not any(digits in text for text in left for digits in ("4711", "Tr0ub", "4321", "1234"))


def flood(n: int) -> str:
    """``n`` distinct statements "我X是Y，" (5 characters each)."""
    parts = []
    for i in range(n):
        a, b = divmod(i, 150)
        parts.append(f"我{chr(0x4E00 + a)}是{chr(0x4E00 + 200 + b)}，")
    return "".join(parts)


def test_one_long_message_yields_at_most_the_cap() -> None:
    message = flood(6400)  # 32,000 characters: the longest message a turn takes
    facts = facts_of_turn(message, [("inventory_query", {"sku": "SKU2024003"})])
    assert len(facts) == MAX_FACTS_PER_TURN
    assert [f.text for f in facts[:2]] == message.split("，")[:2]  # the first, in order


async def test_one_message_of_many_statements_stores_at_most_the_cap(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        await chat(client, "s-flood", flood(400))
        listed = (await client.get("/memories?limit=1", headers=AS_ADA)).json()
    assert listed["total"] == MAX_FACTS_PER_TURN
