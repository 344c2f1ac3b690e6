"""The ``reach`` command: tables for people, ``--json`` for scripts.

    reach run "SKU2024001 还有多少库存"
    reach tools ls | show TOOL | register FILE | rm TOOL
    reach trace TRACE_ID
    reach search "…"  |  reach ingest PATH…   (the retriever: --retriever-url)
    reach invoke TOOL key=value ...
    reach approvals ls [--state pending] | show ID | approve ID | deny ID [--comment …]

Global options (or environment): ``--url`` (``REACH_URL``), ``--api-key``
(``REACH_API_KEY``), ``--user`` / ``--roles`` (``REACH_USER`` / ``REACH_ROLES``,
permissive mode only), ``--json``.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from reach_cli.client import DEFAULT_URL, CommandFailed, Target

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="One command for the Reach services: tables for people, --json for scripts.",
)
tools_app = typer.Typer(no_args_is_help=True, help="The tools you may use.")
approvals_app = typer.Typer(no_args_is_help=True, help="Calls that wait for a person.")
app.add_typer(tools_app, name="tools")
app.add_typer(approvals_app, name="approvals")

out = Console(soft_wrap=True)
err = Console(stderr=True)


DEFAULT_RETRIEVER_URL = "http://127.0.0.1:8082"
DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt", ".rst")


class State:
    target = Target()
    retriever = Target(url=DEFAULT_RETRIEVER_URL)
    as_json = False


@app.callback()
def main(
    url: Annotated[str, typer.Option(envvar="REACH_URL", help="The gateway.")] = DEFAULT_URL,
    api_key: Annotated[
        str | None, typer.Option(envvar="REACH_API_KEY", help="Bearer credential.")
    ] = None,
    user: Annotated[
        str | None, typer.Option(envvar="REACH_USER", help="Claimed user (permissive mode).")
    ] = None,
    roles: Annotated[
        str | None, typer.Option(envvar="REACH_ROLES", help="Claimed roles, comma-separated.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the server's JSON.")] = False,
    retriever_url: Annotated[
        str, typer.Option(envvar="REACH_RETRIEVER_URL", help="The retriever.")
    ] = DEFAULT_RETRIEVER_URL,
) -> None:
    State.target = Target(url=url, api_key=api_key, user=user, roles=roles)
    State.retriever = Target(url=retriever_url, api_key=api_key, user=user, roles=roles)
    State.as_json = as_json


def call(method: str, path: str, *, target: Target | None = None, **kwargs: Any) -> Any:
    """The server's answer, or exit with its reason."""
    try:
        return (target or State.target).request(method, path, **kwargs)[1]
    except CommandFailed as exc:
        if State.as_json:
            print(json.dumps({"reason": exc.reason, "message": exc.message}))
        else:
            err.print(f"[bold red]{exc.reason}[/]: {exc.message}", markup=True, highlight=False)
        raise typer.Exit(exc.exit_code) from exc


def show(body: Any, table: Table | None = None) -> None:
    if State.as_json or table is None:
        print(json.dumps(body, ensure_ascii=False, indent=None if State.as_json else 2))
    else:
        out.print(table)


def with_identity(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the claimed identity (``--user``/``--roles``) as its ``user_context``."""
    context = State.target.user_context()
    return {**body, "user_context": context} if context else body


def parse_value(text: str) -> Any:
    """``key=value`` values: JSON when they parse (numbers, true, lists), else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@app.command()
def run(
    query: Annotated[str, typer.Argument(help="What you want, in plain words.")],
    session: Annotated[str | None, typer.Option(help="Session id for follow-ups.")] = None,
    dry_run: Annotated[bool, typer.Option(help="Only show the route.")] = False,
) -> None:
    """Route a request to a tool and run it (POST /run)."""
    request = {"user_query": query, "session_id": session, "dry_run": dry_run}
    body = call("POST", "/run", json=with_identity(request))
    table = Table("tool", "arguments", "result", "route", show_lines=True)
    route = body.get("route") or {}
    result = body.get("output") if body.get("success") else body.get("reason")
    table.add_row(
        str(body.get("tool_id")),
        json.dumps(body.get("arguments"), ensure_ascii=False),
        json.dumps(result, ensure_ascii=False)[:500],
        f"{route.get('route_hint')} ({route.get('confidence')})",
    )
    show(body, table)


@app.command()
def invoke(
    tool_id: Annotated[str, typer.Argument(help="The tool's id.")],
    arguments: Annotated[list[str] | None, typer.Argument(help="key=value pairs.")] = None,
) -> None:
    """Call one tool with explicit arguments (POST /tools/{id}/invoke)."""
    parsed: dict[str, Any] = {}
    for pair in arguments or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            err.print(f"[bold red]invalid_argument[/]: {pair!r} is not key=value")
            raise typer.Exit(2)
        parsed[key] = parse_value(value)
    body = call("POST", f"/tools/{tool_id}/invoke", json=with_identity({"arguments": parsed}))
    table = Table("tool", "result")
    table.add_row(tool_id, json.dumps(body.get("output", body), ensure_ascii=False)[:2000])
    show(body, table)


@tools_app.command("ls")
def tools_ls() -> None:
    """The tools you may use."""
    body = call("GET", "/tools/list")
    table = Table("tool", "idempotent", "approval", "description")
    for tool in body.get("tools", []):
        table.add_row(
            tool["tool_id"],
            "yes" if tool.get("idempotent") else "no",
            "yes" if tool.get("requires_approval") else "",
            str(tool.get("description", ""))[:80],
        )
    show(body, table)


@tools_app.command("show")
def tools_show(tool_id: Annotated[str, typer.Argument(help="The tool's id.")]) -> None:
    """One tool's definition."""
    show(call("GET", f"/tools/{tool_id}"))


@tools_app.command("register")
def tools_register(
    manifest: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="A JSON file.")],
) -> None:
    """Register a tool from its manifest (registry admins)."""
    try:
        body = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        err.print(f"[bold red]invalid_manifest[/]: {manifest} is not a JSON file ({exc})")
        raise typer.Exit(2) from exc
    show(call("POST", "/tools/register", json=body))


@tools_app.command("rm")
def tools_rm(tool_id: Annotated[str, typer.Argument(help="The tool's id.")]) -> None:
    """Remove a tool (registry admins)."""
    show(call("DELETE", f"/tools/{tool_id}"))


WATERFALL_WIDTH = 40


def waterfall(trace: dict[str, Any]) -> Table:
    """One row per span, indented by depth, with a bar placed and sized to scale."""
    roots = trace.get("spans", [])
    table = Table("span", "service", "ms", "timeline", box=None, pad_edge=False)
    if not roots:
        return table
    origin = min(datetime.fromisoformat(s["start"]) for s in roots)
    total = max(float(trace.get("duration_ms") or 0.0), 0.001)

    def walk(span: dict[str, Any], depth: int) -> None:
        offset = (datetime.fromisoformat(span["start"]) - origin).total_seconds() * 1000
        lead = round(offset / total * WATERFALL_WIDTH)
        size = max(1, round(float(span["duration_ms"]) / total * WATERFALL_WIDTH))
        colour = "red" if span.get("status") == "error" else "cyan"
        bar = " " * min(lead, WATERFALL_WIDTH - 1) + f"[{colour}]" + "█" * size + "[/]"
        table.add_row(
            "  " * depth + span["name"],
            span.get("service", ""),
            f"{float(span['duration_ms']):.1f}",
            bar,
        )
        for child in span.get("children", []):
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    return table


@app.command()
def trace(trace_id: Annotated[str, typer.Argument(help="From a reply's trace_id.")]) -> None:
    """One trace across the services, as a waterfall (GET /traces/{id})."""
    body = call("GET", f"/traces/{trace_id}")
    show(body, waterfall(body))


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for in the documents.")],
    top_k: Annotated[int, typer.Option(help="How many chunks.")] = 5,
) -> None:
    """Hybrid search over the ingested documents (POST /retrieve)."""
    body = call("POST", "/retrieve", json={"query": query, "top_k": top_k}, target=State.retriever)
    table = Table("score", "source", "heading", "text", show_lines=True)
    for hit in body.get("chunks", []):
        table.add_row(
            f"{hit['score']:.3f}", hit["source"], hit.get("heading", ""), hit["text"][:200]
        )
    show(body, table)


def documents(paths: list[Path]) -> list[Path]:
    """Files given, and the documents (by suffix) under folders given, in a stable order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in DOCUMENT_SUFFIXES)
            )
        else:
            found.append(path)
    return found


def ingest_one(file: Path) -> dict[str, Any]:
    """One file into the retriever: ``{source, status, chunks | reason}``."""
    try:
        text = file.read_text("utf-8")
        _, body = State.retriever.request(
            "POST", "/ingest", json={"source": str(file), "text": text}
        )
    except CommandFailed as exc:
        if exc.exit_code == 2:  # the retriever is gone: no use going on
            err.print(f"[bold red]{exc.reason}[/]: {exc.message}")
            raise typer.Exit(2) from exc
        return {"source": str(file), "status": "failed", "reason": exc.reason}
    except (OSError, UnicodeDecodeError) as exc:
        return {"source": str(file), "status": "failed", "reason": type(exc).__name__}
    return {"source": str(file), "status": body.get("status"), "chunks": body.get("chunks")}


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(exists=True, help="Files or folders.")],
) -> None:
    """Ingest documents into the retriever, with a progress bar and a summary. A file is
    named by its path as given; ingesting it again replaces it (or changes nothing)."""
    files = documents(paths)
    outcomes: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    with Progress(console=err, transient=State.as_json, disable=State.as_json) as progress:
        task = progress.add_task("ingesting", total=len(files))
        for file in files:
            result = ingest_one(file)
            outcomes[result["status"]] = outcomes.get(result["status"], 0) + 1
            results.append(result)
            if not State.as_json:
                progress.console.print(f"{result['status']:>9}  {file}", highlight=False)
            progress.advance(task)
    status = call("GET", "/status", target=State.retriever)
    summary = {
        "files": len(files),
        "outcomes": outcomes,
        "documents": status.get("documents"),
        "chunks": status.get("chunks"),
    }
    if State.as_json:
        print(json.dumps({"results": results, "summary": summary}, ensure_ascii=False))
    else:
        counts = ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items())) or "nothing"
        out.print(
            f"{len(files)} files: {counts}; the retriever holds {summary['documents']} "
            f"documents, {summary['chunks']} chunks"
        )
    if outcomes.get("failed"):
        raise typer.Exit(1)


def approval_table(items: list[dict[str, Any]]) -> Table:
    table = Table("approval", "state", "tool", "caller", "arguments", "expires")
    for item in items:
        table.add_row(
            item["approval_id"],
            item["state"],
            item["tool_id"],
            item.get("caller", ""),
            json.dumps(item.get("arguments"), ensure_ascii=False)[:80],
            str(item.get("expires_at", ""))[:19],
        )
    return table


@approvals_app.command("ls")
def approvals_ls(
    state: Annotated[str | None, typer.Option(help="pending, succeeded, denied, ...")] = None,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
) -> None:
    """Approval requests you asked for or may decide."""
    body = call("GET", "/approvals", params={"state": state, "tool_id": tool})
    items = body.get("approvals", []) if isinstance(body, dict) else body
    show(body, approval_table(items))


@approvals_app.command("show")
def approvals_show(approval_id: str) -> None:
    """One request with its history."""
    show(call("GET", f"/approvals/{approval_id}"))


def decide(approval_id: str, verdict: str, comment: str | None) -> None:
    body = call("POST", f"/approvals/{approval_id}/{verdict}", json={"comment": comment})
    show(body, approval_table([body]))


@approvals_app.command("approve")
def approvals_approve(
    approval_ids: Annotated[
        list[str], typer.Argument(help="One id, or several to approve together.")
    ],
    comment: Annotated[str | None, typer.Option(help="Why.")] = None,
) -> None:
    """Approve pending calls; each runs now, once, bound to its own arguments."""
    if len(approval_ids) == 1:
        decide(approval_ids[0], "approve", comment)
        return
    body = call(
        "POST", "/approvals/approve", json={"approval_ids": approval_ids, "comment": comment}
    )
    results = body.get("results", [])
    show(body, approval_table([r["approval"] for r in results if r.get("approval")]))
    refused = [r for r in results if r.get("error")]
    for result in refused:
        error = result["error"]
        err.print(f"[bold red]{error['reason']}[/] {result['approval_id']}: {error['message']}")
    if refused:
        raise typer.Exit(1)


@approvals_app.command("deny")
def approvals_deny(
    approval_id: str, comment: Annotated[str | None, typer.Option(help="Why.")] = None
) -> None:
    """Deny a pending call; it never runs."""
    decide(approval_id, "deny", comment)
