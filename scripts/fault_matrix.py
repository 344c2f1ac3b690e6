"""Run the fault tests and print what each fault did: the table of issue 19.

    python scripts/fault_matrix.py [pytest arguments, e.g. -k redis, or test files]

Runs ``pytest tests/faults`` with ``REACH_FAULT_MATRIX`` naming a temporary file; each
test appends one row there (``tests/faults/matrix.py``). Prints one line per row: the
fault, the service, requests made while the fault was on or being recovered from, their
errors by reason, records lost and duplicated (both must be 0), the seconds until full
service came back, and the promise the test checked. Exits with pytest's status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]


def run_tests(matrix: Path, extra: list[str]) -> int:
    env = {**os.environ, "REACH_FAULT_MATRIX": str(matrix)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    if not any(arg.startswith("tests/") for arg in extra):
        command.append("tests/faults")
    return subprocess.run([*command, *extra], env=env, cwd=ROOT, check=False).returncode  # noqa: S603


def errors_text(errors: dict[str, int]) -> str:
    if not errors:
        return "-"
    return ", ".join(f"{reason} {n}" for reason, n in sorted(errors.items(), key=lambda e: -e[1]))


def table(rows: list[dict[str, Any]]) -> Table:
    out = Table(title="Fault matrix (tests/faults)")
    for column in ("fault", "service", "requests", "errors by reason", "lost", "duplicates"):
        out.add_column(column, justify="right" if column in ("requests", "lost") else "left")
    out.add_column("recover s", justify="right")
    out.add_column("promise", overflow="fold")
    for row in rows:
        recover = row.get("recover_s")
        out.add_row(
            row["fault"],
            row["service"],
            str(row["requests"]),
            errors_text(row["errors"]),
            str(row["lost"]),
            str(row["duplicates"]),
            "-" if recover is None else f"{recover:.2f}",
            row["promise"],
        )
    return out


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="reach-faults-") as folder:
        matrix = Path(folder) / "matrix.jsonl"
        matrix.touch()
        status = run_tests(matrix, sys.argv[1:])
        lines = matrix.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    Console(width=200).print(table(rows))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
