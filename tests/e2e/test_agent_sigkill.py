"""SIGKILL the agent in the middle of a turn, restart it: the session loads and is provider-valid.

The agent runs as a real process. Its model is the recorded Anthropic wire
served over loopback (the real SDK talks to it), and that server enforces the
vendor's history rules, so a broken history after the crash would make the
next turn fail with a 400 exactly as the real API would. Its gateway is the real
gateway (shipped manifests, real shop) on a loopback port, behind a tap that holds
round 2's ``sales_query`` call until the kill has landed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.app import create_app as create_gateway_app
from reach_common.embeddings import Embedder
from reach_common.llm.anthropic import render_messages as anthropic_wire
from reach_common.llm.history import repair
from reach_common.llm.openai import render_messages as openai_wire
from reach_common.llm.types import Message, ToolCall
from shop.app import create_app as create_shop_app
from shop.settings import Settings as ShopSettings
from tests.agent.conftest import gateway_settings
from tests.agent.servers import ServerThread
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript, anthropic_violations, openai_violations, replay_app
from tests.conftest import Backends
from tests.e2e.processes import free_port, wait_until_ready

pytestmark = pytest.mark.slow
CALLER = {"user_id": "u1", "roles": ["ops_admin"]}
AS_U1 = {"X-User-Id": "u1", "X-User-Roles": "ops_admin"}
SALES = "/tools/sales_query/invoke"


@contextmanager
def agent_process(env: dict[str, str], port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "agent"],
            env={**os.environ, **env, "PORT": str(port), "HOST": "127.0.0.1"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until_ready(f"http://127.0.0.1:{port}", process)
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def stored_history(messages: list[dict[str, Any]]) -> list[Message]:
    return [
        Message(
            role=m["role"],
            content=m["content"],
            tool_calls=tuple(
                ToolCall(c["id"], c["name"], c["arguments"]) for c in m["tool_calls"] or ()
            ),
            tool_call_id=m["tool_call_id"],
            is_error=m["is_error"],
        )
        for m in messages
    ]


def test_sigkill_mid_turn_leaves_a_provider_valid_session(
    clean_state: Backends, tmp_path: Path
) -> None:
    shop_app = create_shop_app(
        ShopSettings(
            database_url=clean_state.database_url,
            redis_url=clean_state.redis_url,
            log_level="WARNING",
            otel_span_store=False,
        )
    )
    model = ModelScript("anthropic")
    with ServerThread(shop_app) as shop:
        tap = GatewayTap(
            create_gateway_app(gateway_settings(clean_state, shop.url), embedder=Embedder())
        )
        tap.hold(SALES)  # round 2 hangs on this call; the kill lands there
        with (
            ServerThread(tap) as gateway,
            ServerThread(replay_app({"anthropic": model})) as llm,
        ):
            try:
                kill_mid_turn_and_resume(clean_state, tmp_path, tap, gateway.url, llm.url, model)
            finally:
                tap.release()


def kill_mid_turn_and_resume(
    clean_state: Backends,
    tmp_path: Path,
    tap: GatewayTap,
    gateway_url: str,
    llm_url: str,
    model: ModelScript,
) -> None:
    env = {
        "DATABASE_URL": clean_state.database_url,
        "REDIS_URL": clean_state.redis_url,
        "GATEWAY_URL": gateway_url,
        "LLM_PROVIDER": "anthropic",
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "LLM_BASE_URL": llm_url,
        "LLM_MAX_RETRIES": "0",
        "SESSION_LOCK_TTL_S": "2",
        "LOG_LEVEL": "WARNING",
    }
    log = tmp_path / "agent.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with agent_process(env, port, log) as process:
        outcome: dict[str, Any] = {}

        def send() -> None:
            try:
                outcome["response"] = httpx.post(
                    f"{url}/chat",
                    json={
                        "session_id": "s-kill",
                        "message": "How is SKU2024001 doing?",
                        "user_context": CALLER,
                    },
                    timeout=30,
                )
            except httpx.HTTPError as exc:
                outcome["error"] = exc

        sender = threading.Thread(target=send)
        sender.start()
        # Round 2's sales_query call is held in the tap: the turn is mid-round.
        tap.wait_until(lambda: tap.held(SALES) == 1, timeout=20)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        sender.join(timeout=10)
    assert "error" in outcome, "the request should have died with the process"
    assert process.returncode == -signal.SIGKILL

    tap.release()
    with agent_process(env, port, log):
        session = httpx.get(f"{url}/sessions/s-kill", headers=AS_U1, timeout=10)
        assert session.status_code == 200, session.text
        messages = session.json()["messages"]
        # The question and round 1 (call + result) were saved; round 2 was not.
        assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
        assert messages[1]["tool_calls"][0]["id"] == messages[2]["tool_call_id"]
        history = stored_history(messages)
        assert repair(history) == history  # no orphaned call or result
        follow_up = [*history, Message("user", "and now?")]
        assert (
            anthropic_violations(
                {"messages": anthropic_wire(follow_up), "tools": [{"name": "inventory_query"}]}
            )
            == []
        )
        assert openai_violations({"messages": openai_wire(follow_up, None)}) == []

        # The session is usable again once the dead turn's lock expires (bounded polling).
        deadline = time.monotonic() + 10
        while True:
            retry = httpx.post(
                f"{url}/chat",
                json={"session_id": "s-kill", "message": "and now?", "user_context": CALLER},
                timeout=30,
            )
            if retry.status_code != 409 or time.monotonic() > deadline:
                break
            assert retry.json()["reason"] == "session_busy"
            time.sleep(0.2)
        assert retry.status_code == 200, retry.text
        assert retry.json()["stop_reason"] == "end_turn"
        # The model saw the crashed turn's round with its result, and accepted it.
        first_request = next(
            r for r in model.requests if "and now?" in json.dumps(r["messages"], ensure_ascii=False)
        )
        assert anthropic_violations(first_request) == []
        assert '"tool_result"' in json.dumps(first_request["messages"])
