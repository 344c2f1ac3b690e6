"""Audit rows for every call, and secrets nowhere: not in responses, audit rows, spans or logs."""

from __future__ import annotations

import json

import psycopg
import pytest

from reach_common.db import libpq_url
from tests.conftest import Backends, app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.upstream import Received, Reply, Upstream

API_KEY = "sk-live-UPSTREAM-KEY-8f2c91"
CLIENT_SECRET = "oauth-CLIENT-SECRET-55aa17"
ACCESS_TOKEN = "access-TOKEN-from-idp-93be40"
PASSWORD_ARG = "hunter2-PASSWORD-ARG-77"


async def test_no_secret_in_response_audit_spans_or_logs(
    make_gateway: GatewayFactory,
    upstream: Upstream,
    clean_state: Backends,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REACH_SECRET_UPSTREAM_API_KEY", API_KEY)
    monkeypatch.setenv("REACH_SECRET_IDP_CLIENT_SECRET", CLIENT_SECRET)

    def answer(request: Received) -> Reply:
        if request.path == "/token":
            return Reply(200, {"access_token": ACCESS_TOKEN, "expires_in": 300})
        if request.path == "/fail":
            return Reply(500, {"message": "upstream broke"})
        return Reply(200, {"ok": True})

    upstream.default = answer
    schema = {
        "type": "object",
        "properties": {"user": {"type": "string"}, "password": {"type": "string"}},
    }
    keyed = http_tool("keyed", upstream.url + "/data", input_schema=schema)
    keyed["endpoint"]["auth"] = {"type": "api_key", "key": "UPSTREAM_API_KEY"}
    oauth = http_tool("oauth", upstream.url + "/data", input_schema=schema)
    oauth["endpoint"]["auth"] = {
        "type": "oauth2",
        "token_endpoint": upstream.url + "/token",
        "client_id": "gw",
        "key": "IDP_CLIENT_SECRET",
    }
    failing = http_tool("failing", upstream.url + "/fail", input_schema=schema)
    failing["endpoint"]["auth"] = {"type": "bearer", "key": "UPSTREAM_API_KEY"}
    arguments = {"user": "li", "password": PASSWORD_ARG}

    bound = {"UPSTREAM_API_KEY": ["127.0.0.1"], "IDP_CLIENT_SECRET": ["127.0.0.1"]}
    app = make_gateway(log_level="DEBUG", tool_secret_hosts=bound)
    async with app_client(app) as client:
        for manifest in (keyed, oauth, failing):
            await client.post("/tools/register", json=manifest, headers=ADMIN)
        answers = [
            await client.post(f"/tools/{t}/invoke", json={"arguments": arguments})
            for t in ("keyed", "oauth", "failing")
        ]
        listed = await client.get("/tools/list")
        read = await client.get("/tools/oauth", headers=ADMIN)  # the raw manifest too
        trace = await client.get(f"/traces/{answers[0].json()['trace_id']}", headers=ADMIN)
        await app.state.runtime.audit.flush()
        app.state.telemetry.flush()
    # The secrets really were used on the wire...
    assert upstream.received[0].headers["x-api-key"] == API_KEY
    assert any(
        r.headers.get("authorization") == f"Bearer {ACCESS_TOKEN}" for r in upstream.received
    )
    assert [a.status_code for a in answers] == [200, 200, 502]
    # ...and appear nowhere else.
    secrets = (API_KEY, CLIENT_SECRET, ACCESS_TOKEN, PASSWORD_ARG)
    for response in (*answers, listed, read, trace):
        for secret in secrets:
            assert secret not in response.text
    assert answers[0].json()["arguments"] == {"user": "li", "password": "[REDACTED]"}
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        audit = conn.execute(
            "SELECT tool_id, caller, status, reason, http_status, attempts, arguments, trace_id, "
            "latency_ms FROM gateway.invocation ORDER BY id"
        ).fetchall()
        tools = conn.execute("SELECT manifest::text FROM gateway.tool").fetchall()
        spans = conn.execute(
            "SELECT attributes::text, events::text FROM telemetry.spans"
        ).fetchall()
    assert [(r[0], r[2], r[3], r[4], r[5]) for r in audit] == [
        ("keyed", "succeeded", None, 200, 1),
        ("oauth", "succeeded", None, 200, 1),
        ("failing", "failed", "tool_error", 502, 1),
    ]
    assert all(r[6] == {"user": "li", "password": "[REDACTED]"} for r in audit)
    assert [r[7] for r in audit] == [a.json()["trace_id"] for a in answers]
    assert all(r[8] > 0 for r in audit)
    stored = json.dumps(audit, default=str) + str(tools) + str(spans)
    logs = capfd.readouterr()
    assert "tool_call_failed" in logs.out  # logging did happen, at DEBUG
    for secret in secrets:
        assert secret not in stored
        assert secret not in logs.out + logs.err


async def test_refused_calls_are_audited_too(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    async with app_client(make_gateway(auth_mode="strict")) as client:
        await client.post("/tools/nothing/invoke", json={"arguments": {"token": "abc"}})
        await client.post(
            "/tools/nothing/invoke",
            json={"arguments": {}},
            headers={"Authorization": "Bearer rk_bad_key"},
        )
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        rows = conn.execute(
            "SELECT tool_id, status, reason, http_status, arguments FROM gateway.invocation "
            "ORDER BY id"
        ).fetchall()
    assert rows == [
        ("nothing", "refused", "tool_not_found", 404, {"token": "[REDACTED]"}),
        ("nothing", "refused", "invalid_credential", 401, {}),
    ]
