"""A data directory the embedded servers cannot use: ``make run`` stops at once with one
clear line, not a traceback and not a hang.

``python -m reach_common.stack run`` (what ``make run`` runs) starts with
``REACH_DATA_DIR`` pointing at a read-only file system, a full one, or a file. Read-only
and full are real file systems: a ``tmpfs`` mounted read-only, or with 1 MB, when this
test may mount (root); otherwise a directory without write permission stands in for
read-only (it does not stop root), and the full disk is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reach_common.processes import free_port
from tests.conftest import REPO_ROOT
from tests.faults.matrix import Row, record

pytestmark = pytest.mark.slow
LIMIT_S = 60  # far above a normal failing start (the interpreter's imports); a hang is not


@contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A ``tmpfs`` mounted at ``where`` with ``options``; skips the test if mounting is not
    allowed here."""
    where.mkdir()
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(
        [mount, "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode(errors='replace')}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@contextmanager
def read_only(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        try:
            yield folder / "data"
        finally:
            folder.chmod(0o755)
        return
    with tmpfs(tmp_path / "ro", "size=1m,ro") as mounted:
        yield mounted / "data"


@contextmanager
def full(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "full", "size=1m") as mounted:
        yield mounted / "data"


@contextmanager
def a_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    path.write_text("not a folder")
    yield path


CASES = {
    # Not root: the directory without write permission says so.
    "read-only": (read_only, "data_dir_read_only", ("Read-only file system", "Permission denied")),
    "disk full": (full, "data_dir_full", ("is the disk full?",)),
    "a file": (a_file, "data_dir_not_a_directory", ("not a directory",)),
}


def run_stack(data_dir: Path) -> tuple[int, str, float]:
    """``make run``'s runner with ``data_dir``; its exit code, output and seconds."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(REACH_DATA_DIR=str(data_dir), COLUMNS="200")
    for service in ("SHOP", "RETRIEVER", "GATEWAY", "AGENT"):
        env[f"{service}_PORT"] = str(free_port())
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "reach_common.stack", "run"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=LIMIT_S,
        check=False,
    )
    output = (done.stdout + done.stderr).decode(errors="replace")
    return done.returncode, output, time.monotonic() - started


@pytest.mark.parametrize("case", list(CASES))
def test_an_unusable_data_directory_fails_the_start_with_one_clear_line(
    case: str, tmp_path: Path
) -> None:
    make, reason, words = CASES[case]
    with make(tmp_path) as data_dir:
        code, output, seconds = run_stack(data_dir)
    row = Row(
        fault=f"data dir {case} at start",
        service="embedded postgres+redis",
        promise=f"make run exits within {LIMIT_S} s with one line naming the directory and "
        "the cause; nothing started",
    )
    row.count(reason)
    record(row)
    assert code == 1, output
    assert "cannot start: " in output, output
    assert str(data_dir) in output, output
    assert any(w in output for w in words), output
    assert "Traceback" not in output, output
    assert "migrating" not in output  # it stopped before anything used the database
    assert seconds < LIMIT_S
