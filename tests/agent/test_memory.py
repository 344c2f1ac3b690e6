"""Long-term memory: what a user told the agent in one session is there in the next, for
that user only, and a forgotten memory stays forgotten. Offline mode and, for extraction
by the model, recorded payloads of both vendors; the real gateway throughout."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from sqlalchemy import insert

from agent.app import create_app
from agent.memory import store
from agent.memory.models import Memory
from agent.memory.service import MemoryService
from agent.settings import Settings
from reach_common.db import create_engine, create_sessionmaker
from reach_common.embeddings import Embedder, Vectors
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript, system_text
from tests.conftest import Backends, app_client

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


class CountingEmbedder(Embedder):
    """The session's real embedder (the same model and onnx session), recording the texts
    of each model run."""

    def __init__(self, model: Embedder) -> None:
        self.__dict__.update(model.__dict__)
        self.runs: list[list[str]] = []

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        if texts:
            self.runs.append(list(texts))
        return super().embed(texts, batch_size=batch_size)


async def test_no_model_run_to_recall_for_an_owner_without_memories(
    agent_settings: Callable[..., Settings], embedder: Embedder, gateway: GatewayTap
) -> None:
    counting = CountingEmbedder(embedder)
    told_more = "My usual warehouse is Shanghai; how is my usual product selling?"
    async with app_client(create_app(agent_settings(), embedder=counting)) as client:
        await chat(client, "s-runs-a", TOLD, ADA)
        await client.get("/memories", headers=AS_ADA)  # learning settled
        first = list(counting.runs)
        await chat(client, "s-runs-b", told_more, ADA)
        listed = (await client.get("/memories", headers=AS_ADA)).json()["memories"]
    second = counting.runs[len(first) :]
    # Ada had no memories: no model run to recall; learning embedded both facts in one.
    assert [run[0] for run in first] == ["My usual SKU is SKU2024003"]
    assert first[0][1:] == ["Works with sku SKU2024003 (used with inventory_query)"]
    # Then she has: the message is embedded to recall, its new fact after the answer.
    assert second == [[told_more], ["My usual warehouse is Shanghai"]]
    assert "My usual warehouse is Shanghai" in {m["text"] for m in listed}
    # Recalled once the routed call lacked its SKU: the request went again with it.
    assert "SKU2024003" in str(gateway.to("/run")[-1]["body"]["memories"])


async def test_offline_a_request_that_names_its_values_recalls_nothing(
    agent_settings: Callable[..., Settings], embedder: Embedder, gateway: GatewayTap
) -> None:
    """Offline, memories only fill a value the routed call lacks: a request that gives its
    SKU (while saying "my") costs no recall, no embedding of the message, no second /run."""
    counting = CountingEmbedder(embedder)
    named = "How is my SKU2024001 selling?"
    async with app_client(create_app(agent_settings(), embedder=counting)) as client:
        await chat(client, "s-named-a", TOLD, ADA)
        await client.get("/memories", headers=AS_ADA)  # learning settled: Ada has memories
        runs_before = len(counting.runs)
        reply = await chat(client, "s-named-b", named, ADA)
        await client.get("/memories", headers=AS_ADA)
    (sales,) = reply["tool_calls"]
    assert sales["tool_id"] == "sales_query"
    assert sales["arguments"]["sku"] == "SKU2024001"
    assert [named] not in counting.runs[runs_before:]  # never embedded to recall
    asked = [r for r in gateway.to("/run") if r["body"]["user_query"] == named]
    assert len(asked) == 1
    assert "memories" not in asked[0]["body"]


async def test_offline_a_request_naming_an_id_recalls_once_its_call_lacks_a_value(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    """A request naming an id-like value is sent without memories; when the routed call
    still lacks a required value, the memories are recalled and it goes again."""
    asked = "How is my usual product selling? Asking for ticket ABC-12345."
    async with agent() as client:
        await chat(client, "s-lazy-a", TOLD, ADA)
        await client.get("/memories", headers=AS_ADA)  # learning settled
        reply = await chat(client, "s-lazy-b", asked, ADA)
    (sales,) = reply["tool_calls"]
    assert sales["tool_id"] == "sales_query"
    assert sales["arguments"]["sku"] == "SKU2024003"
    alone, again = [r["body"] for r in gateway.to("/run") if r["body"]["user_query"] == asked]
    assert "memories" not in alone
    assert "My usual SKU is SKU2024003" in again["memories"]


class SlowToAnswer:
    """ASGI middleware: the last chunk of a ``/chat`` answer is sent 0.3 s late, then
    "sent" is recorded in ``order``."""

    def __init__(self, app: Any, order: list[str]) -> None:
        self.app = app
        self.order = order

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def slow(message: Any) -> None:
            last = message["type"] == "http.response.body" and not message.get("more_body")
            if scope.get("path") == "/chat" and last:
                await asyncio.sleep(0.3)
                self.order.append("sent")
            await send(message)

        await self.app(scope, receive, slow)


class OrderedEmbedder(CountingEmbedder):
    def __init__(self, model: Embedder, order: list[str]) -> None:
        super().__init__(model)
        self.order = order

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        self.order += [f"embed: {text}" for text in texts]
        return super().embed(texts, batch_size=batch_size)


async def test_learning_starts_once_the_answer_is_sent(
    agent_settings: Callable[..., Settings], embedder: Embedder, gateway: GatewayTap
) -> None:
    """The facts of a turn are embedded after its answer has gone out, never while the
    answer is on its way (the user waits for that, not for learning)."""
    order: list[str] = []
    app = create_app(agent_settings(), embedder=OrderedEmbedder(embedder, order))
    app.add_middleware(SlowToAnswer, order=order)
    async with app_client(app) as client:
        await chat(client, "s-order", TOLD, ADA)  # no memories yet: nothing to recall
        streamed = await client.post(
            "/chat",
            json={
                "session_id": "s-order",
                "message": "My usual warehouse is Shanghai",
                "stream": True,
            },
            headers=AS_ADA,
        )
        listed = (await client.get("/memories", headers=AS_ADA)).json()["memories"]
    assert "event: done" in streamed.text
    learned = [
        "embed: My usual SKU is SKU2024003",
        "embed: Works with sku SKU2024003 (used with inventory_query)",
    ]
    # The second turn: its recall runs while it is answered, its learning after.
    assert order == [
        "sent",
        *learned,
        "embed: My usual warehouse is Shanghai",
        "sent",
        "embed: My usual warehouse is Shanghai",
    ]
    assert "My usual warehouse is Shanghai" in {m["text"] for m in listed}


async def test_a_known_fact_still_being_written_is_recalled_without_waiting_for_the_write(
    clean_state: Backends, embedder: Embedder
) -> None:
    engine = create_engine(clean_state.database_url, pool_size=4)
    memory = MemoryService(embedder, create_sessionmaker(engine), top_k=3, min_similarity=0.2)
    fact = "My usual SKU is SKU2024003"
    try:
        for said in ("Remember that I report to Grace", TOLD):
            memory.learn("ada", said, [], session_id="s-w", message_id=uuid.uuid4())
            await memory.settled("ada")
        async with memory.sessionmaker.begin() as db:  # forgotten; its vector still cached
            stored, _ = await store.list_for(db, "ada", limit=10, offset=0)
            await store.remove(db, "ada", next(m.id for m in stored if m.text == fact))
        async with engine.connect() as blocker:
            # An uncommitted row of the same text holds the learned insert back.
            await blocker.execute(
                insert(Memory).values(
                    id=uuid.uuid4(),
                    owner="ada",
                    text=fact,
                    kind="preference",
                    content_hash=store.content_hash(fact),
                    embedding=embedder.embed_one(fact),
                )
            )
            memory.learn("ada", TOLD, [], session_id="s-w2", message_id=uuid.uuid4())
            # A new session's recall sees the fact said again while its write waits.
            again = await asyncio.wait_for(memory.recall("ada", ASKED), timeout=30)
            assert fact in [r.text for r in again]
            await blocker.rollback()
        await asyncio.wait_for(memory.settled("ada"), timeout=30)
        async with memory.sessionmaker() as db:
            stored, _ = await store.list_for(db, "ada", limit=10, offset=0)
        assert sorted(m.text for m in stored) == ["I report to Grace", fact]
        assert next(m for m in stored if m.text == fact).source_session_id == "s-w2"
    finally:
        await memory.aclose()
        await engine.dispose()


class StampingEmbedder(CountingEmbedder):
    """Records when each model run starts (``time.perf_counter``)."""

    def __init__(self, model: Embedder) -> None:
        super().__init__(model)
        self.started: list[float] = []

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Vectors:
        self.started.append(time.perf_counter())
        return super().embed(texts, batch_size=batch_size)


async def test_a_recall_starts_its_model_run_before_the_event_loop_is_free(
    clean_state: Backends, embedder: Embedder
) -> None:
    """The turn's claim keeps the event loop busy right after the recall is started: the
    message's model run starts at once in its worker thread, not once the loop gets to
    the recall's task. An owner not known to have memories is checked first (no run)."""
    stamping = StampingEmbedder(embedder)
    engine = create_engine(clean_state.database_url, pool_size=4)
    memory = MemoryService(stamping, create_sessionmaker(engine), top_k=3, min_similarity=0.2)
    try:
        untold = memory.start_recall("bob", ASKED)
        time.sleep(0.3)  # noqa: ASYNC251 - the loop held, as a claim holds it
        assert stamping.started == []
        assert await untold == []

        memory.learn("ada", TOLD, [], session_id="s-early", message_id=uuid.uuid4())
        await memory.settled("ada")
        runs = len(stamping.started)
        started = time.perf_counter()
        recall = memory.start_recall("ada", ASKED)
        time.sleep(0.3)  # noqa: ASYNC251 - the loop held, as a claim holds it
        busy_until = time.perf_counter()
        assert len(stamping.started) == runs + 1
        assert started <= stamping.started[-1] < busy_until
        recalled = await recall
        assert "My usual SKU is SKU2024003" in [r.text for r in recalled]
    finally:
        await memory.aclose()
        await engine.dispose()
