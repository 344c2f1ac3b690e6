"""docker-compose.yml: health, ports, start order, wiring and pinned images."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.deploy import files
from tests.deploy.conftest import ComposeConfig

# Long-running containers without a healthcheck, and why. Nothing may wait on
# them being healthy (checked below).
NO_HEALTHCHECK = {
    "migrate": "one-shot job: the services wait for it to complete instead",
    "otel-collector": "a single static binary, no shell or HTTP client to run a check",
}
BACKENDS = ("postgres", "redis")
# A tag that names a release: 1.2, 1.2.3, 0.8.1-pg18-bookworm, 7.4.11-alpine.
VERSION_TAG = re.compile(r"^v?\d+\.\d+(\.\d+)?([-.][\w.-]+)?$")


def test_compose_config_accepts_the_file() -> None:
    """The real Compose parses and validates the file (interpolation, schema, merges)."""
    command = files.compose_tool()
    if command is None:
        pytest.skip(
            "neither `docker compose` nor `docker-compose` is installed; Debian's "
            "`docker-compose` package provides the latter (apt-get install docker-compose)"
        )
    services = files.render_compose(command)["services"]
    assert set(services) == {
        *files.SERVICES,
        *BACKENDS,
        "migrate",
        "otel-collector",
        "jaeger",
        "prometheus",
        "grafana",
    }


def test_every_long_running_service_has_a_healthcheck(compose: ComposeConfig) -> None:
    missing = {
        name
        for name, service in compose.services.items()
        if not service.get("healthcheck", {}).get("test")
    }
    assert missing == set(NO_HEALTHCHECK), compose.rendered_by
    for name in files.SERVICES:
        test = compose.services[name]["healthcheck"]["test"]
        assert test[:2] == ["CMD", "python"], test
        # slim images have no curl: the check is Python's urllib against /readyz
        assert "urllib.request.urlopen" in test[3], test
        assert "/readyz" in test[3], test
    assert "pg_isready" in " ".join(compose.services["postgres"]["healthcheck"]["test"])
    assert compose.services["redis"]["healthcheck"]["test"][1:] == ["redis-cli", "ping"]


def test_ports_match_design(compose: ComposeConfig, ports: dict[str, int]) -> None:
    for name, port in ports.items():
        service = compose.services[name]
        # Published on loopback only: dev auth trusts callers' claimed roles.
        assert files.published_ports(service) == [("127.0.0.1", port, port)], name
        assert files.environment(service)["PORT"] == str(port), name
        assert str(service["build"]["args"]["PORT"]) == str(port), name
        assert service["build"]["args"]["SERVICE"] == name


def test_services_start_after_migrate_and_healthy_backends(compose: ComposeConfig) -> None:
    for name in files.SERVICES:
        depends_on = compose.services[name]["depends_on"]
        assert depends_on["migrate"]["condition"] == "service_completed_successfully", name
        for backend in BACKENDS:
            assert depends_on[backend]["condition"] == "service_healthy", (name, backend)
    migrate = compose.services["migrate"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate["command"] == ["alembic", "upgrade", "heads"]


def test_every_dependency_states_its_condition(compose: ComposeConfig) -> None:
    """Long form everywhere, and nothing waits on the health of a service without a check."""
    for name, service in compose.services.items():
        depends_on = service.get("depends_on", {})
        assert isinstance(depends_on, dict), f"{name}: depends_on without conditions"
        for dependency, rule in depends_on.items():
            condition = rule["condition"]
            assert condition in (
                "service_started",
                "service_healthy",
                "service_completed_successfully",
            ), (name, dependency)
            if condition == "service_healthy":
                assert dependency not in NO_HEALTHCHECK, (name, dependency)


def test_start_order_has_no_cycle(compose: ComposeConfig) -> None:
    order: list[str] = []
    pending = dict(compose.services)
    while pending:
        ready = [n for n, s in pending.items() if set(s.get("depends_on", {})) <= set(order)]
        assert ready, f"depends_on cycle among {sorted(pending)}"
        order += sorted(ready)
        for name in ready:
            del pending[name]
    assert order.index("gateway") < order.index("agent")
    assert order.index("shop") < order.index("gateway")


def test_images_are_pinned(compose: ComposeConfig) -> None:
    for name, service in compose.services.items():
        image = service.get("image")
        assert image, f"{name}: no image (a build must be tagged, a pull must be named)"
        reference, _, _digest = image.partition("@")
        repository, _, tag = reference.rpartition(":")
        assert repository, f"{name}: untagged image {image}"
        assert "/" not in tag, f"{name}: untagged image {image}"
        assert tag != "latest", f"{name}: {image}"
        assert VERSION_TAG.match(tag), f"{name}: floating tag in {image}"
        if "build" in service:
            assert repository == f"reach-{name}", image


def test_services_are_wired_to_each_other(compose: ComposeConfig, ports: dict[str, int]) -> None:
    gateway = files.environment(compose.services["gateway"])
    assert gateway["SHOP_URL"] == f"http://shop:{ports['shop']}"
    assert gateway["RETRIEVER_URL"] == f"http://retriever:{ports['retriever']}"
    assert gateway["AGENT_URL"] == f"http://agent:{ports['agent']}"
    agent = files.environment(compose.services["agent"])
    assert agent["GATEWAY_URL"] == f"http://gateway:{ports['gateway']}"
    for name in files.SERVICES:
        env = files.environment(compose.services[name])
        assert env["HOST"] == "0.0.0.0"
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4318"


def test_gateway_discovers_the_mounted_manifests(compose: ComposeConfig) -> None:
    gateway = compose.services["gateway"]
    assert files.environment(gateway)["TOOL_AUTO_DISCOVERY"] == "true"
    volumes = [
        v if isinstance(v, str) else f"{v['source']}:{v['target']}" for v in gateway["volumes"]
    ]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in volumes}
    assert mounts["/app/manifests"].rstrip("/").endswith("manifests")
    assert (files.REPO_ROOT / "manifests").is_dir()


def test_service_containers_are_hardened(compose: ComposeConfig) -> None:
    for name in (*files.SERVICES, "migrate"):
        service = compose.services[name]
        assert service["read_only"] is True, name
        assert service["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in service["security_opt"], name
        assert "/tmp" in service["tmpfs"], name


def test_services_get_time_to_drain(compose: ComposeConfig) -> None:
    """Compose waits longer than uvicorn's graceful shutdown before it kills."""
    script = files.parse_dockerfile().stage("service").all("CMD")[-1].arguments
    match = re.search(r"--timeout-graceful-shutdown (\d+)", script)
    assert match is not None
    for name in files.SERVICES:
        grace = str(compose.services[name]["stop_grace_period"])
        assert grace.endswith("s"), grace
        assert int(grace.removesuffix("s")) > int(match[1]), name


def collector_config() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(
        (files.REPO_ROOT / "deploy/otel-collector.yaml").read_text()
    )
    return config


def test_traces_flow_from_services_through_the_collector_to_jaeger(
    compose: ComposeConfig,
) -> None:
    config = collector_config()
    # The services post to http://otel-collector:4318/v1/traces (OTLP/HTTP).
    assert config["receivers"]["otlp"]["protocols"]["http"]["endpoint"] == "0.0.0.0:4318"
    pipeline = config["service"]["pipelines"]["traces"]
    for kind in ("receivers", "processors", "exporters"):
        for component in pipeline[kind]:
            assert component in config[kind], f"{kind}: {component} used but not defined"
    exporter = config["exporters"][pipeline["exporters"][0]]
    host, _, port = exporter["endpoint"].partition(":")
    assert host in compose.services
    assert port == "4317"
    collector = compose.services["otel-collector"]
    mounted = [
        v if isinstance(v, str) else f"{v['source']}:{v['target']}" for v in collector["volumes"]
    ]
    assert any(v.split(":")[0].endswith("deploy/otel-collector.yaml") for v in mounted)
    assert any("/etc/otelcol/config.yaml" in c for c in collector["command"])


def test_secrets_come_from_the_example_env_file_only() -> None:
    """In the file as written: every env_file is the example (or REACH_ENV_FILE's)."""
    text = files.COMPOSE_FILE.read_text()
    raw = yaml.safe_load(text)
    for name, service in raw["services"].items():
        if "env_file" in service:
            assert service["env_file"] == "${REACH_ENV_FILE:-deploy/.env.example}", name
    for name in ("postgres", "migrate", *files.SERVICES):
        assert "env_file" in raw["services"][name], f"{name} gets no credentials"
    assert (files.REPO_ROOT / "deploy/.env.example").is_file()


def test_strict_egress_allows_the_services_the_shipped_manifests_call(
    compose: ComposeConfig,
) -> None:
    """Strict mode lets tools reach public addresses only: the compose services the
    shipped manifests call have private addresses, so EGRESS_ALLOWLIST names them."""
    gateway = files.environment(compose.services["gateway"])
    allowlist = files.host_list(gateway["EGRESS_ALLOWLIST"])
    assert files.shipped_manifest_hosts() <= set(allowlist)
    for setting in ("SHOP_URL", "RETRIEVER_URL", "AGENT_URL"):
        assert urlsplit(gateway[setting]).hostname in allowlist, setting
    assert allowlist == ["shop", "retriever", "agent"]  # nothing broader (no CIDR, no *)


def test_each_service_answers_its_own_name_and_loopback_only(compose: ComposeConfig) -> None:
    for name in files.SERVICES:
        hosts = files.host_list(files.environment(compose.services[name])["ALLOWED_HOSTS"])
        # The service name for calls from the others; loopback for the healthcheck
        # (it asks 127.0.0.1) and for the port published on 127.0.0.1.
        assert hosts == [name, "localhost", "127.0.0.1", "::1"], name
    callers = {
        "gateway": ("SHOP_URL", "RETRIEVER_URL", "AGENT_URL"),
        "agent": ("GATEWAY_URL",),
    }
    for caller, settings in callers.items():
        env = files.environment(compose.services[caller])
        for setting in settings:
            host = urlsplit(env[setting]).hostname
            assert host is not None, setting
            callee = files.environment(compose.services[host])
            assert host in files.host_list(callee["ALLOWED_HOSTS"]), (caller, setting)
