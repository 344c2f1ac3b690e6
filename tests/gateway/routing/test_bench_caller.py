"""``make bench-shipped``'s caller sees every tool of the set it routes over.

An admin tool is visible only to a caller holding one of its ``scope`` roles. The
bench once claimed a fixed list of roles, so the hotel set's points-award tool (scope
``front_office_manager`` / ``loyalty_desk``) was invisible and its eight requests
could never be routed right, whatever the router did.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from tests.conftest import REPO_ROOT, load_script


def bench_shipped() -> ModuleType:
    return load_script("bench_shipped")


def write(folder: Path, name: str, manifest: object) -> None:
    (folder / name).write_text(json.dumps(manifest), encoding="utf-8")


def test_the_caller_claims_every_scope_role_of_the_folder(tmp_path: Path) -> None:
    bench = bench_shipped()
    write(tmp_path, "award.json", {"tool_id": "award", "permission": "admin",
                                   "scope": ["loyalty_desk", "front_office_manager"]})  # fmt: skip
    write(tmp_path, "lookup.json", {"tool_id": "lookup", "permission": "user"})
    write(tmp_path, "odd.json", {"tool_id": "odd", "permission": "admin", "scope": "x"})
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")

    roles = bench.caller_roles(tmp_path)

    assert {"loyalty_desk", "front_office_manager"} <= set(roles)
    assert set(bench.ROLES) <= set(roles)  # the shipped tools' roles stay
    assert "x" not in roles  # a scope that is not a list names no role


def test_every_tool_of_every_set_is_visible_to_the_bench_caller() -> None:
    """Each set's admin tools ask for roles the caller now claims."""
    bench = bench_shipped()
    for folder in sorted((REPO_ROOT / "tests" / "data").glob("*/manifests")):
        roles = set(bench.caller_roles(folder))
        for path in folder.glob("*.json"):
            manifest = json.loads(path.read_text("utf-8"))
            if manifest.get("permission") == "admin":
                assert roles & set(manifest.get("scope") or []), path.name
