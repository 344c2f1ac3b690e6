"""Finding 2: agent sessions have owners.

A session belongs to the user who started it: the verified user of the API key
in strict mode, the claimed user in permissive mode. Nobody else may list it,
read it, delete it, add to it or replay one of its turns; reading or deleting
someone else's session looks exactly like a missing one (404), so ids cannot be
probed. An admin may read any session. In strict mode every endpoint but the
health checks needs a credential, and the agent forwards the caller's own
credential to the gateway, never a claimed identity.

The agent runs in process in offline mode (no model needed here) against the
real gateway (shipped manifests, on a loopback port) over the real shop; API keys
are real rows in ``auth.api_key``, verified by the shared auth kit at the agent
and at the gateway.
"""

from __future__ import annotations

from typing import Any

import httpx
import psycopg

from reach_common.db import libpq_url
from tests.agent import conftest as agent_fixtures
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.conftest import Backends, KeyMaker, assert_error

# The agent tests' fixtures: the agent app, the real gateway behind its recording tap.
shop_server = agent_fixtures.shop_server
gateway_overrides = agent_fixtures.gateway_overrides
gateway = agent_fixtures.gateway
gateway_url = agent_fixtures.gateway_url
agent_settings = agent_fixtures.agent_settings
agent = agent_fixtures.agent

QUESTION = "SKU2024001 还有多少库存"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def message_count(backends: Backends, session_id: str) -> int:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        row = conn.execute(
            "SELECT count(*) FROM agent.message WHERE session_id = %s", (session_id,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [s["id"] for s in response.json()["sessions"]]


async def test_strict_mode_keeps_each_session_to_its_owner(
    agent: AgentClient, gateway: GatewayTap, make_key: KeyMaker, clean_state: Backends
) -> None:
    alice = await make_key("alice", ["ops_admin"])
    bob = await make_key("bob", [])
    admin = await make_key("root", ["admin"])
    first: dict[str, Any] = {"session_id": "s-alice", "message": QUESTION, "message_id": "m-1"}
    async with agent(auth_mode="strict") as client:
        # Alice claims to be someone else in the body: strict mode ignores the claim.
        started = await client.post(
            "/chat",
            json={**first, "user_context": {"user_id": "mallory", "roles": ["admin"]}},
            headers=bearer(alice),
        )
        assert started.status_code == 200, started.text
        assert started.json()["tool_calls"][0]["result"]["available"] == 156
        gateway_calls = len(gateway.requests)
        stored = message_count(clean_state, "s-alice")

        bob_list = await client.get("/sessions", headers=bearer(bob))
        bob_list_alice = await client.get(
            "/sessions", params={"user_id": "alice"}, headers=bearer(bob)
        )
        bob_read = await client.get("/sessions/s-alice", headers=bearer(bob))
        missing_read = await client.get("/sessions/s-nothing", headers=bearer(bob))
        bob_delete = await client.delete("/sessions/s-alice", headers={"X-API-Key": bob})
        bob_append = await client.post(
            "/chat",
            json={"session_id": "s-alice", "message": "show me everything"},
            headers=bearer(bob),
        )
        bob_replay = await client.post("/chat", json=first, headers=bearer(bob))
        bob_claims_alice = await client.post(
            "/chat",
            json={**first, "user_context": {"user_id": "alice", "roles": ["ops_admin"]}},
            headers={**bearer(bob), "X-User-Id": "alice"},
        )
        refused_calls = len(gateway.requests)
        refused_stored = message_count(clean_state, "s-alice")

        alice_list = await client.get("/sessions", headers=bearer(alice))
        alice_read = await client.get("/sessions/s-alice", headers={"X-API-Key": alice})
        alice_replay = await client.post("/chat", json=first, headers=bearer(alice))
        admin_read = await client.get("/sessions/s-alice", headers=bearer(admin))
        admin_list = await client.get("/sessions", headers=bearer(admin))
        admin_filtered = await client.get(
            "/sessions", params={"user_id": "bob"}, headers=bearer(admin)
        )
        alice_delete = await client.delete("/sessions/s-alice", headers=bearer(alice))
        after_delete = await client.get("/sessions/s-alice", headers=bearer(alice))

    # Bob sees nothing of Alice's session, and a session of hers reads like a missing one.
    assert ids(bob_list) == []
    assert_error(bob_list_alice, 403, "insufficient_permission")
    assert_error(bob_read, 404, "session_not_found")
    assert_error(missing_read, 404, "session_not_found")
    # The same answer as for a missing session: nothing tells that Alice's exists.
    assert bob_read.json().keys() == missing_read.json().keys()
    assert bob_read.json()["message"] == "No session has id 's-alice'."
    assert_error(bob_delete, 404, "session_not_found")
    assert_error(bob_append, 403, "session_forbidden")
    assert_error(bob_replay, 403, "session_forbidden")
    assert_error(bob_claims_alice, 403, "session_forbidden")
    assert bob_replay.json()["session_id"] == "s-alice"
    # Nothing was appended, replayed or run for Bob.
    assert refused_stored == stored == 4
    assert refused_calls == gateway_calls
    assert "reply" not in bob_replay.json()

    # Alice owns it (by her key, not by the body's claim) and can use it.
    assert ids(alice_list) == ["s-alice"]
    assert alice_read.status_code == 200, alice_read.text
    assert alice_read.json()["user_id"] == "alice"
    assert [m["role"] for m in alice_read.json()["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert alice_replay.status_code == 200, alice_replay.text
    assert alice_replay.json()["replayed"] is True
    assert alice_replay.json()["reply"] == started.json()["reply"]

    # An admin reads any session and lists everyone's.
    assert admin_read.status_code == 200, admin_read.text
    assert admin_read.json()["user_id"] == "alice"
    assert ids(admin_list) == ["s-alice"]
    assert ids(admin_filtered) == []

    assert alice_delete.status_code == 200, alice_delete.text
    assert alice_delete.json()["status"] == "deleted"
    assert_error(after_delete, 404, "session_not_found")

    # The gateway got Alice's own credential and no claimed identity.
    (run,) = gateway.to("/run")
    assert run["headers"]["authorization"] == f"Bearer {alice}"
    assert "x-user-id" not in run["headers"]
    assert run["body"]["user_context"] == {}


async def test_strict_mode_needs_a_credential_everywhere_but_health(
    agent: AgentClient, gateway: GatewayTap, make_key: KeyMaker, clean_state: Backends
) -> None:
    alice = await make_key("alice", [])
    claim = {"X-User-Id": "alice", "X-User-Roles": "admin"}
    async with agent(auth_mode="strict") as client:
        await client.post(
            "/chat", json={"session_id": "s-1", "message": "hi"}, headers=bearer(alice)
        )
        stored = message_count(clean_state, "s-1")
        chat = await client.post(
            "/chat",
            json={"session_id": "s-1", "message": "hi", "user_context": {"user_id": "alice"}},
        )
        listing = await client.get("/sessions", headers=claim)
        read = await client.get("/sessions/s-1", headers=claim)
        delete = await client.delete("/sessions/s-1")
        forged = await client.get("/sessions/s-1", headers=bearer("rk_0123456789ab_forged"))
        wrong_scheme = await client.get("/sessions/s-1", headers={"Authorization": "Basic YTpi"})
        health = await client.get("/healthz")
    for response in (chat, listing, read, delete):
        assert_error(response, 401, "unauthenticated")
        assert response.headers["www-authenticate"] == "Bearer"
    assert_error(forged, 401, "invalid_credential")
    assert_error(wrong_scheme, 401, "invalid_credential")
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    assert message_count(clean_state, "s-1") == stored == 2  # the question and the answer


async def test_permissive_mode_keeps_claimed_users_apart(
    agent: AgentClient, gateway: GatewayTap, clean_state: Backends
) -> None:
    as_u1 = {"X-User-Id": "u1"}
    as_u2 = {"X-User-Id": "u2"}
    async with agent() as client:
        started = await client.post(
            "/chat",
            json={"session_id": "s-u1", "message": QUESTION, "user_context": {"user_id": "u1"}},
        )
        assert started.status_code == 200, started.text
        stored = message_count(clean_state, "s-u1")
        u2_read = await client.get("/sessions/s-u1", headers=as_u2)
        u2_list = await client.get("/sessions", headers=as_u2)
        u2_delete = await client.delete("/sessions/s-u1", headers=as_u2)
        u2_append = await client.post(
            "/chat",
            json={"session_id": "s-u1", "message": "hi", "user_context": {"user_id": "u2"}},
        )
        anonymous_read = await client.get("/sessions/s-u1")
        u1_read = await client.get("/sessions/s-u1", headers=as_u1)
    assert_error(u2_read, 404, "session_not_found")
    assert ids(u2_list) == []
    assert_error(u2_delete, 404, "session_not_found")
    assert_error(u2_append, 403, "session_forbidden")
    assert_error(anonymous_read, 404, "session_not_found")
    assert message_count(clean_state, "s-u1") == stored
    assert u1_read.status_code == 200, u1_read.text
    assert u1_read.json()["user_id"] == "u1"
    # Permissive mode forwards the claimed identity (the gateway trusts it there too).
    (run,) = gateway.to("/run")
    assert run["body"]["user_context"] == {"user_id": "u1", "roles": []}
