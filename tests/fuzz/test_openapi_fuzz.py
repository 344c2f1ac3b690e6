"""Schemathesis against all four services, as real processes, from their own OpenAPI.

The same run as ``make fuzz`` (``scripts/fuzz.py``), bounded for CI: every check and
every phase (examples, coverage, fuzzing, stateful over inferred links), a few examples
per operation. No answer may be a 5xx, and every answer must be one the document
declares, in its declared media type and schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, Backends, reset_state

RUNS = {"shop", "retriever", "agent", "gateway-calls", "gateway"}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_service_survives_schemathesis(backends: Backends, tmp_path: Path) -> None:
    reset_state(backends)
    out = tmp_path / "counts.json"
    env = {**os.environ, "DATABASE_URL": backends.database_url, "REDIS_URL": backends.redis_url}
    done = subprocess.run(
        [
            sys.executable,
            "scripts/fuzz.py",
            "--examples",
            "3",
            "--json",
            str(out),
            "--keep",
            str(tmp_path / "work"),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    print(done.stdout[-6000:])
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    results = {r["name"]: r for r in json.loads(out.read_text())}
    assert set(results) == RUNS
    for name, r in results.items():
        print(
            f"{name}: {r['operations_tested']}/{r['operations_total']} operations, "
            f"{r['examples']} examples, {r['server_errors']} server errors, "
            f"{r['schema_violations']} schema violations, {r['other_failures']} other failures"
        )
        assert r["operations_tested"] == r["operations_total"] > 0, r
        assert r["examples"] > r["operations_total"], r
        assert r["errors"] == 0, r
        assert r["server_errors"] == 0, r["failures"]
        assert r["schema_violations"] == 0, r["failures"]
    assert done.returncode == 0, done.stdout[-3000:]
