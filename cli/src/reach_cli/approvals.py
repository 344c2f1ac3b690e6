"""``reach approvals``: calls that wait for a person."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from reach_cli.output import call, err, show

app = typer.Typer(no_args_is_help=True, help="Calls that wait for a person.")


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


@app.command("ls")
def approvals_ls(
    state: Annotated[str | None, typer.Option(help="pending, succeeded, denied, ...")] = None,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
) -> None:
    """Approval requests you asked for or may decide."""
    body = call("GET", "/approvals", params={"state": state, "tool_id": tool})
    items = body.get("approvals", []) if isinstance(body, dict) else body
    show(body, approval_table(items))


@app.command("show")
def approvals_show(approval_id: str) -> None:
    """One request with its history."""
    show(call("GET", f"/approvals/{approval_id}"))


def decide(approval_id: str, verdict: str, comment: str | None) -> None:
    body = call("POST", f"/approvals/{approval_id}/{verdict}", json={"comment": comment})
    show(body, approval_table([body]))


@app.command("approve")
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


@app.command("deny")
def approvals_deny(
    approval_id: str, comment: Annotated[str | None, typer.Option(help="Why.")] = None
) -> None:
    """Deny a pending call; it never runs."""
    decide(approval_id, "deny", comment)
