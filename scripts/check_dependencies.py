"""Each workspace member declares exactly the third-party packages its code imports.

For every member (``services/common``, ``services/shop``, ``gateway``, ``agent``,
``retriever``, ``cli``) this reads the imports of its ``src`` tree (the AST, nothing is
run), maps each imported module to the distribution that installs it (the
installed distributions' file lists, so ``jwt`` is ``PyJWT`` and
``opentelemetry.trace`` is ``opentelemetry-api``), and compares the result with
``[project].dependencies`` of the member's ``pyproject.toml``:

- a distribution imported but not declared (it may be installed only because
  another package needs it) is an error;
- a distribution declared but never imported is an error, unless it is listed
  in ``USED_WITHOUT_IMPORT`` with the reason it is needed;
- an extra (``name[extra]``) must be listed in ``EXTRAS`` with its reason.

Run it in the project's environment (the installed distributions are the map):

    .venv/bin/python scripts/check_dependencies.py
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections import defaultdict
from importlib.metadata import distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MEMBERS = ("services/common", "services/shop", "gateway", "agent", "retriever", "cli")

# Declared, never imported, and needed all the same.
USED_WITHOUT_IMPORT = {
    "reach-common": {
        "asyncpg": "SQLAlchemy's postgresql+asyncpg driver, loaded from the database URL",
    },
}
# Extras, and what they bring that no import shows.
EXTRAS = {
    "reach-common": {
        "uvicorn": {"standard": "uvloop, httptools and watchfiles for the servers"},
        "sqlalchemy": {"asyncio": "greenlet, which the asyncio extension runs on"},
        "psycopg": {"binary": "the libpq build psycopg needs (migrations, make run)"},
        "pyjwt": {"crypto": "cryptography, for RS256/ES256 tokens"},
    },
}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(requirement: str) -> tuple[str, set[str]]:
    """``name[extra,...]>=1.0; marker`` → (normalized name, extras)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", requirement)
    if match is None:
        raise ValueError(f"cannot read requirement {requirement!r}")
    extras = {normalize(e) for e in (match.group(2) or "").split(",") if e.strip()}
    return normalize(match.group(1)), extras


def module_owners() -> dict[str, set[str]]:
    """Dotted module name → the installed distributions that ship it."""
    owners: defaultdict[str, set[str]] = defaultdict(set)
    for dist in distributions():
        name = normalize(dist.metadata["Name"])
        for file in dist.files or ():
            parts = file.parts
            if not parts or parts[0] == ".." or parts[0].endswith((".dist-info", ".data")):
                continue
            stem = parts[-1].split(".", 1)[0]
            if not parts[-1].endswith((".py", ".so", ".pyd")) or not stem.isidentifier():
                continue
            dotted = [*parts[:-1]] if stem == "__init__" else [*parts[:-1], stem]
            for depth in range(1, len(dotted) + 1):
                owners[".".join(dotted[:depth])].add(name)
    return owners


def member_packages() -> dict[str, str]:
    """Each member's top-level package → the member's distribution name."""
    packages = {}
    for member in MEMBERS:
        project = tomllib.loads((ROOT / member / "pyproject.toml").read_text("utf-8"))
        name = normalize(project["project"]["name"])
        for path in project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]:
            packages[Path(path).name] = name
    return packages


def imports(src: Path) -> dict[str, set[str]]:
    """Absolute imports in ``src``: dotted candidates → files. ``from a import b`` gives
    ``a.b`` (b may be a module) before ``a``."""
    found: defaultdict[str, set[str]] = defaultdict(set)
    for path in sorted(src.rglob("*.py")):
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found[alias.name].add(where)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    found[f"{node.module}.{alias.name}\0{node.module}"].add(where)
    return found


def owner(
    candidate: str, owners: dict[str, set[str]], own: dict[str, str]
) -> tuple[str, str | None]:
    """(module, its distribution; None for the standard library or an unknown module)."""
    names = candidate.split("\0")
    for name in names:
        top = name.split(".")[0]
        if top in own:
            return name, own[top]
        if top in sys.stdlib_module_names or top == "__future__":
            return name, None
        parts = name.split(".")
        for depth in range(len(parts), 0, -1):
            dists = owners.get(".".join(parts[:depth]), set())
            if len(dists) == 1:
                return name, next(iter(dists))
            if dists:
                break  # a namespace package: a deeper name decides, or the next candidate
    return names[-1], "?"


def check(member: str, owners: dict[str, set[str]], own: dict[str, str]) -> list[str]:
    project = tomllib.loads((ROOT / member / "pyproject.toml").read_text("utf-8"))["project"]
    name = normalize(project["name"])
    declared: dict[str, set[str]] = {}
    for requirement in project.get("dependencies", []):
        dist, extras = parse_requirement(requirement)
        declared[dist] = extras
    used: defaultdict[str, set[str]] = defaultdict(set)
    problems = []
    for candidate, files in imports(ROOT / member / "src").items():
        module, source = owner(candidate, owners, own)
        if source == "?":
            problems.append(f"{module} (in {min(files)}) is not installed: which package is it?")
        elif source is not None and source != name:
            used[source] |= files
    for dist in sorted(used.keys() - declared.keys()):
        problems.append(f"imports {dist} but does not declare it (in {min(used[dist])})")
    allowed = USED_WITHOUT_IMPORT.get(name, {})
    for dist in sorted(declared.keys() - used.keys() - allowed.keys()):
        problems.append(f"declares {dist} but never imports it")
    for dist in sorted(allowed.keys() - declared.keys()):
        problems.append(f"USED_WITHOUT_IMPORT names {dist}, which it does not declare")
    for dist, extras in sorted(declared.items()):
        for extra in sorted(extras - EXTRAS.get(name, {}).get(dist, {}).keys()):
            problems.append(f"declares {dist}[{extra}]: is the extra needed? (EXTRAS)")
    return [f"{member}: {p}" for p in problems]


def main() -> int:
    owners = module_owners()
    own = member_packages()
    problems = [p for member in MEMBERS for p in check(member, owners, own)]
    for problem in problems:
        print(problem)
    if not problems:
        print(f"dependencies match imports in {len(MEMBERS)} members")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
