"""Tool outputs are scanned for text aimed at the model: a hit is recorded on the call's
span and its audit row, and the output still reaches the caller (a signal for operators,
not a refusal). Ordinary outputs raise nothing."""

from __future__ import annotations

from typing import Any

import psycopg

from reach_common.db import libpq_url
from tests.conftest import Backends, app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.test_traces import walk
from tests.gateway.test_untrusted_text import INJECTIONS, ORDINARY_OUTPUTS
from tests.gateway.upstream import Reply, Upstream


def audited_flags(backends: Backends) -> list[list[str]]:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        rows = conn.execute("SELECT flags FROM gateway.invocation ORDER BY id").fetchall()
    return [list(row[0]) for row in rows]


def span_flags(trace: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for span in walk(trace["spans"]):
        found.extend(span["attributes"].get("tool.untrusted_flags", []))
    return found


async def test_injections_in_outputs_are_flagged_on_the_span_and_the_audit_row(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    outputs = [{"sku": "SKU2024001", "note": text} for text, _ in INJECTIONS[:10]]
    upstream.script = [Reply(body=body) for body in outputs]
    async with app_client(make_gateway()) as client:
        registered = await client.post(
            "/tools/register", json=http_tool("notes", upstream.url + "/notes"), headers=ADMIN
        )
        assert registered.status_code == 201, registered.text
        answers = [
            await client.post("/tools/notes/invoke", json={"arguments": {}}) for _ in outputs
        ]
        traces = [
            (await client.get(f"/traces/{a.json()['trace_id']}", headers=ADMIN)).json()
            for a in answers
        ]
    for answer, sent in zip(answers, outputs, strict=True):
        assert answer.status_code == 200, answer.text
        assert answer.json()["output"] == sent  # flagged, not withheld
    expected = [flag for _, flag in INJECTIONS[:10]]
    rows = audited_flags(clean_state)
    assert len(rows) == 10
    for flag, row, trace in zip(expected, rows, traces, strict=True):
        assert flag in row, (flag, row)
        assert flag in span_flags(trace), (flag, trace)


async def test_ordinary_outputs_raise_no_flag(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    upstream.script = [Reply(body=body) for body in ORDINARY_OUTPUTS]
    async with app_client(make_gateway()) as client:
        await client.post(
            "/tools/register", json=http_tool("plain", upstream.url + "/plain"), headers=ADMIN
        )
        answers = [
            await client.post("/tools/plain/invoke", json={"arguments": {}})
            for _ in ORDINARY_OUTPUTS
        ]
        trace = await client.get(f"/traces/{answers[0].json()['trace_id']}", headers=ADMIN)
    assert all(a.status_code == 200 for a in answers)
    assert audited_flags(clean_state) == [[]] * len(ORDINARY_OUTPUTS)
    assert span_flags(trace.json()) == []


async def test_injections_in_descriptions_are_flagged_on_the_span_and_the_history_row(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    async with app_client(make_gateway()) as client:
        for n, (text, flag) in enumerate(INJECTIONS[:10]):
            tool = http_tool(f"described_{n}", upstream.url + "/x", description=f"Stock. {text}")
            registered = await client.post("/tools/register", json=tool, headers=ADMIN)
            assert registered.status_code == 201, registered.text  # flagged, not refused
            assert flag in registered.json()["flags"]
            trace_id = registered.headers["x-trace-id"]
            trace = (await client.get(f"/traces/{trace_id}", headers=ADMIN)).json()
            shown = [
                f
                for span in walk(trace["spans"])
                for f in span["attributes"].get("tool.description_flags", [])
            ]
            assert flag in shown, (flag, trace)
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        rows = conn.execute(
            "SELECT flags FROM gateway.tool_history WHERE tool_id LIKE 'described_%'"
        ).fetchall()
    assert len(rows) == 10
    assert all(row[0] for row in rows)
