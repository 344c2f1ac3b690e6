"""``reach tools import``, ``history`` and ``rollback``: tools from an OpenAPI document, and
the versions a tool's definition has had.

    reach tools import https://api.example.com/openapi.json            # a dry run
    reach tools import ./openapi.yaml --apply --namespace shop --permission user
    reach tools history TOOL
    reach tools rollback TOOL VERSION
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from reach_cli.output import State, call, err, out, show


def _source(source: str) -> dict[str, Any]:
    """A URL is read by the gateway (under its egress rules); a file is sent inline."""
    if source.startswith(("http://", "https://")):
        return {"url": source}
    path = Path(source)
    try:
        return {"document": path.read_text(encoding="utf-8")}
    except (OSError, UnicodeDecodeError) as exc:
        err.print(f"[bold red]invalid_openapi[/]: cannot read {source} ({exc})")
        raise typer.Exit(2) from exc


def _tables(body: dict[str, Any]) -> tuple[Table, Table]:
    tools = Table("tool", "method", "path", "approval", "flags / notes")
    for tool in body.get("tools", []):
        remarks = [*tool.get("flags", []), *tool.get("notes", [])]
        tools.add_row(
            tool["tool_id"],
            tool["method"],
            tool["path"],
            "yes" if tool.get("requires_approval") else "",
            "; ".join(remarks)[:100],
        )
    skipped = Table("skipped", "method", "path", "reason", "why")
    for item in body.get("skipped", []):
        skipped.add_row(
            item.get("operation_id") or "",
            item["method"],
            item["path"],
            item["reason"],
            item["message"][:100],
        )
    return tools, skipped


def tools_import(
    source: Annotated[str, typer.Argument(help="An OpenAPI 3.x document: a URL or a file.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run/--apply", help="Only show the proposals (default).")
    ] = True,
    namespace: Annotated[str, typer.Option(help="Namespace of the tools.")] = "default",
    permission: Annotated[str, typer.Option(help="public, user or admin.")] = "user",
    scope: Annotated[str | None, typer.Option(help="Roles for admin tools, a,b.")] = None,
    prefix: Annotated[str, typer.Option(help="Put before every tool id.")] = "",
    base_url: Annotated[str | None, typer.Option(help="Call the operations here.")] = None,
    operation: Annotated[
        list[str] | None, typer.Option(help="Only this operationId or tool id (repeatable).")
    ] = None,
) -> None:
    """Propose (or with --apply register) one tool per operation (registry admins)."""
    body: dict[str, Any] = {
        **_source(source),
        "dry_run": dry_run,
        "namespace": namespace,
        "permission": permission,
        "scope": [r.strip() for r in (scope or "").split(",") if r.strip()],
        "id_prefix": prefix,
        "base_url": base_url,
        "operations": operation or None,
    }
    answer = call(
        "POST", "/tools/import/openapi", json={k: v for k, v in body.items() if v is not None}
    )
    tools, skipped = _tables(answer)
    show(answer, tools)
    if not State.as_json:
        if answer.get("skipped"):
            out.print(skipped)
        mode = "dry run: nothing registered" if answer["dry_run"] else "registered"
        out.print(
            f"{answer['operations_found']} operations, {answer['proposed']} proposed, "
            f"{answer['registered']} registered ({mode})"
        )


def tools_history(tool_id: Annotated[str, typer.Argument(help="The tool's id.")]) -> None:
    """The versions of a tool's definition, newest first, with their hashes."""
    body = call("GET", f"/tools/{tool_id}/history")
    table = Table("version", "action", "hash", "when", "by", "flags")
    for entry in body.get("versions", []):
        table.add_row(
            str(entry["version"]),
            entry["action"],
            (entry.get("definition_hash") or "")[:12],
            str(entry.get("created_at", ""))[:19],
            entry.get("actor") or "",
            ", ".join(entry.get("flags", [])),
        )
    show(body, table)


def tools_rollback(
    tool_id: Annotated[str, typer.Argument(help="The tool's id.")],
    version: Annotated[int, typer.Argument(help="The version to restore.")],
) -> None:
    """Restore an earlier definition as a new version (registry admins)."""
    show(call("POST", f"/tools/{tool_id}/rollback", json={"version": version}))
