"""Finding 4: ``GET /traces/{id}`` and ``/upstreams`` were open in both modes, and spans
carried caller roles and full upstream URLs with path values."""

from __future__ import annotations

import json

import psycopg

from reach_common.auth.keys import create_key
from reach_common.db import libpq_url
from tests.conftest import Backends, app_client
from tests.gateway.conftest import GatewayFactory, http_tool
from tests.gateway.upstream import Upstream

PATH_VALUE = "customer-4711-private"


async def test_a_trace_is_readable_by_its_caller_and_operators_only(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    schema = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
    tool = http_tool(
        "profile", upstream.url + "/profiles/{who}", input_schema=schema, permission="user"
    )
    app = make_gateway(auth_mode="strict", egress_allowlist=["127.0.0.1"])
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(tool)
        async with app.state.runtime.registry_service._sessionmaker.begin() as session:
            alice = {"X-API-Key": (await create_key(session, "alice", ["ops_admin"])).key}
            bob = {"X-API-Key": (await create_key(session, "bob", [])).key}
            ops = {"X-API-Key": (await create_key(session, "oncall", ["ops"])).key}
        called = await client.post(
            "/tools/profile/invoke", json={"arguments": {"who": PATH_VALUE}}, headers=alice
        )
        trace_id = called.json()["trace_id"]
        by_alice = await client.get(f"/traces/{trace_id}", headers=alice)
        by_bob = await client.get(f"/traces/{trace_id}", headers=bob)
        by_nobody = await client.get(f"/traces/{trace_id}")
        by_ops = await client.get(f"/traces/{trace_id}", headers=ops)
        # Bob joins Alice's trace by sending its traceparent: the trace then names two
        # callers, and neither can read it any more (operators still can).
        parent = f"00-{trace_id}-{'1' * 16}-01"
        await client.post(
            "/tools/profile/invoke",
            json={"arguments": {"who": "bob"}},
            headers={**bob, "traceparent": parent},
        )
        bob_after_joining = await client.get(f"/traces/{trace_id}", headers=bob)
        upstreams_bob = await client.get("/upstreams", headers=bob)
        upstreams_nobody = await client.get("/upstreams")
        upstreams_ops = await client.get("/upstreams", headers=ops)
        app.state.telemetry.flush()
    assert called.status_code == 200, called.text
    assert by_alice.status_code == 200
    assert by_ops.status_code == 200
    for refused in (by_bob, by_nobody, bob_after_joining):
        assert refused.status_code == 404
        assert refused.json()["reason"] == "trace_not_found"
    assert upstreams_bob.status_code == 403
    assert upstreams_bob.json()["reason"] == "insufficient_permission"
    assert upstreams_nobody.status_code == 401
    assert upstreams_nobody.json()["reason"] == "unauthenticated"
    assert upstreams_ops.status_code == 200
    # Spans name the caller (that is what ownership is checked against) but never roles,
    # and the upstream URL is the manifest's template, without the caller's values.
    assert upstream.received[0].path == f"/profiles/{PATH_VALUE}"
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        rows = conn.execute(
            "SELECT attributes FROM telemetry.spans WHERE trace_id = %s", (trace_id,)
        ).fetchall()
    stored = json.dumps([r[0] for r in rows])
    assert PATH_VALUE not in stored
    assert "ops_admin" not in stored
    assert '"enduser.id": "alice"' in stored
    assert upstream.url + "/profiles/{who}" in stored
