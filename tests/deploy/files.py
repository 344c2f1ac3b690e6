"""Readers for the deployment files: the Dockerfile, .dockerignore, compose, DESIGN ports.

Small parsers with Docker's and Compose's semantics for exactly what the
tests check, so the checks need no Docker engine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO_ROOT / "deploy" / "Dockerfile"
COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"
K8S = REPO_ROOT / "deploy" / "k8s"
SERVICES = ("gateway", "agent", "retriever", "shop")


def design_ports() -> dict[str, int]:
    """Each service's port as the contract (docs/architecture.md) states it."""
    text = (REPO_ROOT / "docs" / "architecture.md").read_text()
    ports = {
        name.lower(): int(port)
        for name, port in re.findall(r"^### (Gateway|Agent|Retriever) \(port (\d+)\)", text, re.M)
    }
    shop = re.search(r"services/shop \((\d+)\)", text)
    assert shop is not None, "docs/architecture.md no longer names shop's port"
    ports["shop"] = int(shop[1])
    assert set(ports) == set(SERVICES), ports
    return ports


# ---------------------------------------------------------------- Dockerfile


@dataclass
class Instruction:
    keyword: str
    arguments: str
    line: int

    def exec_form(self) -> list[str] | None:
        """The JSON array of a CMD/ENTRYPOINT/RUN in exec form, else None."""
        text = self.arguments.strip()
        if text.startswith("["):
            parsed = json.loads(text)
            assert isinstance(parsed, list)
            return [str(item) for item in parsed]
        return None


@dataclass
class Stage:
    name: str
    base: str
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


@dataclass
class Dockerfile:
    global_args: dict[str, str]
    stages: list[Stage]

    def stage(self, name: str) -> Stage:
        return next(s for s in self.stages if s.name == name)

    def lineage(self, name: str) -> list[Stage]:
        """The stage and the stages it is built FROM, nearest first."""
        chain = [self.stage(name)]
        names = {s.name for s in self.stages}
        while chain[-1].base in names:
            chain.append(self.stage(chain[-1].base))
        return chain

    def resolve(self, text: str, args: dict[str, str] | None = None) -> str:
        values = {**self.global_args, **(args or {})}
        return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: values[m[1] or m[2]], text)


def parse_dockerfile(path: Path = DOCKERFILE) -> Dockerfile:
    """Instructions per stage; continuation lines joined, comments dropped."""
    logical: list[tuple[int, str]] = []
    buffer, start = "", 0
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        stripped = raw.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer += stripped[:-1] + " "
            continue
        logical.append((start, buffer + stripped))
        buffer = ""
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for number, text in logical:
        keyword, _, arguments = text.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            match = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", arguments.strip(), re.I)
            assert match is not None, f"line {number}: {text}"
            stages.append(Stage(name=match[2] or str(len(stages)), base=match[1]))
        elif not stages and keyword == "ARG":
            name, _, default = arguments.strip().partition("=")
            global_args[name] = default
        else:
            stages[-1].instructions.append(Instruction(keyword, arguments.strip(), number))
    return Dockerfile(global_args, stages)


def copy_sources(instruction: Instruction) -> tuple[list[str], dict[str, str]]:
    """A COPY's sources (the last word is the destination) and its --flags."""
    words = instruction.exec_form() or instruction.arguments.split()
    flags = dict(w[2:].partition("=")[::2] for w in words if w.startswith("--"))
    paths = [w for w in words if not w.startswith("--")]
    return paths[:-1], flags


# ---------------------------------------------------------------- .dockerignore


class DockerIgnore:
    """Docker's .dockerignore rules: the last matching pattern wins, ``!`` re-includes,
    and a pattern that matches a folder matches everything inside it."""

    def __init__(self, text: str) -> None:
        self.rules: list[tuple[bool, re.Pattern[str]]] = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            include = line.startswith("!")
            pattern = line[1:] if include else line
            pattern = pattern.strip().lstrip("/").removeprefix("./").rstrip("/")
            self.rules.append((include, re.compile(self._regex(pattern))))

    @staticmethod
    def _regex(pattern: str) -> str:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            elif pattern[i] == "*":
                out, i = out + "[^/]*", i + 1
            elif pattern[i] == "?":
                out, i = out + "[^/]", i + 1
            else:
                out, i = out + re.escape(pattern[i]), i + 1
        return out

    def excluded(self, relative: str) -> bool:
        parts = relative.strip("/").split("/")
        candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        excluded = False
        for include, regex in self.rules:
            if any(regex.fullmatch(c) for c in candidates):
                excluded = not include
        return excluded


def dockerignore() -> DockerIgnore:
    return DockerIgnore((REPO_ROOT / ".dockerignore").read_text())


# ---------------------------------------------------------------- compose


def compose_tool() -> list[str] | None:
    """``docker compose`` (v2 plugin) or ``docker-compose`` (v1), whichever works here."""
    if shutil.which("docker"):
        probe = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, timeout=30, check=False
        )
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def render_compose(command: list[str]) -> dict[str, Any]:
    """``config``: the file as Compose reads it (anchors, merges and ${VAR} resolved)."""
    env = {"PATH": os.environ["PATH"], "HOME": str(Path.home())}
    result = subprocess.run(
        [*command, "-f", str(COMPOSE_FILE), "config"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"{' '.join(command)} config failed:\n{result.stderr}"
    config: dict[str, Any] = yaml.safe_load(result.stdout)
    return config


def interpolate(value: Any) -> Any:
    """Compose's ``${VAR:-default}`` with nothing set, and ``$$`` → ``$``."""
    if isinstance(value, dict):
        return {k: interpolate(v) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v) for v in value]
    if isinstance(value, str):
        value = re.sub(r"(?<!\$)\$\{\w+:-([^}]*)\}", r"\1", value)
        return value.replace("$$", "$")
    return value


def load_compose_raw() -> dict[str, Any]:
    """The file as written, YAML merge keys resolved by PyYAML, defaults interpolated."""
    raw: dict[str, Any] = yaml.safe_load(COMPOSE_FILE.read_text())
    result: dict[str, Any] = interpolate(raw)
    return result


def published_ports(service: dict[str, Any]) -> list[tuple[str, int, int]]:
    """``(host_ip, published, target)`` for each port, in v1's string or v2's long form."""
    found = []
    for entry in service.get("ports", []):
        if isinstance(entry, dict):
            found.append((entry.get("host_ip", ""), int(entry["published"]), int(entry["target"])))
            continue
        parts = str(entry).split("/")[0].split(":")
        host_ip = parts[0] if len(parts) == 3 else ""
        found.append((host_ip, int(parts[-2]), int(parts[-1])))
    return found


def environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's ``environment`` as a mapping (Compose allows a list of KEY=VALUE too)."""
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {str(k): str(v) for k, v in env.items()}


def host_list(value: str) -> list[str]:
    """A comma-separated host list setting (ALLOWED_HOSTS, EGRESS_ALLOWLIST) as a list."""
    return [part.strip().lower() for part in value.split(",") if part.strip()]


def shipped_manifest_hosts() -> set[str]:
    """The hosts the shipped manifests (manifests/*.json) send requests to, token
    endpoints included: what strict mode's EGRESS_ALLOWLIST has to name."""
    hosts: set[str] = set()
    for path in sorted((REPO_ROOT / "manifests").glob("*.json")):
        manifest = json.loads(path.read_text("utf-8"))
        endpoint = manifest.get("endpoint") if isinstance(manifest, dict) else None
        if not isinstance(endpoint, dict):
            continue  # schema.json
        target = endpoint.get("target", endpoint)
        if target.get("type") != "http":
            continue
        urls = [target["url"], (target.get("auth") or {}).get("token_endpoint")]
        hosts.update(urlsplit(url).hostname or "" for url in urls if url)
    return hosts
