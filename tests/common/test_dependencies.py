"""Each member's pyproject declares exactly the third-party packages its code imports."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_dependencies", REPO_ROOT / "scripts" / "check_dependencies.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_member_declares_what_it_imports_and_nothing_else(checker: ModuleType) -> None:
    owners, own = checker.module_owners(), checker.member_packages()
    problems = [p for member in checker.MEMBERS for p in checker.check(member, owners, own)]
    assert problems == [], "fix the pyproject.toml files (then make lock):\n" + "\n".join(problems)


def test_imports_map_to_the_distributions_that_ship_them(checker: ModuleType) -> None:
    owners, own = checker.module_owners(), checker.member_packages()

    def dist(module: str) -> str | None:
        found: str | None = checker.owner(module, owners, own)[1]
        return found

    assert dist("jwt") == "pyjwt"
    assert dist("re2") == "google-re2"
    assert dist("opentelemetry.trace") == "opentelemetry-api"
    # `from opentelemetry import trace`, `from ...otlp.proto.http import trace_exporter`
    assert dist("opentelemetry.trace\0opentelemetry") == "opentelemetry-api"
    http = "opentelemetry.exporter.otlp.proto.http"
    assert dist(f"{http}.trace_exporter\0{http}") == "opentelemetry-exporter-otlp-proto-http"
    assert dist("reach_common.db") == "reach-common"
    assert dist("asyncio") is None
    assert checker.parse_requirement("limits[async-redis]>=4.0") == ("limits", {"async-redis"})
    assert checker.parse_requirement("Google_RE2>=1.1; python_version >= '3.11'") == (
        "google-re2",
        set(),
    )
