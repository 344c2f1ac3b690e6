"""deploy/k8s rendered for dev and prod: probes, resources, hardening, ports, wiring."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.deploy import files, kustomize
from tests.deploy.conftest import Rendered, render

PER_SERVICE_KINDS = ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget")


def containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod.get("initContainers", []), *pod["containers"]]


def image_uid() -> int:
    user = next(i for i in files.parse_dockerfile().stage("runtime").all("USER"))
    return int(user.arguments.partition(":")[0])


def identity(resource: dict[str, Any]) -> tuple[str, str | None, str]:
    metadata = resource["metadata"]
    return resource["kind"], metadata.get("namespace"), metadata["name"]


def test_renderers_agree() -> None:
    """The Python fallback renders exactly what kubectl renders, for every kustomization."""
    command = kustomize.real_tool()
    if command is None:
        pytest.skip("no kubectl or kustomize here to compare the Python renderer with")
    for directory in ("base", "overlays/dev", "overlays/prod", "examples/in-cluster-data"):
        path = files.K8S / directory
        real = {identity(r): r for r in kustomize.render_with_tool(command, path)}
        ours = {identity(r): r for r in kustomize.render_in_python(path)}
        assert ours == real, directory


def test_python_renderer_refuses_what_it_does_not_implement(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\nnamePrefix: x-\n")
    with pytest.raises(kustomize.Unsupported, match="namePrefix"):
        kustomize.render_in_python(tmp_path)


def test_each_service_has_its_objects(overlay: Rendered) -> None:
    for name in files.SERVICES:
        for kind in PER_SERVICE_KINDS:
            overlay.get(kind, name)
        overlay.get("ConfigMap", f"{name}-config")
    overlay.get("ConfigMap", "reach-common")
    overlay.get("Job", "reach-migrate")


def test_probes(overlay: Rendered, ports: dict[str, int]) -> None:
    for name in files.SERVICES:
        pod = overlay.get("Deployment", name)["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        named = {p["name"]: p["containerPort"] for p in container["ports"]}
        for probe, path in (
            ("startupProbe", "/healthz"),
            ("livenessProbe", "/healthz"),
            ("readinessProbe", "/readyz"),
        ):
            http = container[probe]["httpGet"]
            assert http["path"] == path, (name, probe)
            assert named.get(http["port"], http["port"]) == ports[name], (name, probe)
        # liveness never runs before startup has succeeded; startup allows the model load
        startup = container["startupProbe"]
        assert startup["periodSeconds"] * startup["failureThreshold"] >= 30, name


def test_every_long_running_container_has_probes(overlay: Rendered, data_example: Rendered) -> None:
    for rendered in (overlay, data_example):
        for resource in rendered.resources:
            if resource["kind"] not in ("Deployment", "StatefulSet"):
                continue
            for container in resource["spec"]["template"]["spec"]["containers"]:
                for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                    assert probe in container, (resource["metadata"]["name"], probe)


def test_every_container_has_requests_and_limits(overlay: Rendered, data_example: Rendered) -> None:
    for rendered in (overlay, data_example):
        for where, pod in rendered.pod_specs():
            for container in containers(pod):
                resources = container.get("resources", {})
                for bound in ("requests", "limits"):
                    assert {"cpu", "memory"} <= set(resources.get(bound, {})), (where, bound)


def test_pods_are_hardened(overlay: Rendered, data_example: Rendered) -> None:
    uid = image_uid()
    for rendered in (overlay, data_example):
        for where, pod in rendered.pod_specs():
            assert pod["automountServiceAccountToken"] is False, where
            # Service links would set GATEWAY_PORT=tcp://… and break the port setting.
            assert pod["enableServiceLinks"] is False, where
            assert pod["securityContext"]["runAsNonRoot"] is True, where
            assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", where
            for container in containers(pod):
                context = container["securityContext"]
                assert context["allowPrivilegeEscalation"] is False, where
                assert context["readOnlyRootFilesystem"] is True, where
                assert context["capabilities"]["drop"] == ["ALL"], where
                assert context.get("runAsNonRoot", True) is True, where
                assert "add" not in context["capabilities"], where
    for where, pod in overlay.pod_specs():
        # our images: the Dockerfile's user, and /tmp as the one writable place
        assert pod["securityContext"]["runAsUser"] == uid, where
        volumes = {v["name"]: v for v in pod["volumes"]}
        for container in pod["containers"]:
            tmp = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
            assert tmp, where
            assert "emptyDir" in volumes[tmp[0]["name"]], where


def test_namespaces_enforce_the_restricted_pod_standard(
    overlay: Rendered, data_example: Rendered
) -> None:
    for rendered in (overlay, data_example):
        (namespace,) = rendered.of_kind("Namespace")
        labels = namespace["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
        for resource in rendered.resources:
            if resource["kind"] != "Namespace":
                assert resource["metadata"]["namespace"] == namespace["metadata"]["name"]


def test_ports_match_design(overlay: Rendered, ports: dict[str, int]) -> None:
    for name, port in ports.items():
        service = overlay.get("Service", name)
        assert [p["port"] for p in service["spec"]["ports"]] == [port], name
        (container,) = overlay.get("Deployment", name)["spec"]["template"]["spec"]["containers"]
        assert [p["containerPort"] for p in container["ports"]] == [port], name
        assert overlay.get("ConfigMap", f"{name}-config")["data"]["PORT"] == str(port), name


def test_services_reach_each_other_by_service_name(
    overlay: Rendered, ports: dict[str, int]
) -> None:
    gateway = overlay.get("ConfigMap", "gateway-config")["data"]
    for upstream in ("shop", "retriever", "agent"):
        assert gateway[f"{upstream.upper()}_URL"] == f"http://{upstream}:{ports[upstream]}"
    agent = overlay.get("ConfigMap", "agent-config")["data"]
    assert agent["GATEWAY_URL"] == f"http://gateway:{ports['gateway']}"
    assert gateway["TOOL_AUTO_DISCOVERY"] == "true"
    assert overlay.get("ConfigMap", "reach-common")["data"]["HOST"] == "0.0.0.0"


def test_selectors_and_targets_line_up(overlay: Rendered) -> None:
    for name in files.SERVICES:
        deployment = overlay.get("Deployment", name)
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert overlay.get("Service", name)["spec"]["selector"].items() <= labels.items()
        pdb = overlay.get("PodDisruptionBudget", name)
        assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
        target = overlay.get("HorizontalPodAutoscaler", name)["spec"]["scaleTargetRef"]
        assert (target["kind"], target["name"]) == ("Deployment", name)
        # the autoscaler owns the count; `replicas` would reset it on each apply
        assert "replicas" not in deployment["spec"], name
        pod = deployment["spec"]["template"]["spec"]
        env_from = pod["containers"][0]["envFrom"]
        config_maps = {e["configMapRef"]["name"] for e in env_from if "configMapRef" in e}
        assert config_maps == {"reach-common", f"{name}-config"}


def test_disruption_budgets_never_block_a_drain(overlay: Rendered) -> None:
    """At the autoscaler's minimum, every budget still lets one pod be evicted."""
    for name in files.SERVICES:
        minimum = overlay.get("HorizontalPodAutoscaler", name)["spec"]["minReplicas"]
        budget = overlay.get("PodDisruptionBudget", name)["spec"]
        if "minAvailable" in budget:
            assert minimum - int(budget["minAvailable"]) >= 1, name
        else:
            assert int(budget["maxUnavailable"]) >= 1, name


def test_prod_runs_redundant_and_strict() -> None:
    prod = render(files.K8S / "overlays" / "prod")
    for name in files.SERVICES:
        assert prod.get("HorizontalPodAutoscaler", name)["spec"]["minReplicas"] >= 2, name
        assert "minAvailable" in prod.get("PodDisruptionBudget", name)["spec"], name
    # Every service reads reach-common: strict everywhere, with the JWT issuer and audience.
    common = prod.get("ConfigMap", "reach-common")["data"]
    assert common["AUTH_MODE"] == "strict"
    assert common["JWT_ISSUER"]
    assert common["JWT_AUDIENCE"]
    dev = render(files.K8S / "overlays" / "dev")
    assert dev.get("ConfigMap", "reach-common")["data"]["AUTH_MODE"] == "permissive"


def test_migration_job_runs_the_image_command(overlay: Rendered) -> None:
    job = overlay.get("Job", "reach-migrate")
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    migrate_cmd = files.parse_dockerfile().stage("migrate").all("CMD")[-1].exec_form()
    assert container["command"] == migrate_cmd == ["alembic", "upgrade", "heads"]
    assert pod["restartPolicy"] == "Never"
    assert container["image"].rpartition(":")[0].endswith("reach-migrate")
    (database_url,) = [e for e in container["env"] if e["name"] == "DATABASE_URL"]
    assert database_url["valueFrom"]["secretKeyRef"]["name"] == "reach-secrets"


def test_postgres_and_redis_are_external_services(overlay: Rendered) -> None:
    for name in ("postgres", "redis"):
        service = overlay.get("Service", name)
        assert service["spec"]["type"] == "ExternalName"
        assert "." in service["spec"]["externalName"]
    # The secrets example connects through those names.
    example = (files.K8S / "examples" / "secrets.env.example").read_text()
    assert re.search(r"^DATABASE_URL=postgresql://[^@]+@postgres:5432/", example, re.M)
    assert re.search(r"^REDIS_URL=redis://redis:6379/", example, re.M)


def test_base_external_names_point_at_the_in_cluster_example(data_example: Rendered) -> None:
    base = render(files.K8S / "base")
    (namespace,) = data_example.of_kind("Namespace")
    for name in ("postgres", "redis"):
        data_example.get("StatefulSet", name)
        data_example.get("Service", name)
        expected = f"{name}.{namespace['metadata']['name']}.svc.cluster.local"
        assert base.get("Service", name)["spec"]["externalName"] == expected


def test_images_are_pinned(overlay: Rendered, data_example: Rendered) -> None:
    for rendered in (overlay, data_example):
        for where, pod in rendered.pod_specs():
            for container in containers(pod):
                _name, tag, digest = kustomize.split_image(container["image"])
                assert tag or digest, f"{where}: untagged {container['image']}"
                assert tag != "latest", f"{where}: {container['image']}"


def test_example_data_images_match_compose() -> None:
    """The in-cluster example runs the same Postgres and Redis images as compose."""
    compose_images = {
        name: service["image"] for name, service in files.load_compose_raw()["services"].items()
    }
    for path in (files.K8S / "examples" / "in-cluster-data").glob("*.yaml"):
        for document in yaml.safe_load_all(path.read_text()):
            if document and document["kind"] == "StatefulSet":
                (container,) = document["spec"]["template"]["spec"]["containers"]
                assert container["image"] == compose_images[container["name"]]


def test_pods_get_time_to_drain(overlay: Rendered) -> None:
    """Kubernetes waits for the preStop pause plus uvicorn's graceful shutdown."""
    script = files.parse_dockerfile().stage("service").all("CMD")[-1].arguments
    match = re.search(r"--timeout-graceful-shutdown (\d+)", script)
    assert match is not None
    for name in files.SERVICES:
        pod = overlay.get("Deployment", name)["spec"]["template"]["spec"]
        pre_stop = pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
        assert pre_stop[0] == "sleep", name
        assert pod["terminationGracePeriodSeconds"] > int(pre_stop[1]) + int(match[1]), name


def test_strict_egress_allows_the_services_the_shipped_manifests_call(overlay: Rendered) -> None:
    """Strict mode (prod) lets tools reach public addresses only: the in-cluster
    Services the shipped manifests call are named in EGRESS_ALLOWLIST."""
    gateway = overlay.get("ConfigMap", "gateway-config")["data"]
    allowlist = files.host_list(gateway["EGRESS_ALLOWLIST"])
    assert files.shipped_manifest_hosts() <= set(allowlist)
    for setting in ("SHOP_URL", "RETRIEVER_URL", "AGENT_URL"):
        assert urlsplit(gateway[setting]).hostname in allowlist, setting
    assert allowlist == ["shop", "retriever", "agent"]  # nothing broader (no CIDR, no *)


def test_each_service_answers_its_own_name_and_its_probes(overlay: Rendered) -> None:
    for name in files.SERVICES:
        config = overlay.get("ConfigMap", f"{name}-config")["data"]
        hosts = files.host_list(config["ALLOWED_HOSTS"])
        assert hosts == [name, "localhost", "127.0.0.1", "::1"], name
        (container,) = overlay.get("Deployment", name)["spec"]["template"]["spec"]["containers"]
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            # kubelet would send the pod IP as Host; the probe names localhost instead.
            headers = container[probe]["httpGet"].get("httpHeaders", [])
            assert {"name": "Host", "value": "localhost"} in headers, (name, probe)
    gateway = overlay.get("ConfigMap", "gateway-config")["data"]
    agent = overlay.get("ConfigMap", "agent-config")["data"]
    wiring = [(gateway, s) for s in ("SHOP_URL", "RETRIEVER_URL", "AGENT_URL")]
    for env, setting in [*wiring, (agent, "GATEWAY_URL")]:
        host = urlsplit(env[setting]).hostname
        callee = overlay.get("ConfigMap", f"{host}-config")["data"]
        assert host in files.host_list(callee["ALLOWED_HOSTS"]), setting
