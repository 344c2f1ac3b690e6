"""Reading a dataset's JSON Lines file, for the benchmark scripts (``scripts/bench_*``).

A dataset may come from anyone: blank lines are skipped, and a line that is not a JSON
object ends the run naming its file and line, not with a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class DatasetError(SystemExit):
    """A dataset a benchmark cannot read; ends the script with its message."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of ``path``, one per non-blank line, in order."""
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"{path.name} line {number} is not JSON: {exc}") from None
            if not isinstance(row, dict):
                raise DatasetError(f"{path.name} line {number} is not a JSON object")
            rows.append(row)
    return rows
