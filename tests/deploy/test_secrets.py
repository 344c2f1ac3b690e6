"""No credential outside the example env files, in any deployment file or rendered manifest."""

from __future__ import annotations

import re
from pathlib import Path

from tests.deploy import files
from tests.deploy.conftest import Rendered

SECRET_NAME = re.compile(r"(?i)(password|passwd|secret|token|api_?key|private_?key|credential)")
# Names whose value is a credential even though the name does not say so.
SECRET_VARIABLES = {"DATABASE_URL", "REDIS_URL"}
# Names that say "secret" but hold none: where tool secrets live and where each may
# be sent (docs/security.md), and the Kubernetes field that names a Secret object.
NOT_CREDENTIALS = {"TOOL_SECRETS_DIR", "TOOL_SECRET_HOSTS", "secretName"}
URL_WITH_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/@:'\"]+:([^\s@/'\"]+)@")
ASSIGNMENT = re.compile(
    r"(?i)\b([\w.-]*(?:password|passwd|secret|token|api_?key|private_?key)[\w.-]*)"
    r"[ \t]*[:=][ \t]*(['\"]?)([^\s'\"#,\]]+)"
)
KEY_MATERIAL = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----|\bsk-(ant-)?[A-Za-z0-9_-]{20,}")
NOT_A_VALUE = ("<", "$", "{", "*")
EXAMPLE_SUFFIX = ".env.example"


def findings(text: str) -> list[str]:
    """Every literal credential in ``text``: placeholders and references are not."""
    found = [m[0] for m in KEY_MATERIAL.finditer(text)]
    found += [m[0] for m in URL_WITH_PASSWORD.finditer(text) if not m[1].startswith(NOT_A_VALUE)]
    for match in ASSIGNMENT.finditer(text):
        if match[1] in NOT_CREDENTIALS:
            continue
        value = match[3]
        if value.startswith(NOT_A_VALUE) or value.lower() in ("true", "false", "null", "none"):
            continue
        found.append(match[0])
    return found


def deployment_files() -> list[Path]:
    paths = [files.COMPOSE_FILE, files.REPO_ROOT / ".dockerignore"]
    paths += [p for p in (files.REPO_ROOT / "deploy").rglob("*") if p.is_file()]
    paths += [files.REPO_ROOT / "docs" / name for name in ("scaling.md", "docker.md")]
    return [p for p in paths if p.is_file()]


def test_no_secret_literal_outside_the_example_env_files() -> None:
    scanned = [p for p in deployment_files() if not p.name.endswith(EXAMPLE_SUFFIX)]
    assert len(scanned) > 20, "the scan found too few files to mean anything"
    leaks = {str(p.relative_to(files.REPO_ROOT)): findings(p.read_text()) for p in scanned}
    assert {path: found for path, found in leaks.items() if found} == {}


def test_the_scanner_finds_the_example_credentials() -> None:
    """The same scan does flag the example files, so a leak elsewhere would be caught."""
    examples = [p for p in deployment_files() if p.name.endswith(EXAMPLE_SUFFIX)]
    assert {p.name for p in examples} == {".env.example", "secrets.env.example"}
    for path in examples:
        assert findings(path.read_text()), path
    assert findings("DATABASE_URL=postgresql://u:hunter2@db/x")
    assert findings("  OPENAI_API_KEY: sk-abcdefghijklmnopqrstuvwx")
    assert not findings("key: OPENAI_API_KEY\nautomountServiceAccountToken: false")


def test_compose_sets_no_credential_inline() -> None:
    services = files.load_compose_raw()["services"]
    for name, service in services.items():
        for variable, value in files.environment(service).items():
            if variable not in NOT_CREDENTIALS:
                assert not SECRET_NAME.search(variable), f"{name}: {variable} inline"
            assert not URL_WITH_PASSWORD.search(value), f"{name}: {variable} carries a password"


def test_manifests_take_credentials_from_secrets_only(
    overlay: Rendered, data_example: Rendered
) -> None:
    for rendered in (overlay, data_example):
        assert rendered.of_kind("Secret") == [], "a Secret in the manifests puts its data in git"
        for config_map in rendered.of_kind("ConfigMap"):
            for key, value in config_map.get("data", {}).items():
                assert key in NOT_CREDENTIALS or not SECRET_NAME.search(key), key
                assert key not in SECRET_VARIABLES, key
                assert not URL_WITH_PASSWORD.search(str(value)), key
        for where, pod in rendered.pod_specs():
            for container in pod["containers"]:
                for variable in container.get("env", []):
                    name = variable["name"]
                    if SECRET_NAME.search(name) or name in SECRET_VARIABLES:
                        assert "value" not in variable, f"{where}: {name} literal"
                        assert "secretKeyRef" in variable["valueFrom"], f"{where}: {name}"
