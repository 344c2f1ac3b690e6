"""deploy/grafana and deploy/prometheus: the dashboards query metrics the services really
export, their PromQL parses, and Prometheus scrapes the four services compose runs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from agent.metrics import AgentMetrics
from gateway.metrics import GatewayMetrics
from reach_common.metrics import Metrics, MetricsAccess
from retriever.metrics import RetrieverMetrics
from tests.deploy import files, grafana
from tests.deploy.conftest import ComposeConfig

PROMETHEUS = files.REPO_ROOT / "deploy" / "prometheus" / "prometheus.yml"
PROMTOOL = shutil.which("promtool")
DATASOURCE_UID = "reach-prometheus"


def exposition() -> str:
    """What a service's /metrics declares: the shared metrics and every domain family,
    rendered by prometheus-client from the definitions the services use."""
    metrics = Metrics(MetricsAccess(strict=False, token=None))
    for family in (GatewayMetrics, AgentMetrics, RetrieverMetrics):
        metrics.family(family)
    return generate_latest(metrics.registry).decode()


def test_dashboards_name_only_metrics_the_services_export() -> None:
    assert {p.name for p in grafana.DASHBOARDS} == {"reach-services.json", "reach-tools.json"}
    exported = grafana.exposed_names(exposition())
    named = grafana.named_metrics(grafana.expressions())
    assert named, "no metric found in the dashboards"
    assert named - exported == set()


def test_every_exported_metric_is_on_a_dashboard() -> None:
    families = {
        f.name + ("_total" if f.type == "counter" else "")
        for f in text_string_to_metric_families(exposition())
    }
    named = grafana.named_metrics(grafana.expressions())
    shown = {name for name in families if any(n.startswith(name) for n in named)}
    assert families - shown == set()


def test_dashboards_are_well_formed() -> None:
    uids = set()
    for path in grafana.DASHBOARDS:
        dashboard = grafana.load(path)
        uids.add(dashboard["uid"])
        ids = [p["id"] for p in grafana.panels(dashboard)]
        assert len(ids) == len(set(ids)), path.name
        for panel in grafana.panels(dashboard):
            if panel["type"] != "row":
                assert panel["datasource"]["uid"] == DATASOURCE_UID, panel["title"]
                assert panel["targets"], panel["title"]
                # Labels per user, session or query would be unbounded: none is queried.
                for target in panel["targets"]:
                    assert not re.search(r"user|session|query", target["expr"]), target
    assert len(uids) == len(grafana.DASHBOARDS)


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package `prometheus`) absent")
def test_dashboard_promql_parses(tmp_path: Path) -> None:
    """promtool parses every expression, as recording rules (Grafana's variables
    replaced by what Grafana would put there)."""
    exprs = [
        expr.replace("$__rate_interval", "1m").replace("$job", ".*").replace("$tool", ".*")
        for expr in grafana.expressions()
        if not expr.startswith("label_values(")
    ]
    rules = {
        "groups": [
            {
                "name": "dashboards",
                "rules": [{"record": f"reach:check_{i}", "expr": e} for i, e in enumerate(exprs)],
            }
        ]
    }
    path = tmp_path / "rules.yml"
    path.write_text(yaml.safe_dump(rules))
    assert PROMTOOL is not None
    checked = subprocess.run(
        [PROMTOOL, "check", "rules", str(path)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_grafana_provisioning_matches_compose(compose: ComposeConfig) -> None:
    datasources = yaml.safe_load(
        (grafana.GRAFANA / "provisioning/datasources/prometheus.yml").read_text()
    )["datasources"]
    assert [d["uid"] for d in datasources] == [DATASOURCE_UID]
    assert datasources[0]["url"] == "http://prometheus:9090"
    provider = yaml.safe_load((grafana.GRAFANA / "provisioning/dashboards/reach.yml").read_text())[
        "providers"
    ][0]
    mounts = _mounts(compose.services["grafana"])
    assert mounts[provider["options"]["path"]].rstrip("/").endswith("deploy/grafana/dashboards")
    assert mounts["/etc/grafana/provisioning"].rstrip("/").endswith("deploy/grafana/provisioning")
    env = files.environment(compose.services["grafana"])
    assert env["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "Viewer"  # nobody edits through the UI
    for name in ("prometheus", "grafana"):
        host, _published, _ = files.published_ports(compose.services[name])[0]
        assert host == "127.0.0.1", name


def test_prometheus_scrapes_the_four_services(
    compose: ComposeConfig, ports: dict[str, int]
) -> None:
    config = yaml.safe_load(PROMETHEUS.read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == set(files.SERVICES)
    for name, job in jobs.items():
        assert job.get("metrics_path", "/metrics") == "/metrics"
        targets = [t for group in job["static_configs"] for t in group["targets"]]
        assert targets == [f"{name}:{ports[name]}"], name
        # The Host header is the service name, which each service answers.
        assert name in files.host_list(files.environment(compose.services[name])["ALLOWED_HOSTS"])
    mounts = _mounts(compose.services["prometheus"])
    assert mounts["/etc/prometheus/prometheus.yml"].endswith("deploy/prometheus/prometheus.yml")
    if PROMTOOL is not None:
        checked = subprocess.run(
            [PROMTOOL, "check", "config", str(PROMETHEUS)], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr


def _mounts(service: dict[str, Any]) -> dict[str, str]:
    volumes = [
        v if isinstance(v, str) else f"{v['source']}:{v['target']}" for v in service["volumes"]
    ]
    return {v.split(":")[1]: v.split(":")[0] for v in volumes}
