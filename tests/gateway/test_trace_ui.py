"""The trace viewer's pages in process: sign-in, the read rule, escaping, headers.

The browser test (tests/e2e/test_trace_viewer.py) drives the same pages in Chromium
against real processes; these tests pin each rule on its own.
"""

from __future__ import annotations

from datetime import timedelta

import httpx
import psycopg

from reach_common.db import libpq_url
from tests.conftest import Backends, KeyMaker, app_client
from tests.gateway.conftest import GatewayFactory
from tests.gateway.test_trace_list import T0, Span, agent_turn, insert_trace

SAME_ORIGIN = {"Origin": "http://localhost"}


async def sign_in(client: httpx.AsyncClient, **form: str) -> httpx.Response:
    return await client.post("/ui/login", data=form, headers=SAME_ORIGIN)


async def test_anonymous_sees_a_sign_in_page_and_no_trace(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    trace_id = insert_trace(clean_state.database_url, T0, agent_turn("alice", "inventory_query"))
    async with app_client(make_gateway(auth_mode="strict")) as client:
        listing = await client.get("/ui/traces")
        one = await client.get(f"/ui/traces/{trace_id}")
        claimed = await client.get(
            "/ui/traces", headers={"X-User-Id": "alice", "X-User-Roles": "ops"}
        )
    for page in (listing, one, claimed):
        assert page.status_code == 401
        assert 'action="/ui/login"' in page.text
        assert trace_id not in page.text
        assert "inventory_query" not in page.text
    # Strict mode offers no claimed identity on the form.
    assert 'name="user_id"' not in listing.text


async def test_a_signed_in_caller_sees_their_traces_and_only_theirs(
    make_gateway: GatewayFactory, clean_state: Backends, make_key: KeyMaker
) -> None:
    db = clean_state.database_url
    mine = insert_trace(db, T0, agent_turn("alice", "inventory_query"))
    theirs = insert_trace(db, T0 + timedelta(seconds=1), agent_turn("bob", "inventory_query"))
    key = await make_key("alice", ["viewer"])
    async with app_client(make_gateway(auth_mode="strict")) as client:
        wrong = await sign_in(client, credential="rk_0123_not-a-key")
        signed = await sign_in(client, credential=key)
        cookie = signed.headers["set-cookie"]
        listing = await client.get("/ui/traces")
        own = await client.get(f"/ui/traces/{mine}")
        other = await client.get(f"/ui/traces/{theirs}")
        # The cookie is the viewer's only: the JSON API does not take it.
        api = await client.get(
            "/traces", headers={"Cookie": f"reach_ui={client.cookies['reach_ui']}"}
        )
        await client.post("/ui/logout", headers=SAME_ORIGIN)
        after = await client.get("/ui/traces")
    assert wrong.status_code == 401
    assert "unknown or revoked" in wrong.text
    assert signed.status_code == 303
    assert key not in cookie  # a random token, never the key
    assert "HttpOnly" in cookie
    assert "Path=/ui" in cookie
    assert "SameSite=lax" in cookie
    assert listing.status_code == 200
    assert f"/ui/traces/{mine}" in listing.text
    assert theirs not in listing.text
    assert own.status_code == 200
    assert 'data-service="shop"' in own.text
    assert other.status_code == 404
    assert theirs not in other.text
    assert api.status_code == 401
    assert after.status_code == 401


async def test_span_attributes_are_shown_as_text(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    evil = '<script>alert("x")</script>'
    spans = agent_turn("alice", "inventory_query")
    spans[1].attributes["tool.arguments"] = evil
    spans[3].attributes['"><img src=x onerror=alert(1)>'] = evil
    spans[4].name = "<b>bold</b>"
    spans[4].status = "error"
    trace_id = insert_trace(clean_state.database_url, T0, spans)
    async with app_client(make_gateway()) as client:
        await sign_in(client, user_id="alice")  # permissive mode: a claimed identity
        page = await client.get(f"/ui/traces/{trace_id}")
    assert page.status_code == 200
    assert "<script>alert" not in page.text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page.text
    assert "<img" not in page.text
    assert "<b>bold" not in page.text
    assert "&lt;b&gt;bold&lt;/b&gt;" in page.text
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert page.headers["cache-control"] == "no-store"
    # The failed span is highlighted and opened.
    assert '<details class="span error"' in page.text


async def test_a_revoked_key_ends_its_session(
    make_gateway: GatewayFactory, clean_state: Backends, make_key: KeyMaker
) -> None:
    key = await make_key("alice", ["ops"])
    async with app_client(make_gateway(auth_mode="strict")) as client:
        await sign_in(client, credential=key)
        before = await client.get("/ui/traces")
        with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
            conn.execute("UPDATE auth.api_key SET revoked_at = now()")
        after = await client.get("/ui/traces")
    assert before.status_code == 200
    assert after.status_code == 401


async def test_a_claimed_session_is_void_once_the_gateway_is_strict(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    async with app_client(make_gateway()) as permissive:
        await sign_in(permissive, user_id="oncall", roles="ops")
        token = permissive.cookies["reach_ui"]
        allowed = await permissive.get("/ui/traces")
    async with app_client(make_gateway(auth_mode="strict")) as strict:
        refused = await strict.get("/ui/traces", headers={"Cookie": f"reach_ui={token}"})
        claimed = await sign_in(strict, user_id="oncall", roles="ops")
    assert allowed.status_code == 200
    assert refused.status_code == 401
    assert claimed.status_code == 401


async def test_sign_in_from_another_site_is_refused(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    async with app_client(make_gateway()) as client:
        foreign = await client.post(
            "/ui/login", data={"user_id": "mallory"}, headers={"Origin": "https://evil.example"}
        )
        fetched = await client.post(
            "/ui/login", data={"user_id": "mallory"}, headers={"Sec-Fetch-Site": "cross-site"}
        )
    assert foreign.status_code == 403
    assert fetched.status_code == 403
    assert "reach_ui" not in client.cookies


async def test_list_page_filters_pages_and_explains_bad_input(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    db = clean_state.database_url
    made = [
        insert_trace(db, T0 + timedelta(seconds=i), agent_turn("alice", f"tool_{i % 2}"))
        for i in range(5)
    ]
    insert_trace(db, T0, [Span("gateway", "POST /run", 3, attributes={"enduser.id": "bob"})])
    async with app_client(make_gateway()) as client:
        await sign_in(client, user_id="oncall", roles="ops")
        first = await client.get(
            "/ui/traces", params={"tool": "tool_0", "limit": "2", "service": ""}
        )
        older = first.text.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0]
        second = await client.get(older.replace("&amp;", "&"))
        bad = await client.get("/ui/traces", params={"limit": "1000", "caller": "<x>"})
        css = await client.get("/ui/static/viewer.css")
        js = await client.get("/ui/static/viewer.js")
        other = await client.get("/ui/static/..%2Fhtml.py")
    assert first.status_code == 200
    assert [t in first.text for t in made] == [False, False, True, False, True]
    assert 'value="tool_0"' in first.text  # the filter is shown back
    assert [t in second.text for t in made] == [True, False, False, False, False]
    assert bad.status_code == 422
    assert "limit" in bad.text
    assert 'value="&lt;x&gt;"' in bad.text
    assert "<x>" not in bad.text
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    assert js.status_code == 200
    assert "DOMContentLoaded" in js.text
    assert other.status_code == 404
