"""The trace viewer in a real browser: headless Chromium (Debian's, driven by Playwright)
against shop, gateway and agent running as processes in strict mode.

An agent turn calls a tool; the viewer, signed in with the caller's API key, lists it
under that tool, and its waterfall shows the agent, gateway and shop spans nested as
they were recorded, with bars whose widths and offsets follow the durations in the
span store. A screenshot of the waterfall is saved under the test's temp dir.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from reach_common.db import libpq_url
from reach_common.stack import mint_key
from tests.conftest import REPO_ROOT, Backends
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOLERANCE = 0.01  # of the track's width: sub-pixel rounding and the 0.15 % minimum bar


def api_key(database_url: str, user_id: str, roles: list[str]) -> str:
    return mint_key(database_url, user_id, roles)


def recorded_spans(database_url: str, trace_id: str) -> dict[str, dict[str, Any]]:
    """The trace as the span store has it, once every service's spans are in (batched
    off the request path: wait until the three services are there and the count holds)."""
    deadline = time.monotonic() + 15
    previous = -1
    while True:
        with psycopg.connect(libpq_url(database_url)) as conn:
            rows = conn.execute(
                "SELECT span_id, parent_span_id, service, name, start_time, end_time, "
                "duration_ms FROM telemetry.spans WHERE trace_id = %s",
                (trace_id,),
            ).fetchall()
        fields = ("span_id", "parent", "service", "name", "start", "end", "ms")
        spans = {r[0]: dict(zip(fields, r, strict=True)) for r in rows}
        complete = {"agent", "gateway", "shop"} <= {s["service"] for s in spans.values()}
        if (complete and len(spans) == previous) or time.monotonic() > deadline:
            return spans
        previous = len(spans) if complete else -1
        time.sleep(0.8)


def ancestors(spans: dict[str, dict[str, Any]], span_id: str) -> list[str]:
    chain = []
    parent = spans[span_id]["parent"]
    while parent in spans:
        chain.append(parent)
        parent = spans[parent]["parent"]
    return chain


@pytest.fixture
def browser() -> Any:
    if CHROMIUM is None:
        pytest.skip("no chromium binary on PATH (Debian: apt-get install chromium; .ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def agent_turns(agent: str, key: str) -> tuple[str, str]:
    """Two turns of one session: a stock lookup, then the SKU's sales."""
    headers = {"Authorization": f"Bearer {key}"}
    trace_ids = []
    for message in ("SKU2024001 还有多少库存", "那这个 SKU 最近卖得怎么样"):
        reply = httpx.post(
            f"{agent}/chat",
            json={"session_id": "sess_viewer", "message": message},
            headers=headers,
            timeout=30,
        )
        assert reply.status_code == 200, reply.text
        trace_ids.append(reply.json()["trace_id"])
    return trace_ids[0], trace_ids[1]


def test_the_waterfall_of_an_agent_turn_in_chromium(
    clean_state: Backends, tmp_path: Path, browser: Any
) -> None:
    db = clean_state.database_url
    key = api_key(db, "alice", ["ops_admin"])
    env = {
        "DATABASE_URL": db,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
        "AUTH_MODE": "strict",
    }
    shop_port, gateway_port, agent_port = free_port(), free_port(), free_port()
    gateway_env = {
        **env,
        "SHOP_URL": f"http://127.0.0.1:{shop_port}",
        "TOOL_AUTO_DISCOVERY": "true",
        "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
        "EGRESS_ALLOWLIST": "127.0.0.1",
        "CALLER_RATE_LIMIT": "",
        "ROUTE_RATE_LIMIT": "",
    }
    with (
        service_process("shop", shop_port, env, tmp_path),
        service_process("gateway", gateway_port, gateway_env, tmp_path) as gateway,
        service_process("agent", agent_port, {**env, "GATEWAY_URL": gateway}, tmp_path) as agent,
    ):
        stock_trace, sales_trace = agent_turns(agent, key)
        spans = recorded_spans(db, stock_trace)
        recorded_spans(db, sales_trace)
        page = browser.new_context(viewport={"width": 1500, "height": 1000}).new_page()
        shown = browse(page, gateway, key, stock_trace, sales_trace, tmp_path)
        listed = httpx.get(
            f"{gateway}/traces",
            params={"tool": "inventory_query"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        )
    check_waterfall(spans, shown)
    # The JSON list says what the page showed.
    assert listed.status_code == 200, listed.text
    print(listed.text)
    (row,) = listed.json()["traces"]
    assert row["trace_id"] == stock_trace
    assert (row["root_service"], row["root_name"]) == ("agent", "POST /chat")
    assert row["services"] == ["agent", "gateway", "shop"]
    assert row["callers"] == ["alice"]
    assert row["span_count"] == len(spans)


def browse(
    page: Any, gateway: str, key: str, stock_trace: str, sales_trace: str, tmp_path: Path
) -> dict[str, Any]:
    # Anonymous: a sign-in form, no trace at all.
    anonymous = page.goto(f"{gateway}/ui/traces")
    assert anonymous.status == 401
    assert page.locator("table.traces tr[data-trace-id]").count() == 0
    assert stock_trace not in page.content()

    page.fill("input[name=credential]", key)
    page.click("button[type=submit]")
    page.wait_for_load_state()
    assert page.url == f"{gateway}/ui/traces", page.inner_text("main")
    listed = page.locator("table.traces tr[data-trace-id]")
    assert {listed.nth(i).get_attribute("data-trace-id") for i in range(listed.count())} >= {
        stock_trace,
        sales_trace,
    }

    page.fill("input[name=tool]", "inventory_query")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/ui/traces?*tool=inventory_query*")
    rows = page.locator("table.traces tr[data-trace-id]")
    assert [rows.nth(i).get_attribute("data-trace-id") for i in range(rows.count())] == [
        stock_trace
    ]
    assert "inventory_query" in rows.first.inner_text()

    rows.first.locator("a.trace-link").click()
    page.wait_for_url(f"{gateway}/ui/traces/{stock_trace}")
    route = page.locator("section.route")
    assert "inventory_query" in route.inner_text()
    assert route.locator("table.candidates tbody tr").count() >= 1

    shown: dict[str, Any] = {}
    for row in page.locator("details.span").all():
        track = row.locator("svg.track").bounding_box()
        bar = row.locator("rect.bar").bounding_box()
        shown[row.get_attribute("data-span-id")] = {
            "depth": int(row.get_attribute("data-depth")),
            "service": row.get_attribute("data-service"),
            "track": track,
            "bar": bar,
        }
    # A click shows the span's attributes, as text.
    execute = page.locator("details.span", has_text="gateway.execute").first
    execute.locator("summary").click()
    assert "tool.id" in execute.locator("table.attrs").inner_text()
    assert "inventory_query" in execute.locator("table.attrs").inner_text()
    page.screenshot(path=str(tmp_path / "trace-viewer.png"), full_page=True)
    assert (tmp_path / "trace-viewer.png").stat().st_size > 10_000
    return shown


def check_waterfall(spans: dict[str, dict[str, Any]], shown: dict[str, Any]) -> None:
    assert set(shown) == set(spans)  # every recorded span has a row
    root = next(s for s in spans.values() if s["parent"] is None)
    gateway = next(
        s for s in spans.values() if s["service"] == "gateway" and s["name"] == "POST /run"
    )
    shop = next(
        s
        for s in spans.values()
        if s["service"] == "shop" and spans.get(s["parent"], {}).get("service") == "gateway"
    )
    assert root["service"] == "agent"
    # Nesting: shop under gateway under agent, in the data and on the page.
    assert root["span_id"] in ancestors(spans, gateway["span_id"])
    assert gateway["span_id"] in ancestors(spans, shop["span_id"])
    depth = {k: shown[s["span_id"]]["depth"] for k, s in (("a", root), ("g", gateway), ("s", shop))}
    assert depth["a"] == 0
    assert depth["a"] < depth["g"] < depth["s"]
    slack = 0.04 * shown[root["span_id"]]["bar"]["width"]
    for outer, inner in ((root, gateway), (gateway, shop)):
        o, i = shown[outer["span_id"]]["bar"], shown[inner["span_id"]]["bar"]
        assert o["x"] - 1 <= i["x"]
        # A server's span ends after its last byte is sent; its caller may read that byte
        # and end its own span before the server's loop runs again (seen on a loaded
        # machine: 25 ms, 2% of the trace). Starts are causal; an end may overhang a little.
        assert i["x"] + i["width"] <= o["x"] + o["width"] + 1 + slack
    # Scale: each bar's width and offset are its duration and start over the trace's.
    start = min(s["start"] for s in spans.values())
    total_ms = (max(s["end"] for s in spans.values()) - start).total_seconds() * 1000
    for span in spans.values():
        track, bar = shown[span["span_id"]]["track"], shown[span["span_id"]]["bar"]
        width = bar["width"] / track["width"]
        offset = (bar["x"] - track["x"]) / track["width"]
        expected_offset = (span["start"] - start).total_seconds() * 1000 / total_ms
        assert abs(width - span["ms"] / total_ms) <= TOLERANCE, (span["name"], width)
        assert abs(offset - expected_offset) <= TOLERANCE, (span["name"], offset)
    # And relative to each other: the gateway's share of the agent's turn, the shop's of it.
    for outer, inner in ((root, gateway), (gateway, shop)):
        ratio = shown[inner["span_id"]]["bar"]["width"] / shown[outer["span_id"]]["bar"]["width"]
        assert abs(ratio - inner["ms"] / outer["ms"]) <= 0.03, (inner["name"], ratio)
