"""``reach keys`` (the gateway's ``/keys`` API) and ``reach chat`` (the agent, streamed)
against real services on loopback ports."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from agent.app import create_app as create_agent_app
from agent.settings import Settings as AgentSettings
from reach_cli.chat import events
from reach_cli.main import app
from reach_common.auth.keys import hash_key
from reach_common.db import libpq_url
from reach_common.embeddings import Embedder
from reach_common.stack import mint_key
from tests.agent.servers import ServerThread
from tests.agent.tap import GatewayTap
from tests.conftest import Backends

runner = CliRunner()


def insert_key(backends: Backends, user_id: str, roles: list[str]) -> str:
    return mint_key(backends.database_url, user_id, roles)


def reach(
    url: str, *args: str, key: str | None = None, who: tuple[str, ...] = ()
) -> tuple[int, Any]:
    credential = ["--api-key", key] if key else []
    result = runner.invoke(app, ["--url", url, *credential, *who, "--json", *args])
    try:
        return result.exit_code, json.loads(result.stdout)
    except ValueError:
        return result.exit_code, result.stdout


def test_keys_are_created_listed_and_revoked_by_a_proven_admin(
    gateway: GatewayTap, clean_state: Backends
) -> None:
    admin = insert_key(clean_state, "root", ["admin"])
    code, created = reach(
        gateway.url, "keys", "create", "alice", "--roles", "viewer,ops", key=admin
    )
    assert code == 0, created
    assert created["user_id"] == "alice"
    assert created["roles"] == ["viewer", "ops"]
    alices = created["key"]
    # The new key works at once: the gateway knows alice, with her roles.
    code, tools = reach(gateway.url, "tools", "ls", key=alices)
    assert code == 0, tools
    code, listed = reach(gateway.url, "keys", "ls", "--for", "alice", key=admin)
    assert code == 0
    assert [k["key_id"] for k in listed["keys"]] == [created["key_id"]]
    shown = json.dumps(listed)
    # The secret is what follows the key id (it may itself hold "_": token_urlsafe).
    secret_part = alices.split(f"_{created['key_id']}_", 1)[1]
    for secret in (alices, secret_part, hash_key(alices), "key_hash"):
        assert secret not in shown
    code, revoked = reach(gateway.url, "keys", "revoke", created["key_id"], key=admin)
    assert code == 0
    assert revoked == {"key_id": created["key_id"], "revoked": True}
    code, active = reach(gateway.url, "keys", "ls", "--for", "alice", key=admin)
    assert active["keys"] == []
    code, every = reach(gateway.url, "keys", "ls", "--for", "alice", "--revoked", key=admin)
    assert every["keys"][0]["revoked_at"]
    code, again = reach(gateway.url, "keys", "revoke", created["key_id"], key=admin)
    assert code == 1
    assert again["reason"] == "key_not_found"


def test_keys_cannot_be_minted_on_a_claim_or_without_the_role(
    gateway: GatewayTap, clean_state: Backends
) -> None:
    # Permissive mode believes a claimed admin role for tools, never for keys: a key minted
    # on a claim would be trusted by every strict gateway on the same database.
    code, claimed = reach(
        gateway.url,
        "keys",
        "create",
        "eve",
        "--roles",
        "admin",
        who=("--user", "eve", "--roles", "admin"),
    )
    assert code == 1
    assert claimed["reason"] == "unauthenticated"
    viewer = insert_key(clean_state, "bob", ["viewer"])
    code, refused = reach(gateway.url, "keys", "create", "bob", "--roles", "admin", key=viewer)
    assert code == 1
    assert refused["reason"] == "insufficient_permission"
    code, listed = reach(gateway.url, "keys", "ls", key=viewer)
    assert code == 1
    assert listed["reason"] == "insufficient_permission"
    admin = insert_key(clean_state, "root", ["admin"])
    code, bad = reach(gateway.url, "keys", "create", "mallory", "--roles", "a b<script>", key=admin)
    assert code == 1
    assert bad["reason"] == "invalid_request"
    code, bad_id = reach(gateway.url, "keys", "revoke", "../../etc", key=admin)
    assert code == 1
    assert bad_id["reason"] in ("not_found", "invalid_request")
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        users = {row[0] for row in conn.execute("SELECT user_id FROM auth.api_key")}
    assert users == {"bob", "root"}  # nothing was written by the refused calls


@pytest.fixture
def agent_url(
    gateway: GatewayTap, service_env: dict[str, Any], embedder: Embedder
) -> Iterator[str]:
    settings = AgentSettings(
        **service_env,
        gateway_url=gateway.url,
        llm_provider="offline",
        otel_span_store=False,
    )
    with ServerThread(create_agent_app(settings, embedder=embedder)) as server:
        yield server.url


def chat(agent_url: str, *args: str, stdin: str | None = None, user: str = "u1") -> tuple[int, str]:
    who = ["--user", user, "--roles", "ops_admin"]
    result = runner.invoke(app, ["--agent-url", agent_url, *who, *args], input=stdin)
    return result.exit_code, result.stdout


def test_chat_streams_each_turn_and_keeps_the_session(agent_url: str) -> None:
    code, printed = chat(agent_url, "--json", "chat", "-m", "SKU2024001 还有多少库存")
    assert code == 0, printed
    stream = [json.loads(line) for line in printed.splitlines()]
    kinds = [event["event"] for event in stream]
    assert kinds[-1] == "done"
    assert {"tool_call", "tool_result"} <= set(kinds[:-1])
    done = stream[-1]["data"]
    assert "156" in done["reply"]
    session = done["session_id"]
    # Interactive: two turns typed one after the other share one session.
    code, printed = chat(
        agent_url,
        "--json",
        "chat",
        "--session",
        session,
        stdin="SKU2024002 还有多少库存\n/quit\n",
    )
    assert code == 0, printed
    turns = [json.loads(line) for line in printed.splitlines()]
    assert turns[-1]["data"]["session_id"] == session
    # For people: the reply as text, and the session named at the end.
    code, text = chat(agent_url, "chat", "--session", session, stdin="SKU2024001 还有多少库存\n")
    assert code == 0
    assert "156" in text


def test_chat_failures_exit_non_zero_with_the_reason(agent_url: str) -> None:
    code, printed = chat(agent_url, "--json", "chat", "-m", "SKU2024001 还有多少库存")
    session = json.loads(printed.splitlines()[-1])["data"]["session_id"]
    code, printed = chat(agent_url, "--json", "chat", "--session", session, "-m", "hi", user="u2")
    assert code == 1
    assert json.loads(printed)["reason"] == "session_forbidden"
    code, printed = chat("http://127.0.0.1:9", "--json", "chat", "-m", "hello")
    assert code == 2
    assert json.loads(printed)["reason"] == "unreachable"


def test_server_sent_events_are_parsed_across_lines() -> None:
    lines = [
        "event: delta",
        'data: {"text": "a"}',
        "",
        ": keep-alive",
        "",
        "event: done",
        "data: {",
        'data: "reply": "ab"}',
        "",
    ]
    assert list(events(iter(lines))) == [("delta", {"text": "a"}), ("done", {"reply": "ab"})]
