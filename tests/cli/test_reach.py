"""``reach`` against a real gateway: tables and ``--json`` parsed back, and the server's
``reason`` with a non-zero exit code on failure."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from reach_cli.main import app
from reach_common.embeddings import Embedder
from retriever.app import create_app as create_retriever_app
from retriever.settings import Settings as RetrieverSettings
from tests.agent.servers import ServerThread
from tests.agent.tap import GatewayTap
from tests.conftest import REPO_ROOT, Backends

runner = CliRunner()
OPS = ["--user", "u1", "--roles", "ops_admin"]
BOSS = ["--user", "boss", "--roles", "admin"]


@pytest.fixture
def gateway_overrides() -> dict[str, Any]:
    return {"approvals_enabled": True, "otel_span_store": True}


def reach(gateway: GatewayTap, *args: str, who: list[str] = OPS) -> tuple[int, Any]:
    result = runner.invoke(app, ["--url", gateway.url, *who, "--json", *args])
    try:
        return result.exit_code, json.loads(result.stdout)
    except ValueError:
        return result.exit_code, result.stdout


def test_run_tools_and_invoke_print_the_servers_json(gateway: GatewayTap) -> None:
    code, routed = reach(gateway, "run", "SKU2024001 还有多少库存")
    assert code == 0
    assert routed["tool_id"] == "inventory_query"
    assert routed["output"]["available"] == 156
    code, tools = reach(gateway, "tools", "ls")
    assert code == 0
    assert "inventory_query" in {t["tool_id"] for t in tools["tools"]}
    code, shown = reach(gateway, "tools", "show", "sales_query")
    assert code == 0
    assert shown["tool_id"] == "sales_query"
    code, called = reach(gateway, "invoke", "inventory_query", "sku=SKU2024001")
    assert code == 0
    assert called["output"]["total"] == 168
    code, anonymous = reach(gateway, "invoke", "inventory_query", "sku=SKU2024001", who=[])
    assert code == 0
    assert anonymous["output"]["total"] == 168


def test_tools_for_a_request_are_ranked_best_first(gateway: GatewayTap) -> None:
    code, ranked = reach(
        gateway, "tools", "ls", "--for", "how is SKU2024001 selling", "--limit", "2"
    )
    assert code == 0
    assert ranked["tools"][0]["tool_id"] == "sales_query"
    assert len(ranked["tools"]) <= 2
    lone = runner.invoke(app, ["--url", gateway.url, "tools", "ls", "--limit", "2"])
    assert lone.exit_code == 2
    assert "--for" in lone.stdout + lone.stderr


def test_a_table_for_people(gateway: GatewayTap) -> None:
    result = runner.invoke(app, ["--url", gateway.url, *OPS, "tools", "ls"])
    assert result.exit_code == 0
    assert "inventory_query" in result.stdout
    assert "┃" in result.stdout or "|" in result.stdout  # a drawn table, not JSON


def test_failures_exit_non_zero_with_the_servers_reason(gateway: GatewayTap) -> None:
    code, body = reach(gateway, "invoke", "inventory_query", "sku=not-a-sku")
    assert code == 1
    assert body["reason"] == "invalid_arguments"
    code, body = reach(gateway, "tools", "show", "no_such_tool")
    assert code == 1
    assert body["reason"] == "tool_not_found"
    bad = runner.invoke(app, ["--url", gateway.url, "invoke", "inventory_query", "novalue"])
    assert bad.exit_code == 2
    down = runner.invoke(app, ["--url", "http://127.0.0.1:9", "--json", "tools", "ls"])
    assert down.exit_code == 2
    assert json.loads(down.stdout)["reason"] == "unreachable"


def test_approvals_are_listed_approved_and_denied(gateway: GatewayTap) -> None:
    order = ["invoke", "order_create", "sku=SKU2024001", "quantity=2"]
    code, first = reach(gateway, *order, "customer=Ada Lovelace")
    assert code == 0
    assert first["reason"] == "approval_pending"
    code, second = reach(gateway, *order, "customer=Grace Hopper")
    assert code == 0
    code, pending = reach(gateway, "approvals", "ls", "--state", "pending", who=BOSS)
    assert code == 0
    ids = {a["approval_id"] for a in pending["approvals"]}
    assert {first["approval_id"], second["approval_id"]} <= ids
    code, mine = reach(gateway, "approvals", "approve", first["approval_id"])
    assert code == 1  # the caller cannot approve their own call
    assert mine["reason"] in ("approver_role_required", "self_approval_forbidden")
    code, approved = reach(gateway, "approvals", "approve", first["approval_id"], who=BOSS)
    assert code == 0
    assert approved["state"] == "succeeded"
    code, denied = reach(
        gateway, "approvals", "deny", second["approval_id"], "--comment", "no", who=BOSS
    )
    assert code == 0
    assert denied["state"] == "denied"
    code, again = reach(gateway, "approvals", "approve", second["approval_id"], who=BOSS)
    assert code == 1
    assert again["reason"] == "approval_not_pending"
    code, third = reach(gateway, *order, "customer=Alan Turing")
    code, fourth = reach(gateway, *order, "customer=Edsger Dijkstra")
    both = [third["approval_id"], fourth["approval_id"]]
    code, together = reach(gateway, "approvals", "approve", *both, who=BOSS)
    assert code == 0
    assert [r["approval"]["state"] for r in together["results"]] == ["succeeded"] * 2
    code, mixed = reach(gateway, "approvals", "approve", both[0], "no-such", who=BOSS)
    assert code == 1  # one refused: the command says so
    assert {r["approval_id"]: r["status_code"] for r in mixed["results"]} == {
        both[0]: 409,
        "no-such": 404,
    }


def test_tools_are_registered_and_removed_by_admins_only(
    gateway: GatewayTap, tmp_path: Path
) -> None:
    manifest = json.loads((REPO_ROOT / "manifests" / "inventory_query.json").read_text("utf-8"))
    manifest["tool_id"] = manifest["name"] = "inventory_copy"
    path = tmp_path / "inventory_copy.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    code, refused = reach(gateway, "tools", "register", str(path))
    assert code == 1
    assert refused["reason"] == "insufficient_permission"
    code, registered = reach(gateway, "tools", "register", str(path), who=BOSS)
    assert code == 0, registered
    code, shown = reach(gateway, "tools", "show", "inventory_copy")
    assert code == 0
    assert shown["tool_id"] == "inventory_copy"
    code, _ = reach(gateway, "tools", "rm", "inventory_copy", who=BOSS)
    assert code == 0
    code, gone = reach(gateway, "tools", "show", "inventory_copy")
    assert code == 1
    assert gone["reason"] == "tool_not_found"
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert (
        runner.invoke(app, ["--url", gateway.url, "tools", "register", str(broken)]).exit_code == 2
    )


def test_a_trace_is_drawn_as_a_waterfall(gateway: GatewayTap) -> None:
    code, routed = reach(gateway, "run", "SKU2024001 还有多少库存")
    assert code == 0
    trace_id = routed["trace_id"]
    deadline = time.monotonic() + 20
    while True:  # spans reach the store in batches: wait for the call's own
        code, trace = reach(gateway, "trace", trace_id)
        names = json.dumps(trace)
        if (code == 0 and "gateway.execute" in names) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert code == 0, trace
    assert trace["trace_id"] == trace_id
    drawn = runner.invoke(app, ["--url", gateway.url, *OPS, "trace", trace_id])
    assert drawn.exit_code == 0
    rows = [line for line in drawn.stdout.splitlines() if "█" in line]
    assert len(rows) == trace["span_count"]  # a bar per span
    assert any("gateway.execute" in row for row in rows)
    assert any("gateway.route" in row for row in rows)  # the router writes to this app's store
    code, missing = reach(gateway, "trace", "0" * 32)
    assert code == 1
    assert missing["reason"] == "trace_not_found"


def test_traces_lists_recent_ones_and_keeps_the_slow(gateway: GatewayTap) -> None:
    code, fast = reach(gateway, "invoke", "inventory_query", "sku=SKU2024001")
    assert code == 0
    code, other = reach(gateway, "run", "SKU2024002 还有多少库存")
    assert code == 0
    wanted = {fast["trace_id"], other["trace_id"]}
    deadline = time.monotonic() + 20
    while True:  # spans reach the store in batches
        code, listed = reach(gateway, "traces")
        seen = {t["trace_id"]: t for t in listed.get("traces", [])} if code == 0 else {}
        if wanted <= set(seen) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert wanted <= set(seen), listed
    slower, quicker = sorted(wanted, key=lambda t: -seen[t]["duration_ms"])
    # A bar between the two (durations are listed rounded, so not one of them exactly).
    bar = (seen[slower]["duration_ms"] + seen[quicker]["duration_ms"]) / 2
    assert seen[quicker]["duration_ms"] < bar
    code, kept = reach(gateway, "traces", "--slow", str(bar))
    assert code == 0
    assert slower in {t["trace_id"] for t in kept["traces"]}
    assert quicker not in {t["trace_id"] for t in kept["traces"]}
    assert all(t["duration_ms"] >= bar for t in kept["traces"])
    code, by_tool = reach(gateway, "traces", "--tool", "inventory_query")
    assert {t["trace_id"] for t in by_tool["traces"]} == wanted  # both called it
    drawn = runner.invoke(app, ["--url", gateway.url, *OPS, "traces", "--slow", str(bar)])
    assert drawn.exit_code == 0
    assert slower in drawn.stdout
    assert quicker not in drawn.stdout
    code, refused = reach(gateway, "traces", "--status", "maybe")
    assert code == 1
    assert refused["reason"] == "invalid_request"


@pytest.fixture
def retriever(clean_state: Backends, embedder: Embedder) -> Iterator[str]:
    settings = RetrieverSettings(
        database_url=clean_state.database_url,
        redis_url=clean_state.redis_url,
        log_level="WARNING",
        llm_provider="offline",
        otel_span_store=False,
    )
    with ServerThread(create_retriever_app(settings, embedder=embedder)) as server:
        yield server.url


def test_ingest_a_folder_then_search_it(retriever: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    for n in range(12):
        (docs / ("sub" if n % 2 else "") / f"note-{n}.md").write_text(
            f"# Note {n}\n\nWarehouse {n} ships parcels on day {n} of the week.", "utf-8"
        )
    (docs / "image.png").write_bytes(b"\x89PNG not a document")
    writer = ["--retriever-url", retriever, "--user", "docs", "--roles", "retriever_writer"]
    first = runner.invoke(app, [*writer, "--json", "ingest", str(docs)])
    assert first.exit_code == 0, first.stdout
    body = json.loads(first.stdout)
    assert body["summary"] == {
        "files": 12,
        "outcomes": {"ingested": 12},
        "documents": 12,
        "chunks": 12,
    }
    again = runner.invoke(app, [*writer, "ingest", str(docs)])
    assert again.exit_code == 0
    assert "12 files: 12 unchanged; the retriever holds 12 documents, 12 chunks" in again.stdout
    found = runner.invoke(app, ["--retriever-url", retriever, "--json", "search", "day 7 parcels"])
    assert found.exit_code == 0
    assert json.loads(found.stdout)["chunks"][0]["source"].endswith("note-7.md")
    # Without the writer role every file is refused by the retriever: exit 1, each says why.
    reader = ["--retriever-url", retriever, "--user", "ann", "--roles", "viewer"]
    refused = runner.invoke(app, [*reader, "--json", "ingest", str(docs)])
    assert refused.exit_code == 1
    assert {r["reason"] for r in json.loads(refused.stdout)["results"]} == {
        "insufficient_permission"
    }


def run_in_terminal(argv: list[str], timeout_s: float = 120) -> tuple[int, str]:
    """``argv`` under a pseudo-terminal, as a person runs it: ``(exit code, what it drew)``."""
    main, child = pty.openpty()
    process = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, close_fds=True)
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.5)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(main)
    code = process.wait(timeout=10)
    return code, b"".join(chunks).decode("utf-8", "replace")


def test_ingest_of_200_files_draws_a_progress_bar_and_sums_up(
    retriever: str, tmp_path: Path
) -> None:
    docs = tmp_path / "many"
    docs.mkdir()
    for n in range(200):
        (docs / f"doc-{n:03d}.md").write_text(f"# Doc {n}\n\nItem {n} is stored in bin {n}.")
    reach_bin = Path(sys.executable).parent / "reach"
    code, screen = run_in_terminal(
        [
            str(reach_bin),
            "--retriever-url",
            retriever,
            "--user",
            "docs",
            "--roles",
            "retriever_writer",
            "ingest",
            str(docs),
        ]
    )
    assert code == 0, screen[-2000:]
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)  # colours and cursor moves
    assert "ingesting" in screen
    assert "━" in screen  # rich's bar, drawn because this is a terminal
    assert "100%" in screen
    assert screen.count("ingested  ") == 200  # a line per file
    status = httpx.get(f"{retriever}/status", headers={"X-User-Id": "docs"}, timeout=30).json()
    summary = f"200 files: 200 ingested; the retriever holds {status['documents']} documents"
    assert summary in " ".join(screen.split())
    assert status["documents"] == 200
