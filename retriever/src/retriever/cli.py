"""``python -m retriever``: run the service (the default), or bulk-ingest files.

    python -m retriever                     # serve on RETRIEVER_PORT (8082)
    python -m retriever ingest docs/ a.md   # ingest Markdown and text files

``ingest`` writes straight to the database (DATABASE_URL, or the embedded
PostgreSQL under REACH_DATA_DIR) with the service's own ingest code, so a
running retriever sees the documents at once. A source is named by the file's
path relative to the current directory. It is no HTTP client, so it sends no API key:
access to the database is what lets it write.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from reach_common.db import create_engine, create_sessionmaker
from reach_common.embedded import EmbeddedServers
from reach_common.embeddings import Embedder
from reach_common.errors import ReachError
from reach_common.llm.errors import LLMConfigError
from reach_common.llm.factory import check_settings
from reach_common.logs import configure_logging
from reach_common.service import run_service
from retriever.app import build_ingestor, configure_connections
from retriever.ingest.bulk import BulkOptions, ingest_many
from retriever.ingest.service import Document
from retriever.ingest.validation import check_document
from retriever.settings import Settings

TEXT_SUFFIXES = {".md", ".markdown", ".mdx", ".txt", ".text"}

app = typer.Typer(
    help="Reach retriever. With no command, runs the HTTP service.",
    add_completion=False,
    no_args_is_help=False,
)


@app.callback(invoke_without_command=True)
def main(ctx: typer.Context) -> None:
    """Reach retriever. With no command, runs the HTTP service."""
    if ctx.invoked_subcommand is None:
        serve()


@app.command()
def serve() -> None:
    """Run the HTTP service (embedded Postgres/Redis when no URLs are set)."""
    settings = Settings()
    try:
        check_settings(settings)
    except LLMConfigError as exc:
        sys.exit(f"retriever: cannot start: {exc.message}")
    run_service(settings, "retriever.app:create_app")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    missing: list[Path] = field(default_factory=list)


def discover(paths: list[Path]) -> Discovery:
    """Files named directly, plus Markdown and text files under named folders."""
    found = Discovery()
    seen: set[Path] = set()
    for path in paths:
        if path.is_file():
            candidates: Iterator[Path] = iter([path])
        elif path.is_dir():
            candidates = (
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix.lower() in TEXT_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            found.missing.append(path)
            continue
        for candidate in candidates:
            resolved = candidate.resolve()
            if resolved not in seen:
                seen.add(resolved)
                found.files.append(candidate)
    return found


def source_name(path: Path) -> str:
    resolved = path.resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def read_documents(files: list[Path], settings: Settings) -> tuple[list[Document], dict[str, str]]:
    """Valid documents, and a reason for every file that is not one."""
    documents: list[Document] = []
    failures: dict[str, str] = {}
    for path in files:
        name = source_name(path)
        try:
            body = path.read_text(encoding="utf-8")
            kind = "markdown" if path.suffix.lower() in {".md", ".markdown", ".mdx"} else "text"
            documents.append(
                check_document(name, body, {"file_name": path.name, "format": kind}, settings)
            )
        except UnicodeDecodeError:
            failures[name] = "not UTF-8 text"
        except OSError as exc:
            failures[name] = f"cannot read: {exc.strerror or exc}"
        except ReachError as exc:
            failures[name] = f"{exc.reason}: {exc.message}"
    return documents, failures


async def run_ingest(
    documents: list[Document], settings: Settings, console: Console
) -> tuple[Counter[str], int, float]:
    assert settings.database_url
    probe = create_engine(settings.database_url, pool_size=1)
    try:
        async with probe.connect() as conn:
            migrated = await conn.scalar(text("SELECT to_regclass('retriever.chunk')"))
    finally:
        await probe.dispose()
    if migrated is None:
        console.print("[red]the retriever tables do not exist:[/red] run `make db-upgrade` first")
        raise typer.Exit(1)
    engine = create_engine(settings.database_url, pool_size=2)
    configure_connections(engine, settings)
    try:
        # One onnxruntime thread per run, one run per core (see ingest/bulk.py).
        embedder = await asyncio.to_thread(
            Embedder.configured, settings, int8_default=False, threads=1
        )
        ingestor = build_ingestor(settings, embedder)
        counts: Counter[str] = Counter()
        chunks = 0
        started = time.perf_counter()
        with Progress(
            TextColumn("[bold]ingest"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        ) as progress:
            task = progress.add_task("ingest", total=len(documents), rate="")
            async for outcome in ingest_many(
                ingestor, create_sessionmaker(engine), documents, BulkOptions()
            ):
                counts[outcome.status] += 1
                chunks += outcome.chunks
                done = sum(counts.values())
                rate = done / max(time.perf_counter() - started, 1e-9)
                progress.update(task, advance=1, rate=f"{rate:.1f} docs/s")
        return counts, chunks, time.perf_counter() - started
    finally:
        await engine.dispose()


@app.command()
def ingest(
    paths: Annotated[
        list[Path], typer.Argument(help="Files, and folders to search for .md/.txt files.")
    ],
) -> None:
    """Ingest Markdown and text files; unchanged files are skipped, changed ones replaced."""
    console = Console(stderr=True)
    settings = Settings()
    configure_logging("retriever", "WARNING", settings.log_format)
    found = discover(paths)
    for path in found.missing:
        console.print(f"[red]no such file or folder:[/red] {path}")
    if found.missing:
        raise typer.Exit(2)
    documents, failures = read_documents(found.files, settings)
    servers = None
    if not settings.database_url:
        servers = EmbeddedServers(Path(settings.reach_data_dir)).start(need_redis=False)
        assert servers.postgres is not None
        settings.database_url = servers.postgres.url
    try:
        counts, chunks, elapsed = asyncio.run(run_ingest(documents, settings, console))
    except (OSError, SQLAlchemyError) as exc:
        where = make_url(settings.database_url).render_as_string(hide_password=True)
        console.print(f"[red]cannot use the database at {where}:[/red] {exc}")
        raise typer.Exit(1) from None
    finally:
        if servers is not None:
            servers.stop()
    summary = Table(title="retriever ingest", show_header=False)
    summary.add_column("what")
    summary.add_column("count", justify="right")
    for status in ("ingested", "replaced", "unchanged"):
        summary.add_row(status, str(counts[status]))
    summary.add_row("failed", str(len(failures)))
    summary.add_row("chunks written", str(chunks))
    summary.add_row("seconds", f"{elapsed:.1f}")
    summary.add_row("documents/s", f"{len(documents) / max(elapsed, 1e-9):.1f}")
    Console().print(summary)
    for name, reason in sorted(failures.items()):
        console.print(f"[red]failed[/red] {name}: {reason}")
    if failures:
        raise typer.Exit(1)
