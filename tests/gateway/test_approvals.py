"""Approval as an execution state: ask, see, decide, run once, expire, stay bound.

The gateway runs in process on the real Postgres and Redis; the tools are a loopback
upstream (so every call that reached it is counted) and python tools.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import psycopg

from reach_common.db import libpq_url
from tests.conftest import Backends, KeyMaker, app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool, python_tool
from tests.gateway.test_traces import walk
from tests.gateway.upstream import Upstream

ALICE = {"X-User-Id": "alice", "X-User-Roles": "clerk"}  # asks
BOSS = {"X-User-Id": "boss", "X-User-Roles": "admin"}  # approves
CAROL = {"X-User-Id": "carol", "X-User-Roles": "clerk"}  # neither
ORDER_SCHEMA = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
    "required": ["sku", "quantity"],
}
ORDER = {"sku": "SKU2024001", "quantity": 2}


def guarded_order(
    upstream: Upstream, tool_id: str = "guarded_order", **overrides: Any
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "input_schema": ORDER_SCHEMA,
        "endpoint": {"type": "http", "method": "POST", "url": upstream.url + "/api/orders"},
        "permission": "user",
        "idempotent": False,
        "requires_approval": True,
    }
    return http_tool(tool_id, upstream.url + "/api/orders", **{**fields, **overrides})


async def ask(client: Any, tool_id: str, arguments: dict[str, Any], **extra: Any) -> Any:
    """Alice calls the tool (permissive mode: the identity is claimed in the body)."""
    body = {"arguments": arguments, "user_context": {"user_id": "alice", "roles": ["clerk"]}}
    return await client.post(f"/tools/{tool_id}/invoke", json={**body, **extra})


def audit_rows(backends: Backends, approval_id: str) -> list[tuple[str, str | None, str | None]]:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        return conn.execute(
            "SELECT status, actor, caller FROM gateway.invocation WHERE approval_id = %s "
            "ORDER BY id",
            (approval_id,),
        ).fetchall()


async def test_a_call_that_needs_approval_waits_then_runs_once_when_approved(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        pending = await ask(client, "guarded_order", ORDER)
        approval_id = pending.json()["approval_id"]
        mine = await client.get(f"/approvals/{approval_id}", headers=ALICE)
        stranger = await client.get(f"/approvals/{approval_id}", headers=CAROL)
        listed = {
            who: (await client.get("/approvals", headers=headers)).json()["approvals"]
            for who, headers in (("alice", ALICE), ("boss", BOSS), ("carol", CAROL))
        }
        filtered = [
            len((await client.get(f"/approvals?{query}", headers=BOSS)).json()["approvals"])
            for query in (
                "state=pending&tool_id=guarded_order&caller=alice",
                "state=denied",
                "caller=carol",
                "tool_id=other",
            )
        ]
        by_carol = await client.post(f"/approvals/{approval_id}/approve", headers=CAROL)
        by_alice = await client.post(f"/approvals/{approval_id}/approve", headers=ALICE)
        approved = await client.post(
            f"/approvals/{approval_id}/approve", json={"comment": "ok, restock"}, headers=BOSS
        )
        again = await client.post(f"/approvals/{approval_id}/approve", headers=BOSS)
        redeemed = await ask(client, "guarded_order", ORDER, approval_id=approval_id)
        await app.state.runtime.audit.flush()
        trace = await client.get(f"/traces/{pending.json()['trace_id']}", headers=ADMIN)

    assert pending.status_code == 202, pending.text
    body = pending.json()
    assert (body["reason"], body["success"], body["approval_state"]) == (
        "approval_pending",
        False,
        "pending",
    )
    assert body["status_url"] == f"/approvals/{approval_id}"
    assert body["message"]
    assert body["expires_at"]
    assert upstream.hits("/api/orders") == 1  # one call, after the approval
    assert mine.json()["state"] == "pending"
    assert mine.json()["reason"].startswith("Tool 'guarded_order' requires a person's approval")
    assert_error(stranger, 404, "approval_not_found")
    assert [a["approval_id"] for a in listed["alice"]] == [approval_id]
    assert [a["approval_id"] for a in listed["boss"]] == [approval_id]
    assert listed["carol"] == []
    assert filtered == [1, 0, 0, 0]
    assert_error(by_carol, 404, "approval_not_found")  # not hers to see
    assert_error(by_alice, 403, "approver_role_required")  # hers, but she is no approver
    assert approved.status_code == 200, approved.text
    read = approved.json()
    assert (read["state"], read["decided_by"], read["comment"]) == (
        "succeeded",
        "boss",
        "ok, restock",
    )
    assert read["result"]["success"] is True
    assert read["result"]["output"] == {"ok": True}
    assert [(e["from_state"], e["to_state"], e["actor"]) for e in read["events"]] == [
        (None, "pending", "alice"),
        ("pending", "approved", "boss"),
        ("approved", "running", "gateway"),
        ("running", "succeeded", "gateway"),
    ]
    assert_error(again, 409, "approval_not_pending")
    assert redeemed.status_code == 200
    assert redeemed.json()["output"] == {"ok": True}
    # The tool's idempotency key is the approval id: a replay cannot act twice downstream.
    assert upstream.received[0].headers["idempotency-key"] == approval_id
    assert audit_rows(clean_state, approval_id) == [
        ("pending", "alice", "alice"),
        ("approved", "boss", "alice"),
        ("running", "gateway", "alice"),
        ("succeeded", "gateway", "alice"),
    ]
    spans = walk(trace.json()["spans"])
    moves = [s["attributes"]["approval.state"] for s in spans if s["name"] == "gateway.approval"]
    assert moves == ["pending", "approved", "running", "succeeded"]
    assert any(s["name"] == "gateway.execute" for s in spans)  # the run joined the trace


async def test_self_approval_needs_the_manifest_flag(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    boss_asks = {"user_context": {"user_id": "boss", "roles": ["admin"]}}
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        lenient = guarded_order(upstream, "lenient_order", allow_self_approval=True)
        await client.post("/tools/register", json=lenient, headers=ADMIN)
        strict_one = await client.post(
            "/tools/guarded_order/invoke", json={"arguments": ORDER, **boss_asks}
        )
        lenient_one = await client.post(
            "/tools/lenient_order/invoke", json={"arguments": ORDER, **boss_asks}
        )
        refused = await client.post(
            f"/approvals/{strict_one.json()['approval_id']}/approve", headers=BOSS
        )
        allowed = await client.post(
            f"/approvals/{lenient_one.json()['approval_id']}/approve", headers=BOSS
        )
    assert_error(refused, 403, "self_approval_forbidden")
    assert allowed.json()["state"] == "succeeded"


async def test_manifest_approvers_decide_who_may_approve(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    manifest = guarded_order(upstream, approvers=["finance"])
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        pending = await ask(client, "guarded_order", ORDER)
        approval_id = pending.json()["approval_id"]
        by_admin = await client.post(f"/approvals/{approval_id}/deny", headers=BOSS)
        denied = await client.post(
            f"/approvals/{approval_id}/deny",
            json={"comment": "over budget"},
            headers={"X-User-Id": "fin", "X-User-Roles": "finance"},
        )
        redeemed = await ask(client, "guarded_order", ORDER, approval_id=approval_id)
    assert_error(by_admin, 404, "approval_not_found")  # not theirs to see
    assert denied.status_code == 200
    assert (denied.json()["state"], denied.json()["decided_by"]) == ("denied", "fin")
    assert_error(redeemed, 403, "approval_denied")
    assert "over budget" in redeemed.json()["message"]
    assert upstream.hits("/api/orders") == 0


async def test_a_pending_request_past_its_expiry_is_expired_and_cannot_be_approved(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    app = make_gateway(approval_ttl_s=600)
    async with app_client(app) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        first = (await ask(client, "guarded_order", ORDER)).json()["approval_id"]
        second = (await ask(client, "guarded_order", ORDER)).json()["approval_id"]
        runner = app.state.runtime.approvals.runner
        real_clock = runner.clock
        runner.clock = lambda: real_clock() + timedelta(seconds=601)  # the test moves time
        late = await client.post(f"/approvals/{first}/approve", headers=BOSS)
        read = await client.get(f"/approvals/{first}", headers=ALICE)
        await runner.sweep()  # the sweeper expires what nobody looks at
        swept = await client.get(f"/approvals/{second}", headers=BOSS)
        late_too = await client.post(f"/approvals/{second}/approve", headers=BOSS)
        await app.state.runtime.audit.flush()
    assert_error(late, 409, "approval_expired")
    assert read.json()["state"] == "expired"
    assert [(e["to_state"], e["actor"]) for e in read.json()["events"]][-1] == (
        "expired",
        "gateway",
    )
    assert swept.json()["state"] == "expired"
    assert_error(late_too, 409, "approval_expired")
    assert upstream.hits("/api/orders") == 0
    assert audit_rows(clean_state, first)[-1] == ("expired", "gateway", "alice")


async def test_an_approval_covers_one_call_with_its_arguments_only(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        await client.post(
            "/tools/register", json=guarded_order(upstream, "other_order"), headers=ADMIN
        )
        approval_id = (await ask(client, "guarded_order", ORDER)).json()["approval_id"]
        approved = await client.post(f"/approvals/{approval_id}/approve", headers=BOSS)
        changed = await ask(
            client, "guarded_order", {**ORDER, "quantity": 200}, approval_id=approval_id
        )
        other_tool = await ask(client, "other_order", ORDER, approval_id=approval_id)
        mallory = {"user_id": "mallory", "roles": ["clerk"]}
        not_mine = await ask(
            client, "guarded_order", ORDER, approval_id=approval_id, user_context=mallory
        )
    assert approved.json()["state"] == "succeeded"
    body = assert_error(changed, 409, "approval_arguments_changed")
    assert body["error"]["approved_arguments"] == ORDER
    assert_error(other_tool, 409, "approval_tool_mismatch")
    assert_error(not_mine, 404, "approval_not_found")
    assert upstream.hits("/api/orders") == 1  # only the approved call ever ran


async def test_an_approval_does_not_cover_the_tool_after_its_manifest_changed(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        approval_id = (await ask(client, "guarded_order", ORDER)).json()["approval_id"]
        edited = guarded_order(upstream, description="Now sends the order to a new supplier.")
        put = await client.put("/tools/guarded_order", json=edited, headers=ADMIN)
        redeemed = await ask(client, "guarded_order", ORDER, approval_id=approval_id)
        approved = await client.post(f"/approvals/{approval_id}/approve", headers=BOSS)
        read = await client.get(f"/approvals/{approval_id}", headers=ALICE)
    assert put.status_code == 200
    assert_error(redeemed, 409, "approval_manifest_changed")
    body = assert_error(approved, 409, "approval_manifest_changed")
    assert "Nothing was run" in body["message"]
    assert read.json()["state"] == "failed"
    assert read.json()["result"]["reason"] == "approval_manifest_changed"
    assert upstream.hits("/api/orders") == 0


async def test_an_approver_who_edits_the_arguments_creates_a_new_request(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        old_id = (await ask(client, "guarded_order", ORDER)).json()["approval_id"]
        bad_edit = await client.post(
            f"/approvals/{old_id}/approve", json={"arguments": {"sku": 5}}, headers=BOSS
        )
        edited = await client.post(
            f"/approvals/{old_id}/approve",
            json={"arguments": {**ORDER, "quantity": 1}, "comment": "one is enough"},
            headers=BOSS,
        )
        new_id = edited.json()["approval_id"]
        old = await client.get(f"/approvals/{old_id}", headers=ALICE)
        approved = await client.post(f"/approvals/{new_id}/approve", headers=BOSS)
    assert_error(bad_edit, 422, "invalid_arguments")
    assert edited.status_code == 201, edited.text
    assert (edited.json()["state"], edited.json()["replaces"]) == ("pending", old_id)
    assert edited.json()["caller"] == "alice"  # still alice's call, bound to her
    assert edited.json()["arguments"] == {**ORDER, "quantity": 1}
    assert old.json()["state"] == "denied"
    assert f"replaced by {new_id}" in old.json()["events"][-1]["comment"]
    assert approved.json()["state"] == "succeeded"
    assert upstream.received[0].json() == {**ORDER, "quantity": 1}


async def test_arguments_are_redacted_for_people_and_intact_for_the_tool(
    make_gateway: GatewayFactory,
) -> None:
    schema = {"type": "object", "properties": {"note": {}, "api_token": {}}}
    manifest = python_tool("guarded_echo", "echo", input_schema=schema, requires_approval=True)
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        arguments = {"note": "hi", "api_token": "s3cret"}
        pending = await ask(client, "guarded_echo", arguments)
        approval_id = pending.json()["approval_id"]
        approved = await client.post(f"/approvals/{approval_id}/approve", headers=BOSS)
    assert pending.json()["arguments"] == {"note": "hi", "api_token": "[REDACTED]"}
    assert approved.json()["arguments"] == {"note": "hi", "api_token": "[REDACTED]"}
    assert approved.json()["result"]["output"] == {"echo": arguments}


async def test_turning_approvals_off_runs_such_tools_at_once(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    async with app_client(make_gateway(approvals_enabled=False)) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        answer = await ask(client, "guarded_order", ORDER)
    assert answer.status_code == 200
    assert upstream.hits("/api/orders") == 1


async def test_bad_input_gets_a_reason_never_a_500(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        approval_id = (await ask(client, "guarded_order", ORDER)).json()["approval_id"]
        answers = {
            "unknown": await client.get("/approvals/" + "0" * 32, headers=BOSS),
            "too_long": await client.get("/approvals/" + "a" * 65, headers=BOSS),
            "bad_state": await client.get("/approvals?state=maybe", headers=BOSS),
            "bad_limit": await client.get("/approvals?limit=0", headers=BOSS),
            "not_json": await client.post(
                f"/approvals/{approval_id}/approve",
                content=b"{nope",
                headers={**BOSS, "Content-Type": "application/json"},
            ),
            "extra_field": await client.post(
                f"/approvals/{approval_id}/deny", json={"verdict": "no"}, headers=BOSS
            ),
            "long_comment": await client.post(
                f"/approvals/{approval_id}/deny", json={"comment": "x" * 2001}, headers=BOSS
            ),
            "anonymous": await client.post(f"/approvals/{approval_id}/approve"),
            "anonymous_ask": await client.post(
                "/tools/guarded_order/invoke", json={"arguments": ORDER}
            ),
            "bad_mode": await ask(client, "guarded_order", ORDER, mode="later"),
        }
    expected = {
        "unknown": (404, "approval_not_found"),
        "too_long": (422, "invalid_request"),
        "bad_state": (422, "invalid_request"),
        "bad_limit": (422, "invalid_request"),
        "not_json": (400, "malformed_json"),
        "extra_field": (422, "invalid_request"),
        "long_comment": (422, "invalid_request"),
        "anonymous": (401, "unauthenticated"),
        "anonymous_ask": (404, "tool_not_found"),  # a `user` tool is hidden from anonymous
        "bad_mode": (422, "invalid_request"),
    }
    for name, (status, reason) in expected.items():
        assert (answers[name].status_code, answers[name].json()["reason"]) == (status, reason), name
    assert upstream.hits() == 0


async def test_a_public_tool_needing_approval_refuses_anonymous_callers(
    make_gateway: GatewayFactory,
) -> None:
    manifest = python_tool("guarded_echo", "echo", requires_approval=True)
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        answer = await client.post("/tools/guarded_echo/invoke", json={"arguments": {}})
    body = assert_error(answer, 403, "approval_required")
    assert "bound to the caller" in body["message"]


def orphan(backends: Backends, approval_id: str, state: str) -> None:
    """What a replica that died leaves: ``approved`` and never started, or ``running``
    with its lease run out (the tool may or may not have acted)."""
    with psycopg.connect(libpq_url(backends.database_url), autocommit=True) as conn:
        conn.execute(
            "UPDATE gateway.approval SET state = %s, decided_by = 'boss', "
            "decided_at = now() - interval '1 minute', attempts = %s, "
            "lease_expires_at = now() - interval '1 second' WHERE approval_id = %s",
            (state, 1 if state == "running" else 0, approval_id),
        )


async def test_calls_left_by_a_dead_replica_resume_or_end_outcome_unknown(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    put = {"type": "http", "method": "PUT", "url": upstream.url + "/api/stock"}
    idempotent = guarded_order(upstream, "restock", endpoint=put, idempotent=True)
    app = make_gateway()
    async with app_client(app) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        await client.post("/tools/register", json=idempotent, headers=ADMIN)
        ids = {
            name: (await ask(client, tool, ORDER)).json()["approval_id"]
            for name, tool in (
                ("unknown", "guarded_order"),
                ("resumed", "restock"),
                ("unstarted", "guarded_order"),
            )
        }
        orphan(clean_state, ids["unknown"], "running")
        orphan(clean_state, ids["resumed"], "running")
        orphan(clean_state, ids["unstarted"], "approved")
        runner = app.state.runtime.approvals.runner
        await asyncio.gather(runner.sweep(), runner.sweep())  # two replicas sweep at once
        await runner.sweep()
        read = {
            name: (await client.get(f"/approvals/{i}", headers=BOSS)).json()
            for name, i in ids.items()
        }
    unknown, resumed, unstarted = read["unknown"], read["resumed"], read["unstarted"]
    assert (unknown["state"], unknown["result"]["reason"]) == ("failed", "outcome_unknown")
    assert unknown["attempts"] == 1  # never started again
    assert (resumed["state"], resumed["attempts"]) == ("succeeded", 2)
    assert [(e["from_state"], e["to_state"]) for e in resumed["events"]][-2:] == [
        ("running", "running"),
        ("running", "succeeded"),
    ]
    assert resumed["events"][-2]["comment"].startswith("resumed")
    assert (unstarted["state"], unstarted["attempts"]) == ("succeeded", 1)
    # The non-idempotent orphan never reached the tool again; the others ran once each.
    assert upstream.hits("/api/stock") == 1
    assert upstream.hits("/api/orders") == 1


async def test_strict_mode_decides_on_verified_identities_only(
    make_gateway: GatewayFactory, upstream: Upstream, make_key: KeyMaker
) -> None:
    alice_key = await make_key("alice", ["clerk"])
    boss_key = await make_key("boss", ["admin"])
    as_alice = {"Authorization": f"Bearer {alice_key}"}
    as_boss = {"Authorization": f"Bearer {boss_key}"}
    strict = make_gateway(auth_mode="strict", egress_allowlist=["127.0.0.1"])
    async with app_client(strict) as client:
        registered = await client.post(
            "/tools/register", json=guarded_order(upstream), headers=as_boss
        )
        pending = await client.post(
            "/tools/guarded_order/invoke",
            json={"arguments": ORDER, "user_context": {"user_id": "boss", "roles": ["admin"]}},
            headers=as_alice,  # the body's claimed identity is ignored: this is alice's call
        )
        approval_id = pending.json()["approval_id"]
        claimed = await client.post(f"/approvals/{approval_id}/approve", headers=BOSS)
        by_alice = await client.post(f"/approvals/{approval_id}/approve", headers=as_alice)
        approved = await client.post(f"/approvals/{approval_id}/approve", headers=as_boss)
    assert registered.status_code == 201, registered.text
    assert pending.status_code == 202, pending.text
    assert_error(claimed, 401, "unauthenticated")  # a claimed admin role approves nothing
    assert_error(by_alice, 403, "approver_role_required")
    assert (approved.json()["state"], approved.json()["caller"]) == ("succeeded", "alice")
    assert approved.json()["decided_by"] == "boss"
    assert upstream.hits("/api/orders") == 1


async def test_parallel_calls_are_approved_together_each_bound_to_its_own_arguments(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        first, second = await asyncio.gather(
            ask(client, "guarded_order", ORDER),
            ask(client, "guarded_order", {**ORDER, "quantity": 7}),
        )
        ids = [first.json()["approval_id"], second.json()["approval_id"]]
        by_alice = await client.post(
            "/approvals/approve", json={"approval_ids": ids}, headers=ALICE
        )
        together = await client.post(
            "/approvals/approve",
            json={"approval_ids": [*ids, ids[0], "no-such-request"], "comment": "both fine"},
            headers=BOSS,
        )
        reused = await ask(client, "guarded_order", ORDER, approval_id=ids[1])
        empty = await client.post("/approvals/approve", json={"approval_ids": []}, headers=BOSS)
        too_many = await client.post(
            "/approvals/approve", json={"approval_ids": ["x"] * 21}, headers=BOSS
        )

    refused = by_alice.json()["results"]
    assert [r["error"]["reason"] for r in refused] == ["approver_role_required"] * 2
    results = {r["approval_id"]: r for r in together.json()["results"]}
    assert together.status_code == 200
    assert len(results) == 3  # a repeated id is approved once
    for approval_id in ids:
        assert results[approval_id]["status_code"] == 200
        assert results[approval_id]["approval"]["state"] == "succeeded"
        assert results[approval_id]["approval"]["comment"] == "both fine"
    assert results["no-such-request"]["status_code"] == 404
    assert results["no-such-request"]["error"]["reason"] == "approval_not_found"
    assert upstream.hits("/api/orders") == 2  # each call once
    # Approved together, still bound apart: the second approval does not cover the first call.
    assert_error(reused, 409, "approval_arguments_changed")
    assert_error(empty, 422, "invalid_request")
    assert_error(too_many, 422, "invalid_request")


async def test_a_decision_postgres_cannot_store_is_422_and_leaves_the_request_pending(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    """A NUL in the comment, an approval id or edited arguments, or half a surrogate pair,
    reached the INSERT and answered 500."""
    raw = {"Content-Type": "application/json", **BOSS}
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=guarded_order(upstream), headers=ADMIN)
        approval_id = (await ask(client, "guarded_order", ORDER)).json()["approval_id"]
        answers = [
            await client.post(f"/approvals/{approval_id}/approve", content=body, headers=raw)
            for body in (
                '{"comment": "ok\\u0000"}',
                '{"arguments": {"sku": "SKU\\ud800", "quantity": 1}}',
            )
        ]
        batch = await client.post(
            "/approvals/approve", content='{"approval_ids": ["a\\u0000"]}', headers=raw
        )
        read = await client.get(f"/approvals/{approval_id}", headers=BOSS)
    for answer in [*answers, batch]:
        assert_error(answer, 422, "invalid_request")
    assert read.json()["state"] == "pending"
    assert upstream.hits("/api/orders") == 0
