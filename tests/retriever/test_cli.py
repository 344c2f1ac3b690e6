"""``python -m retriever``: bulk ingest of a folder, and serving when given no command."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.processes import free_port, service_process
from tests.retriever.conftest import WRITER_HEADERS, assert_index_consistent

Sql = Callable[..., list[tuple[Any, ...]]]


def run_cli(folder: Path, env: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "retriever", "ingest", *args],
        cwd=folder,
        env={**os.environ, "DATABASE_URL": env["database_url"], "COLUMNS": "120"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def summary_of(output: str) -> dict[str, str]:
    """The rows of the summary table: ``{"ingested": "3", ...}``."""
    rows = [
        [cell.strip() for cell in line.split("│") if cell.strip()] for line in output.splitlines()
    ]
    return {row[0]: row[1] for row in rows if len(row) == 2}


def test_ingest_a_folder_then_again(tmp_path: Path, service_env: dict[str, Any], sql: Sql) -> None:
    docs = tmp_path / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / ".hidden").mkdir()
    (docs / "guides" / "install.md").write_text(
        "# Install\n\nRun make install.\n\n## Check\n\nRun make test.\n"
    )
    (docs / "notes.txt").write_text("Plain notes about the release.\n")
    (docs / "empty.md").write_text("  \n")
    (docs / "image.png").write_bytes(b"\x89PNG\r\n")  # not a text suffix: ignored
    (docs / ".hidden" / "secret.md").write_text("# Not me\n")
    (tmp_path / "extra.md").write_text("One more file, named directly.\n")

    first = run_cli(tmp_path, service_env, "docs", "extra.md")
    assert first.returncode == 1, first.stderr  # empty.md failed
    assert "docs/empty.md: empty_text" in first.stderr
    summary = summary_of(first.stdout)
    assert summary["ingested"] == "3"
    assert summary["failed"] == "1"
    assert summary["chunks written"] == "4"
    assert sql("SELECT name, chunk_count FROM retriever.source ORDER BY name") == [
        ("docs/guides/install.md", 2),
        ("docs/notes.txt", 1),
        ("extra.md", 1),
    ]
    assert sql("SELECT metadata FROM retriever.source WHERE name = 'docs/notes.txt'") == [
        ({"file_name": "notes.txt", "format": "text"},)
    ]
    assert_index_consistent(sql)

    (docs / "notes.txt").write_text("Plain notes about the next release.\n")
    (docs / "empty.md").unlink()
    second = run_cli(tmp_path, service_env, "docs", "extra.md")
    assert second.returncode == 0, second.stderr
    summary = summary_of(second.stdout)
    assert (summary["ingested"], summary["replaced"], summary["unchanged"]) == ("0", "1", "2")
    assert_index_consistent(sql)


def test_missing_path_is_an_error(tmp_path: Path, service_env: dict[str, Any]) -> None:
    result = run_cli(tmp_path, service_env, "nowhere")
    assert result.returncode == 2
    assert "no such file or folder" in result.stderr


def test_no_command_serves_http(tmp_path: Path, service_env: dict[str, Any]) -> None:
    env = {
        "DATABASE_URL": service_env["database_url"],
        "REDIS_URL": service_env["redis_url"],
        "LLM_PROVIDER": "offline",
        "OTEL_SPAN_STORE": "false",
    }
    with service_process("retriever", free_port(), env, tmp_path) as url:
        ingested = httpx.post(
            f"{url}/ingest",
            json={"source": "a.md", "text": "Served text."},
            headers=WRITER_HEADERS,
            timeout=30,
        )
        assert ingested.status_code == 201
        found = httpx.post(f"{url}/retrieve", json={"query": "served"}, timeout=30)
        assert found.status_code == 200
        assert [c["source"] for c in found.json()["chunks"]] == ["a.md"]
