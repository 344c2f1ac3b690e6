"""``reach search`` and ``reach ingest``: the retriever's side (``--retriever-url``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.table import Table

from reach_cli.client import CommandFailed
from reach_cli.output import State, call, err, out, show

DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt", ".rst")


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
