"""GET /traces: recent traces with filters, keyset pages, the read rule of /traces/{id},
validated parameters, and a listing query that stays on an index."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy.dialects import postgresql

from gateway.traces.repository import TraceFilter, root_query
from reach_common.db import libpq_url
from tests.conftest import Backends, KeyMaker, app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.upstream import Upstream

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OPS = {"X-User-Id": "oncall", "X-User-Roles": "ops"}


@dataclass
class Span:
    service: str
    name: str
    ms: float
    at_ms: float = 0.0
    parent: int | None = None  # index of the parent in the trace's list
    status: str = "unset"
    attributes: dict[str, Any] = field(default_factory=dict)


def insert_trace(database_url: str, start: datetime, spans: list[Span]) -> str:
    """One trace's spans as the span exporter writes them; returns the trace id."""
    trace_id = secrets.token_hex(16)
    ids = [secrets.token_hex(8) for _ in spans]
    rows = [
        (
            trace_id,
            ids[i],
            ids[s.parent] if s.parent is not None else None,
            s.service,
            s.name,
            "server" if s.parent is None else "internal",
            start + timedelta(milliseconds=s.at_ms),
            start + timedelta(milliseconds=s.at_ms + s.ms),
            s.ms,
            s.status,
            None,
            json.dumps(s.attributes),
            "[]",
        )
        for i, s in enumerate(spans)
    ]
    with psycopg.connect(libpq_url(database_url)) as conn, conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO telemetry.spans VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
            "%s::jsonb, %s::jsonb)",
            rows,
        )
    return trace_id


def agent_turn(user: str | None, tool: str, ms: float = 120.0) -> list[Span]:
    who = {"enduser.id": user} if user else {}
    return [
        Span("agent", "POST /chat", ms, attributes={**who, "http.route": "/chat"}),
        Span("agent", "agent.tool", ms - 20, 10, 0, attributes={"tool.id": tool}),
        Span("gateway", f"POST /tools/{tool}/invoke", ms - 30, 15, 1, attributes=who),
        Span("gateway", "gateway.execute", ms - 50, 25, 2, attributes={"tool.id": tool}),
        Span("shop", "GET /api/inventory/{sku}", ms - 70, 35, 3),
    ]


def routed_failure(user: str, tool: str, ms: float) -> list[Span]:
    return [
        Span("gateway", "POST /run", ms, attributes={"enduser.id": user, "http.route": "/run"}),
        Span("gateway", "gateway.route", 2, 1, 0, attributes={"route.tool_id": tool}),
        Span(
            "gateway",
            "gateway.execute",
            ms - 5,
            4,
            0,
            status="error",
            attributes={"tool.id": tool, "error.reason": "tool_timeout"},
        ),
    ]


@dataclass
class Seeded:
    alice_turn: str
    bob_failure: str
    alice_invoke: str
    anonymous: str
    joined: str


@pytest.fixture
def seeded(clean_state: Backends) -> Seeded:
    db = clean_state.database_url
    alice_turn = insert_trace(db, T0, agent_turn("alice", "inventory_query", 120))
    bob_failure = insert_trace(
        db, T0 + timedelta(seconds=1), routed_failure("bob", "sales_query", 40)
    )
    invoke = [
        Span("gateway", "POST /tools/order_query/invoke", 5, attributes={"enduser.id": "alice"})
    ]
    alice_invoke = insert_trace(db, T0 + timedelta(seconds=2), invoke)
    anonymous = insert_trace(db, T0 + timedelta(seconds=3), agent_turn(None, "inventory_query", 60))
    # Alice's trace id, continued by mallory through a traceparent: readable by neither.
    joined_spans = agent_turn("alice", "inventory_query", 80)
    joined_spans[2].attributes["enduser.id"] = "mallory"
    joined = insert_trace(db, T0 + timedelta(seconds=4), joined_spans)
    # The viewer's own reads are not traces anyone wants listed.
    viewer = {"enduser.id": "oncall", "http.route": "/ui/traces"}
    insert_trace(
        db, T0 + timedelta(seconds=5), [Span("gateway", "GET /ui/traces", 3, attributes=viewer)]
    )
    reads = {"enduser.id": "oncall", "http.route": "/traces/{trace_id}"}
    insert_trace(
        db, T0 + timedelta(seconds=6), [Span("gateway", "GET /traces/x", 3, attributes=reads)]
    )
    return Seeded(alice_turn, bob_failure, alice_invoke, anonymous, joined)


async def ids(client: httpx.AsyncClient, headers: dict[str, str], **params: Any) -> list[str]:
    response = await client.get("/traces", params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [t["trace_id"] for t in response.json()["traces"]]


async def test_filters_combine_and_list_newest_first(
    make_gateway: GatewayFactory, seeded: Seeded
) -> None:
    s = seeded
    async with app_client(make_gateway()) as client:
        every = await ids(client, OPS)
        by_service = await ids(client, OPS, service="shop")
        by_tool = await ids(client, OPS, tool="sales_query")
        by_tool_and_caller = await ids(client, OPS, tool="inventory_query", caller="alice")
        by_caller = await ids(client, OPS, caller="alice")
        failed = await ids(client, OPS, status="error")
        fine = await ids(client, OPS, status="ok")
        slow = await ids(client, OPS, min_duration_ms=100)
        nothing = await ids(client, OPS, tool="inventory_query", status="error")
        body = (await client.get("/traces", params={"limit": 100}, headers=OPS)).json()
    assert every == [s.joined, s.anonymous, s.alice_invoke, s.bob_failure, s.alice_turn]
    assert by_service == [s.joined, s.anonymous, s.alice_turn]
    assert by_tool == [s.bob_failure]  # a route decision and an execute name it
    assert by_tool_and_caller == [s.joined, s.alice_turn]
    assert by_caller == [s.joined, s.alice_invoke, s.alice_turn]
    assert failed == [s.bob_failure]
    assert fine == [s.joined, s.anonymous, s.alice_invoke, s.alice_turn]
    assert slow == [s.alice_turn]
    assert nothing == []
    turn = next(t for t in body["traces"] if t["trace_id"] == s.alice_turn)
    assert turn == {
        "trace_id": s.alice_turn,
        "started_at": "2026-11-30T12:00:00Z",
        "duration_ms": 120.0,
        "root_service": "agent",
        "root_name": "POST /chat",
        "status": "ok",
        "services": ["agent", "gateway", "shop"],
        "span_count": 5,
        "tools": ["inventory_query"],
        "callers": ["alice"],
    }
    failure = next(t for t in body["traces"] if t["trace_id"] == s.bob_failure)
    assert failure["status"] == "error"
    assert body["next_cursor"] is None


async def test_pages_follow_the_cursor_without_gaps_or_repeats(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    db = clean_state.database_url
    made = []
    for i in range(23):
        # Pairs share a start time: the cursor must break ties by trace id.
        start = T0 + timedelta(milliseconds=(i // 2) * 7)
        made.append((start, insert_trace(db, start, agent_turn("alice", "inventory_query"))))
    expected = [t for _, t in sorted(made, key=lambda m: (m[0], m[1]), reverse=True)]
    pages: list[list[str]] = []
    cursor = None
    async with app_client(make_gateway()) as client:
        while True:
            params: dict[str, Any] = {"limit": 10, **({"cursor": cursor} if cursor else {})}
            body = (await client.get("/traces", params=params, headers=OPS)).json()
            pages.append([t["trace_id"] for t in body["traces"]])
            cursor = body["next_cursor"]
            if cursor is None:
                break
    assert [len(p) for p in pages] == [10, 10, 3]
    assert [t for page in pages for t in page] == expected


async def test_a_caller_lists_only_traces_entirely_theirs(
    make_gateway: GatewayFactory, seeded: Seeded
) -> None:
    s = seeded
    alice = {"X-User-Id": "alice"}
    async with app_client(make_gateway()) as client:
        mine = await ids(client, alice)
        asked_for_bob = await ids(client, alice, caller="bob")
        bobs = await ids(client, {"X-User-Id": "bob"})
        anonymous = await client.get("/traces")
        registry_admin = await ids(client, ADMIN)
    assert mine == [s.alice_invoke, s.alice_turn]  # not the trace mallory joined
    assert asked_for_bob == []
    assert bobs == [s.bob_failure]
    assert_error(anonymous, 401, "unauthenticated")
    assert len(registry_admin) == 5


async def test_strict_mode_believes_only_verified_credentials(
    make_gateway: GatewayFactory, seeded: Seeded, make_key: KeyMaker
) -> None:
    s = seeded
    alice = {"Authorization": f"Bearer {await make_key('alice', ['viewer'])}"}
    ops = {"Authorization": f"Bearer {await make_key('oncall', ['ops'])}"}
    async with app_client(make_gateway(auth_mode="strict")) as client:
        mine = await ids(client, alice)
        every = await ids(client, ops)
        claimed = await client.get("/traces", headers=OPS)  # headers claim ops; no credential
        forged = await client.get("/traces", headers={"Authorization": "Bearer rk_0_nope"})
    assert mine == [s.alice_invoke, s.alice_turn]
    assert len(every) == 5
    assert_error(claimed, 401, "unauthenticated")
    assert_error(forged, 401, "invalid_credential")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "query.limit"),
        ({"limit": 101}, "query.limit"),
        ({"limit": "ten"}, "query.limit"),
        ({"status": "slow"}, "query.status"),
        ({"min_duration_ms": -1}, "query.min_duration_ms"),
        ({"min_duration_ms": "nan"}, "query.min_duration_ms"),
        ({"service": ""}, "query.service"),
        ({"tool": "x" * 201}, "query.tool"),
        ({"sort": "oldest"}, "query.sort"),
        ({"cursor": "1.2"}, "cursor"),
        ({"cursor": "9" * 19 + "." + "a" * 32}, "cursor"),
        ({"cursor": "' OR 1=1 --"}, "cursor"),
    ],
)
async def test_bad_parameters_are_422_naming_the_field(
    make_gateway: GatewayFactory, clean_state: Backends, params: dict[str, Any], field: str
) -> None:
    async with app_client(make_gateway()) as client:
        response = await client.get("/traces", params=params, headers=OPS)
    body = assert_error(response, 422, "invalid_request")
    assert field in [e["field"] for e in body["errors"]], body


async def test_a_real_invoke_is_listed_under_its_tool(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    schema = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    url = f"http://localhost:{upstream.port}/api/inventory/{{sku}}"
    manifest = http_tool("listed", url, input_schema=schema)
    caller = {"user_id": "carol", "roles": []}
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        invoked = await client.post(
            "/tools/listed/invoke", json={"arguments": {"sku": "SKU1"}, "user_context": caller}
        )
        listed = (
            await client.get("/traces", params={"tool": "listed"}, headers={"X-User-Id": "carol"})
        ).json()
        # Reading the list is not itself listed.
        again = (await client.get("/traces", params={"limit": 100}, headers=OPS)).json()
    trace_id = invoked.json()["trace_id"]
    (row,) = listed["traces"]
    assert row["trace_id"] == trace_id
    assert row["root_name"] == "POST /tools/{tool_id}/invoke"
    assert row["tools"] == ["listed"]
    assert row["callers"] == ["carol"]
    assert row["status"] == "ok"
    roots = {t["trace_id"]: t["root_name"] for t in again["traces"]}
    assert roots[trace_id] == "POST /tools/{tool_id}/invoke"
    assert "GET /traces" not in roots.values()


def test_the_listing_query_walks_the_root_index(clean_state: Backends) -> None:
    """~10k spans (500 agent turns): a filtered page reads roots through
    ``ix_spans_root_start`` and each trace through the primary key, never a full scan."""
    rows = []
    for i in range(500):
        trace_id = secrets.token_hex(16)
        start = T0 + timedelta(seconds=i)
        ids_ = [secrets.token_hex(8) for _ in range(20)]
        for j in range(20):
            attributes = {"enduser.id": f"user{i % 7}", "tool.id": f"tool{i % 5}"}
            rows.append(
                (
                    trace_id,
                    ids_[j],
                    ids_[j - 1] if j else None,
                    ["agent", "gateway", "shop"][j % 3],
                    f"span{j}",
                    "internal",
                    start,
                    start + timedelta(milliseconds=20 - j),
                    float(20 - j),
                    "unset",
                    None,
                    json.dumps(attributes),
                    "[]",
                )
            )
    query = root_query(TraceFilter(owner="user3", tool="tool2", min_duration_ms=1.0), 21)
    sql = str(query.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    with psycopg.connect(libpq_url(clean_state.database_url), autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO telemetry.spans VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                "%s::jsonb, %s::jsonb)",
                rows,
            )
        conn.execute("ANALYZE telemetry.spans")
        (count,) = conn.execute("SELECT count(*) FROM telemetry.spans").fetchone() or (0,)
        plan = json.dumps(conn.execute(f"EXPLAIN (FORMAT JSON) {sql}").fetchone())
    assert count == 10_000
    assert "ix_spans_root_start" in plan, plan
    assert "Seq Scan" not in plan, plan
