"""``reach trace ID`` (one trace as a waterfall) and ``reach traces`` (recent ones)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from reach_cli.output import call, show

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


def trace(trace_id: Annotated[str, typer.Argument(help="From a reply's trace_id.")]) -> None:
    """One trace across the services, as a waterfall (GET /traces/{id})."""
    body = call("GET", f"/traces/{trace_id}")
    show(body, waterfall(body))


def traces(
    slow: Annotated[
        float | None, typer.Option(help="Only traces that took at least this many ms.")
    ] = None,
    tool: Annotated[str | None, typer.Option(help="Only traces that called this tool.")] = None,
    service: Annotated[str | None, typer.Option(help="Only traces through this service.")] = None,
    status: Annotated[str | None, typer.Option(help="ok or error.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many.")] = 20,
) -> None:
    """Recent traces, newest first (GET /traces); `--slow MS` keeps the slow ones."""
    body = call(
        "GET",
        "/traces",
        params={
            "min_duration_ms": slow,
            "tool": tool,
            "service": service,
            "status": status,
            "limit": limit,
        },
    )
    table = Table("trace", "started", "ms", "root", "tools", "status")
    for column in table.columns[:3]:  # a trace id is copied whole into `reach trace ID`
        column.no_wrap = True
    for item in body.get("traces", []):
        table.add_row(
            item["trace_id"],
            str(item["started_at"])[5:19].replace("T", " "),  # MM-DD hh:mm:ss
            f"{float(item['duration_ms']):.1f}",
            f"{item['root_service']} {item['root_name']}",
            ", ".join(item.get("tools", [])),
            "[red]error[/]" if item["status"] == "error" else item["status"],
        )
    show(body, table)
