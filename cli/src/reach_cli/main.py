"""The ``reach`` command: tables for people, ``--json`` for scripts.

    reach run "SKU2024001 还有多少库存"
    reach invoke TOOL key=value ...
    reach tools ls | show TOOL | register FILE | rm TOOL
    reach tools import URL|FILE [--apply] | history TOOL | rollback TOOL VERSION
    reach trace TRACE_ID  |  reach traces [--slow MS] [--tool T] [--service S]
    reach search "…"  |  reach ingest PATH…   (the retriever: --retriever-url)
    reach chat [--session ID]                  (the agent: --agent-url)
    reach approvals ls [--state pending] | show ID | approve ID… | deny ID [--comment …]
    reach keys ls | create USER [--roles a,b] | revoke KEY_ID

Global options (or environment): ``--url`` (``REACH_URL``), ``--api-key``
(``REACH_API_KEY``), ``--user`` / ``--roles`` (``REACH_USER`` / ``REACH_ROLES``,
permissive mode only), ``--retriever-url`` / ``--agent-url``
(``REACH_RETRIEVER_URL`` / ``REACH_AGENT_URL``), ``--json``. A refusal exits 1 with
the server's ``reason``; an unreachable service exits 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from reach_cli import approvals, chat, documents, imports, keys, traces
from reach_cli.client import DEFAULT_URL, Target
from reach_cli.output import (
    DEFAULT_AGENT_URL,
    DEFAULT_RETRIEVER_URL,
    State,
    call,
    err,
    parse_value,
    show,
    with_identity,
)

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="One command for the Reach services: tables for people, --json for scripts.",
)
tools_app = typer.Typer(no_args_is_help=True, help="The tools you may use.")
app.add_typer(tools_app, name="tools")
tools_app.command("import")(imports.tools_import)
tools_app.command("history")(imports.tools_history)
tools_app.command("rollback")(imports.tools_rollback)
app.add_typer(approvals.app, name="approvals")
app.add_typer(keys.app, name="keys")
app.command()(traces.trace)
app.command()(traces.traces)
app.command()(documents.search)
app.command()(documents.ingest)
app.command()(chat.chat)


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
    agent_url: Annotated[
        str, typer.Option(envvar="REACH_AGENT_URL", help="The agent.")
    ] = DEFAULT_AGENT_URL,
) -> None:
    State.target = Target(url=url, api_key=api_key, user=user, roles=roles)
    State.retriever = Target(url=retriever_url, api_key=api_key, user=user, roles=roles)
    State.agent = Target(url=agent_url, api_key=api_key, user=user, roles=roles)
    State.as_json = as_json


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
def tools_ls(
    request: Annotated[
        str | None,
        typer.Option(
            "--for",
            help="Only the tools for this request, best first (the router's ranking).",
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, max=100, help="With --for: at most this many.")
    ] = None,
) -> None:
    """The tools you may use."""
    if limit is not None and request is None:
        err.print("[bold red]invalid_argument[/]: --limit ranks tools: give --for too")
        raise typer.Exit(2)
    body = call("GET", "/tools/list", params={"q": request, "limit": limit})
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
