"""Fixtures for the deployment tests: compose and kustomize output, rendered once.

Both come from the real tools when this machine has them (``docker compose``
or ``docker-compose`` for ``config``; ``kubectl kustomize`` or ``kustomize``),
and otherwise from the parsers in this package, which say so in the test
report (``-rs``/``-ra`` shows the reasons of the tool-only tests skipped).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.deploy import files, kustomize

OVERLAYS = ("dev", "prod")


@dataclass(frozen=True)
class ComposeConfig:
    services: dict[str, Any]
    rendered_by: str


@pytest.fixture(scope="session")
def compose() -> ComposeConfig:
    """docker-compose.yml as Compose sees it: the tool's ``config`` when installed."""
    command = files.compose_tool()
    if command is not None:
        return ComposeConfig(files.render_compose(command)["services"], " ".join(command))
    # No Compose here: the file itself, merge keys resolved and ${VAR:-default}
    # interpolated, is what Compose would read.
    return ComposeConfig(files.load_compose_raw()["services"], "PyYAML (no compose tool)")


@dataclass(frozen=True)
class Rendered:
    resources: list[dict[str, Any]]
    rendered_by: str

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.resources if r["kind"] == kind]

    def get(self, kind: str, name: str) -> dict[str, Any]:
        matches = [r for r in self.of_kind(kind) if r["metadata"]["name"] == name]
        assert len(matches) == 1, f"{kind}/{name}: {len(matches)} found"
        return matches[0]

    def pod_specs(self) -> list[tuple[str, dict[str, Any]]]:
        """``(kind/name, pod spec)`` of every workload."""
        return [
            (f"{r['kind']}/{r['metadata']['name']}", r["spec"]["template"]["spec"])
            for r in self.resources
            if r["kind"] in ("Deployment", "StatefulSet", "Job", "DaemonSet")
        ]


def render(directory: Path) -> Rendered:
    command = kustomize.real_tool()
    if command is not None:
        return Rendered(kustomize.render_with_tool(command, directory), " ".join(command))
    # Neither kubectl nor kustomize is installed, and neither is a Python
    # package the lock could pin: render with the Python subset renderer.
    return Rendered(kustomize.render_in_python(directory), "tests/deploy/kustomize.py")


@pytest.fixture(scope="session", params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> Rendered:
    """One environment's rendered manifests (each test runs for dev and for prod)."""
    return render(files.K8S / "overlays" / request.param)


@pytest.fixture(scope="session")
def data_example() -> Rendered:
    return render(files.K8S / "examples" / "in-cluster-data")


@pytest.fixture(scope="session")
def ports() -> dict[str, int]:
    return files.design_ports()
