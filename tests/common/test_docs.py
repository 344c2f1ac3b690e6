"""Docs that are generated from code stay in step with it."""

from __future__ import annotations

import contextlib
import importlib.util
import io

from tests.conftest import REPO_ROOT


def test_configuration_page_matches_the_settings_classes() -> None:
    spec = importlib.util.spec_from_file_location(
        "settings_table", REPO_ROOT / "scripts" / "settings_table.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main()
    page = (REPO_ROOT / "docs" / "configuration.md").read_text()
    assert page == out.getvalue(), (
        "run: .venv/bin/python scripts/settings_table.py > docs/configuration.md"
    )
