"""The fault matrix: each fault test records what happened while its fault was on.

A test drives traffic, injects one fault, checks its promise, and records one row:
how many requests ran during the fault, the errors by ``reason``, records lost,
duplicates, and the seconds until full service came back. ``scripts/fault_matrix.py``
runs ``tests/faults`` with ``REACH_FAULT_MATRIX`` pointing at a file and prints the rows
as a table; without that variable ``record`` keeps nothing (the assertions still run).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

ENV = "REACH_FAULT_MATRIX"


@dataclass
class Row:
    """One fault on one service, as a test observed it."""

    fault: str
    service: str
    promise: str
    requests: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    lost: int = 0
    duplicates: int = 0
    recover_s: float | None = None

    def count(self, reason: str | None) -> None:
        """One request during the fault; ``reason`` is its error's reason, None for success."""
        self.requests += 1
        if reason is not None:
            self.errors[reason] += 1


def record(row: Row) -> None:
    """Append ``row`` to the matrix file named by ``REACH_FAULT_MATRIX``, if any."""
    path = os.environ.get(ENV)
    if not path:
        return
    line = {**asdict(row), "errors": dict(row.errors)}
    with Path(path).open("a", encoding="utf-8") as out:
        out.write(json.dumps(line, sort_keys=True) + "\n")
