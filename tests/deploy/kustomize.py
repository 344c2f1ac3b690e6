"""Render a kustomization: with the real tool when there is one, else in Python.

The real tool comes first: ``kubectl kustomize`` (kustomize is built into
kubectl), then a standalone ``kustomize build``. Neither is a Python package,
so neither can be pinned in the lock; this project's machine image ships
kubectl, a developer's laptop may not. Without one, :func:`render_in_python`
renders the subset of kustomize that deploy/k8s uses, and refuses (raises
:class:`Unsupported`) anything outside it instead of guessing:

- ``resources``: files (several documents each) and directories holding a
  kustomization;
- ``patches``: strategic-merge patches matched by kind and name, or applied to
  every resource of a ``target`` kind; JSON 6902 patches (add, replace,
  remove) with a ``target``;
- ``images``: ``newName``, ``newTag``, ``digest``;
- ``namespace``.

When kubectl is present, tests/deploy/test_kustomize.py checks that both
renderers give the same objects, so the fallback stays faithful.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

Resource = dict[str, Any]

SUPPORTED_FIELDS = {"apiVersion", "kind", "resources", "patches", "images", "namespace"}
# Lists a strategic-merge patch may touch, with the key their items merge on.
# Any other list in a patch is refused: kustomize's rule differs per field.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
}


class Unsupported(Exception):
    """The kustomization uses a feature the Python renderer does not implement."""


def real_tool() -> list[str] | None:
    """The command that renders a directory with the real kustomize, if installed."""
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    return None


def render_with_tool(command: list[str], directory: Path) -> list[Resource]:
    result = subprocess.run(
        [*command, str(directory)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, f"{' '.join(command)} {directory} failed:\n{result.stderr}"
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def load_documents(path: Path) -> list[Resource]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def render_in_python(directory: Path) -> list[Resource]:
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(kustomization) - SUPPORTED_FIELDS
    if unknown:
        raise Unsupported(f"{directory}: fields {sorted(unknown)}")
    resources: list[Resource] = []
    for entry in kustomization.get("resources", []):
        path = directory / entry
        resources += render_in_python(path) if path.is_dir() else load_documents(path)
    for patch in kustomization.get("patches", []):
        apply_patch(resources, directory, patch)
    for image in kustomization.get("images", []):
        apply_image(resources, image)
    if "namespace" in kustomization:
        for resource in resources:
            if resource["kind"] not in CLUSTER_SCOPED:
                resource.setdefault("metadata", {})["namespace"] = kustomization["namespace"]
    return resources


def apply_patch(resources: list[Resource], directory: Path, patch: dict[str, Any]) -> None:
    if set(patch) - {"path", "target"}:
        raise Unsupported(f"patch fields {sorted(patch)}")
    content = yaml.safe_load_all((directory / patch["path"]).read_text())
    documents = [doc for doc in content if doc]
    target = patch.get("target")
    if target is not None and set(target) - {"kind", "name"}:
        raise Unsupported(f"patch target fields {sorted(target)}")
    if len(documents) == 1 and isinstance(documents[0], list):
        if target is None:
            raise Unsupported("a JSON 6902 patch needs a target")
        for resource in selected(resources, target):
            for operation in documents[0]:
                apply_json6902(resource, operation)
        return
    for document in documents:
        where = target or {"kind": document["kind"], "name": document["metadata"]["name"]}
        matches = selected(resources, where)
        if not matches:
            raise Unsupported(f"patch {patch['path']} matches nothing: {where}")
        for resource in matches:
            body = {k: v for k, v in document.items() if k not in ("apiVersion", "kind")}
            body.get("metadata", {}).pop("name", None)
            strategic_merge(resource, copy.deepcopy(body))


def selected(resources: list[Resource], target: dict[str, str]) -> list[Resource]:
    return [
        r
        for r in resources
        if r["kind"] == target["kind"]
        and ("name" not in target or r["metadata"]["name"] == target["name"])
    ]


def strategic_merge(base: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            base.pop(key, None)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            strategic_merge(base[key], value)
        elif isinstance(value, list) and key in base:
            if key not in MERGE_KEYS:
                raise Unsupported(f"strategic merge of list {key!r}")
            merge_list(base[key], value, MERGE_KEYS[key])
        else:
            base[key] = value


def merge_list(base: list[dict[str, Any]], patch: list[dict[str, Any]], merge_key: str) -> None:
    by_key = {item[merge_key]: item for item in base}
    for item in patch:
        if item[merge_key] in by_key:
            strategic_merge(by_key[item[merge_key]], item)
        else:
            base.append(item)


def apply_json6902(resource: Resource, operation: dict[str, Any]) -> None:
    op, path = operation["op"], operation["path"]
    if op not in ("add", "replace", "remove"):
        raise Unsupported(f"JSON 6902 op {op!r}")
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
    parent: Any = resource
    for part in parts[:-1]:
        parent = parent[int(part)] if isinstance(parent, list) else parent[part]
    last = parts[-1]
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if op == "remove":
            del parent[index]
        elif op == "add":
            parent.insert(index, copy.deepcopy(operation["value"]))
        else:
            parent[index] = copy.deepcopy(operation["value"])
    elif op == "remove":
        del parent[last]
    else:
        if op == "replace" and last not in parent:
            raise KeyError(f"replace of missing {path}")
        parent[last] = copy.deepcopy(operation["value"])


def apply_image(resources: list[Resource], image: dict[str, str]) -> None:
    for container in containers_of(resources):
        name, tag, digest = split_image(container["image"])
        if name != image["name"]:
            continue
        name = image.get("newName", name)
        tag = image.get("newTag", tag)
        digest = image.get("digest", digest)
        container["image"] = name + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")


def containers_of(resources: list[Resource]) -> list[dict[str, Any]]:
    """Every container and init container of every workload."""
    found = []
    for resource in resources:
        spec = resource.get("spec", {}).get("template", {}).get("spec", {})
        found += spec.get("containers", []) + spec.get("initContainers", [])
    return found


def split_image(reference: str) -> tuple[str, str | None, str | None]:
    """``name[:tag][@digest]`` → its parts (a registry port is part of the name)."""
    rest, _, digest = reference.partition("@")
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    if colon > slash:
        return rest[:colon], rest[colon + 1 :], digest or None
    return rest, None, digest or None
