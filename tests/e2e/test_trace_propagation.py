"""One trace across services: gateway → shop over HTTP, both in telemetry.spans."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import httpx
import psycopg

from reach_common.db import libpq_url
from tests.conftest import Backends
from tests.e2e.processes import free_port, service_process


def spans_of(database_url: str, trace_id: str) -> list[tuple[str, str, str | None, str]]:
    with psycopg.connect(libpq_url(database_url)) as conn:
        return conn.execute(
            "SELECT service, name, parent_span_id, span_id FROM telemetry.spans "
            "WHERE trace_id = %s ORDER BY start_time",
            (trace_id,),
        ).fetchall()


def test_gateway_and_shop_spans_share_one_trace(clean_state: Backends, tmp_path: Path) -> None:
    env = {"DATABASE_URL": clean_state.database_url, "REDIS_URL": clean_state.redis_url}
    shop_port, gateway_port = free_port(), free_port()
    shop_env = {**env}
    gateway_env = {**env, "SHOP_URL": f"http://127.0.0.1:{shop_port}"}
    trace_id = secrets.token_hex(16)
    traceparent = f"00-{trace_id}-{secrets.token_hex(8)}-01"

    with (
        service_process("shop", shop_port, shop_env, tmp_path),
        service_process("gateway", gateway_port, gateway_env, tmp_path) as gateway,
    ):
        # /upstreams is for operators (permissive mode believes the claimed role).
        operator = {"X-User-Id": "oncall", "X-User-Roles": "ops"}
        response = httpx.get(
            f"{gateway}/upstreams", headers={"traceparent": traceparent, **operator}
        )
        assert response.status_code == 200
        assert response.headers["x-trace-id"] == trace_id
        shop = next(u for u in response.json()["upstreams"] if u["name"] == "shop")
        assert shop["status"] == "ok"

        deadline = time.monotonic() + 10
        rows = spans_of(clean_state.database_url, trace_id)
        while {"gateway", "shop"} - {r[0] for r in rows} and time.monotonic() < deadline:
            time.sleep(0.2)
            rows = spans_of(clean_state.database_url, trace_id)

    services = {r[0] for r in rows}
    assert {"gateway", "shop"} <= services, rows
    # The shop's server span hangs under the gateway's outbound HTTP span.
    span_ids = {r[3]: r for r in rows}
    shop_server = next(r for r in rows if r[0] == "shop" and r[1].endswith("/healthz"))
    parent = span_ids[shop_server[2]]
    assert parent[0] == "gateway"
