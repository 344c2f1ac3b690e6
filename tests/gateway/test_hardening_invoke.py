"""Arguments and outputs no JSON answer (or audit row) can carry get a JSON error, never a
500, and one audit row the database refuses never costs other rows theirs.

- NaN, Infinity, 1e999 (Python's ``json`` reads them), NUL and lone surrogates in
  arguments, and arguments nested deeper than 64 levels: 422 ``invalid_arguments``
  before anything runs, and the refused call is audited (a cleaned preview).
- A ``tool_id`` path segment longer than the audit column: 422 at the HTTP layer.
- The audit writer retries a refused batch row by row; a row still refused is stored as
  a placeholder (``arguments: {"_unstorable": true}``).
- An upstream's JSON with NaN/Infinity, lone surrogate escapes or too deep nesting is
  passed on as text, like any body that is not JSON; a success whose numbers overflow
  (``1e999``) is 502 ``tool_error``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import psycopg
import pytest
from mcp.types import CallToolResult, TextContent

from gateway.audit.redaction import redact
from gateway.audit.writer import AuditRow, AuditWriter
from gateway.executor.errors import ToolFailed
from gateway.executor.mcp import _output
from reach_common.db import create_engine, libpq_url
from tests.conftest import Backends, app_client, assert_error
from tests.gateway.conftest import GatewayFactory, http_tool, python_tool
from tests.gateway.upstream import Reply, Upstream

JSON = {"content-type": "application/json"}


def audit_rows(backends: Backends) -> list[tuple[str, str, str | None, Any]]:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        return conn.execute(
            "SELECT tool_id, status, reason, arguments FROM gateway.invocation ORDER BY id"
        ).fetchall()


async def post_raw(client: Any, tool_id: str, raw: str) -> Any:
    return await client.post(f"/tools/{tool_id}/invoke", content=raw, headers=JSON)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
async def test_non_finite_numbers_are_refused_before_the_tool_runs(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends, literal: str
) -> None:
    app = make_gateway(egress_allowlist=["127.0.0.1"])
    async with app_client(app) as client:
        rt = app.state.runtime
        await rt.registry_service.register(http_tool("t1", upstream.url + "/x"))
        raw = f'{{"arguments": {{"n": {{"deep": [1, {literal}]}}}}}}'
        sync = await post_raw(client, "t1", raw)
        queued = await post_raw(client, "t1", raw[:-1] + ', "mode": "async"}')
        missing = await post_raw(client, "missing", raw)
        await rt.audit.flush()
    body = assert_error(sync, 422, "invalid_arguments")
    assert "n.deep.1" in body["message"]
    assert "finite" in body["message"]
    assert_error(queued, 422, "invalid_arguments")
    assert_error(missing, 404, "tool_not_found")  # the preview shows it as text
    assert upstream.hits("/x") == 0
    rows = audit_rows(clean_state)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("t1", "refused", "invalid_arguments"),
        ("t1", "refused", "invalid_arguments"),
        ("missing", "refused", "tool_not_found"),
    ]


async def test_a_tool_needing_approval_refuses_non_finite_arguments_before_asking(
    make_gateway: GatewayFactory,
) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(
            python_tool("guarded_echo", "echo", requires_approval=True)
        )
        r = await post_raw(client, "guarded_echo", '{"arguments": {"n": NaN}}')
        pending = await client.get("/approvals")
    assert_error(r, 422, "invalid_arguments")
    assert pending.status_code < 500
    assert "NaN" not in pending.text


@pytest.mark.parametrize(
    "arguments",
    [{"q": "x\u0000y"}, {"k\u0000": 1}, {"q": "\ud800"}, {"q": ["ok", {"k\udfff": 1}]}],
    ids=["nul_value", "nul_key", "lone_surrogate", "surrogate_key"],
)
async def test_text_the_audit_log_or_an_answer_cannot_carry_is_refused(
    make_gateway: GatewayFactory,
    upstream: Upstream,
    clean_state: Backends,
    arguments: dict[str, Any],
) -> None:
    app = make_gateway(egress_allowlist=["127.0.0.1"])
    raw = json.dumps({"arguments": arguments})  # ensure_ascii: sent as \u escapes
    async with app_client(app) as client:
        rt = app.state.runtime
        await rt.registry_service.register(http_tool("t1", upstream.url + "/x"))
        r = await post_raw(client, "t1", raw)
        await rt.audit.flush()
    body = assert_error(r, 422, "invalid_arguments")
    assert "NUL" in body["message"]
    assert upstream.hits("/x") == 0
    (row,) = audit_rows(clean_state)  # the refused call left its row
    assert row[:3] == ("t1", "refused", "invalid_arguments")
    assert "\ufffd" in json.dumps(row[3], ensure_ascii=False)  # cleaned, not dropped


@pytest.mark.parametrize("depth", [65, 700, 5000])
async def test_deeply_nested_arguments_are_refused_not_a_500(
    make_gateway: GatewayFactory, upstream: Upstream, depth: int
) -> None:
    app = make_gateway(egress_allowlist=["127.0.0.1"])
    nested = "[" * depth + "]" * depth
    raw = '{"arguments": {"a": ' + nested + "}}"
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(http_tool("t1", upstream.url + "/x"))
        known = await post_raw(client, "t1", raw)
        unknown = await post_raw(client, "nonexistent", raw)
        fine = await post_raw(client, "t1", '{"arguments": {"a": ' + "[" * 63 + "]" * 63 + "}}")
    if depth < 1000:  # deeper still, the request body itself is refused
        body = assert_error(known, 422, "invalid_arguments")
        assert "deeper than 64" in body["message"]
        assert_error(unknown, 404, "tool_not_found")
    assert known.status_code < 500
    assert unknown.status_code < 500
    assert fine.status_code == 200, fine.text
    assert upstream.hits("/x") == 1


def test_redaction_never_exhausts_the_stack() -> None:
    value: Any = "secret"
    for _ in range(20_000):
        value = {"v": [value]}
    shown = redact({"top": value, "password": "p"})
    assert shown["password"] == "[REDACTED]"
    assert "[TOO DEEP]" in json.dumps(shown)


@pytest.mark.parametrize(
    ("description", "hidden"),
    [
        ("新密码，4-6位数字；留空则随机生成", True),  # a gate's new code
        ("PIN of the gift card", True),
        ("The card's CVV", True),
        ("One-time passcode from the SMS", True),
        ("Promo code, e.g. WINTER26", False),
        ("Pin the note to the top of the board", True),  # a word read as a PIN: shown safe
        ("Postcode of the delivery", False),
    ],
)
def test_a_value_its_description_calls_secret_is_redacted(description: str, hidden: bool) -> None:
    schema = {"properties": {"code": {"type": "string", "description": description}}}
    shown = redact({"code": "2468", "rental_id": "RA-090112"}, schema)
    assert shown["rental_id"] == "RA-090112"
    assert (shown["code"] == "[REDACTED]") is hidden


async def test_a_call_with_poisoned_arguments_costs_no_other_audit_row(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    """Three calls in one audit batch: the one with a NUL is refused and audited, and the
    other two rows are written too."""
    app = make_gateway(egress_allowlist=["127.0.0.1"], audit_flush_ms=60_000)
    async with app_client(app) as client:
        rt = app.state.runtime
        await rt.registry_service.register(http_tool("t1", upstream.url + "/x"))
        first = await client.post("/tools/t1/invoke", json={"arguments": {}})
        bad = await client.post("/tools/t1/invoke", json={"arguments": {"q": "x\u0000y"}})
        second = await client.post("/tools/t1/invoke", json={"arguments": {}})
        await rt.audit.flush()
    assert (first.status_code, bad.status_code, second.status_code) == (200, 422, 200)
    assert [r[1] for r in audit_rows(clean_state)] == ["succeeded", "refused", "succeeded"]


async def test_a_tool_id_longer_than_the_audit_column_is_refused_at_the_door(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    long_id = "a" * 201
    app = make_gateway(egress_allowlist=["127.0.0.1"], audit_flush_ms=60_000)
    async with app_client(app) as client:
        rt = app.state.runtime
        await rt.registry_service.register(http_tool("t1", upstream.url + "/x"))
        first = await client.post("/tools/t1/invoke", json={"arguments": {}})
        bad = await client.post(f"/tools/{long_id}/invoke", json={"arguments": {}})
        second = await client.post("/tools/t1/invoke", json={"arguments": {}})
        others = [
            await client.get(f"/tools/{long_id}"),
            await client.get(f"/tools/{long_id}/history"),
            await client.delete(f"/tools/{long_id}"),
        ]
        await rt.audit.flush()
    assert (first.status_code, second.status_code) == (200, 200)
    for r in [bad, *others]:
        assert r.status_code == 422, r.text[:300]
        assert r.json()["reason"]
        assert r.json()["message"]
    # The refused request never reached a tool (like a malformed body): no row, and the
    # two calls in its batch kept theirs.
    assert [r[1] for r in audit_rows(clean_state)] == ["succeeded", "succeeded"]


def row(tool_id: str, **fields: Any) -> AuditRow:
    return AuditRow(
        trace_id=None,
        tool_id=tool_id,
        caller=fields.pop("caller", "alice"),
        auth_via="api_key",
        status="succeeded",
        reason=None,
        http_status=200,
        latency_ms=1.0,
        **fields,
    )


async def test_one_row_the_database_refuses_costs_no_other_row(clean_state: Backends) -> None:
    """Bad rows in one batch: each is stored as a placeholder, the good ones as they are."""
    engine = create_engine(clean_state.database_url, pool_size=2)
    writer = AuditWriter(engine, batch_size=100, queue_size=100, flush_ms=60_000)
    batch = [
        row("good1", arguments={"q": 1}),
        row("x" * 300),  # longer than the column
        row("nul", arguments={"q": "a\u0000b"}),  # JSONB refuses \u0000
        row("nan", arguments={"n": math.nan}),  # JSONB refuses NaN
        row("nul_caller", caller="a\u0000"),  # text refuses NUL
        row("good2", arguments={"q": 2}),
    ]
    try:
        for r in batch:
            await writer.record(r)
        await writer.flush()
    finally:
        await engine.dispose()
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        written = conn.execute(
            "SELECT tool_id, caller, arguments FROM gateway.invocation ORDER BY id"
        ).fetchall()
    assert writer.written == 6
    assert writer.queue_depth == 0
    assert written == [
        ("good1", "alice", {"q": 1}),
        ("x" * 200, "alice", {"_unstorable": True}),
        ("nul", "alice", {"_unstorable": True}),
        ("nan", "alice", {"_unstorable": True}),
        ("nul_caller", "a\ufffd", {"_unstorable": True}),
        ("good2", "alice", {"q": 2}),
    ]


# What an upstream answers (manifests name servers the gateway does not control).
TEXT_BODIES = {
    "nan": b'{"v": NaN}',
    "infinity": b'{"v": [1, -Infinity]}',
    "lone_surrogate": b'{"v": "\\ud800"}',
    "deep": b"[" * 40_000 + b"]" * 40_000,
    "mid_deep": b"[" * 800 + b"]" * 800,
    "just_too_deep": b"[" * 101 + b"]" * 101,
}


@pytest.mark.parametrize("kind", sorted(TEXT_BODIES))
async def test_upstream_json_no_answer_can_carry_is_passed_on_as_text(
    make_gateway: GatewayFactory, upstream: Upstream, kind: str
) -> None:
    body = TEXT_BODIES[kind]
    upstream.default = Reply(body=body, headers={"Content-Type": "application/json"})
    app = make_gateway(egress_allowlist=["127.0.0.1"])
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(http_tool("t1", upstream.url + "/x"))
        r = await client.post("/tools/t1/invoke", json={"arguments": {}})
    assert r.status_code == 200, r.text[:300]
    assert r.json()["output"] == body.decode()  # as a body that is not JSON


async def test_an_upstream_answer_whose_numbers_overflow_is_a_tool_error(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    upstream.script = [
        Reply(body=b'{"v": 1e999}', headers={"Content-Type": "application/json"}),
        Reply(status=400, body=b'{"message": 1e999}', headers={"Content-Type": "application/json"}),
    ]
    app = make_gateway(egress_allowlist=["127.0.0.1"])
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(http_tool("t1", upstream.url + "/x"))
        ok = await client.post("/tools/t1/invoke", json={"arguments": {}})
        failed = await client.post("/tools/t1/invoke", json={"arguments": {}})
    body = assert_error(ok, 502, "tool_error")
    assert "cannot be sent as JSON" in body["message"]
    body = assert_error(failed, 502, "tool_error")
    assert body["error"]["upstream"] == '{"message": 1e999}'  # the error body as text


def _spec() -> Any:
    class Spec:
        tool_id = "m1"
        max_response_bytes = 1_000_000

    return Spec()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"v": NaN}', '{"v": NaN}'),
        ("[" * 5000 + "]" * 5000, "[" * 5000 + "]" * 5000),
        ('{"v": 1}', {"v": 1}),
    ],
    ids=["nan", "deep", "json"],
)
def test_mcp_text_output_no_answer_can_carry_stays_text(text: str, expected: Any) -> None:
    result = CallToolResult(content=[TextContent(type="text", text=text)])
    assert _output(_spec(), result) == expected


def test_mcp_structured_output_with_nan_is_a_tool_error() -> None:
    result = CallToolResult(content=[], structuredContent={"v": math.nan})
    with pytest.raises(ToolFailed, match="cannot be sent as JSON"):
        _output(_spec(), result)


@pytest.mark.parametrize("field", ["approval_id", "callback_url"])
@pytest.mark.parametrize("text", ["a\\u0000b", "a\\ud800"])
async def test_call_options_postgres_cannot_store_are_refused(
    make_gateway: GatewayFactory, upstream: Upstream, field: str, text: str
) -> None:
    """An approval id or callback URL holding NUL or half a surrogate pair reached the
    approvals query: a 500."""
    app = make_gateway(egress_allowlist=["127.0.0.1"])
    async with app_client(app) as client:
        await app.state.runtime.registry_service.register(http_tool("t1", upstream.url + "/x"))
        r = await post_raw(client, "t1", f'{{"arguments": {{}}, "{field}": "{text}"}}')
    assert_error(r, 422, "invalid_request")
    assert upstream.hits("/x") == 0
