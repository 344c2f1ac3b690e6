"""The Grafana dashboards in deploy/grafana, read as data: their PromQL and the metrics
it names, and the names a real exposition offers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.deploy import files

GRAFANA = files.REPO_ROOT / "deploy" / "grafana"
DASHBOARDS = sorted((GRAFANA / "dashboards").glob("*.json"))
METRIC = re.compile(r"\b(reach_[a-z0-9_]+)\b")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum")}


def load(path: Path) -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(path.read_text())
    return dashboard


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels", [])


def expressions(paths: Iterable[Path] = DASHBOARDS) -> list[str]:
    """Every PromQL expression of the dashboards: panel targets and variable queries."""
    found: list[str] = []
    for path in paths:
        dashboard = load(path)
        found += [t["expr"] for p in panels(dashboard) for t in p.get("targets", [])]
        found += [v["definition"] for v in dashboard["templating"]["list"]]
    return found


def named_metrics(exprs: Iterable[str]) -> set[str]:
    return {name for expr in exprs for name in METRIC.findall(expr)}


def exposed_names(text: str) -> set[str]:
    """Every series name a scrape of ``text`` can hold, also those with no sample yet
    (a labelled counter nobody incremented still has its HELP and TYPE)."""
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ()))
        names.update(sample.name for sample in family.samples)
    return names
