"""The shape figures of the code: what the structure issue measures.

    .venv/bin/python scripts/code_shape.py

Prints the line count of each service's ``app.py``, every function longer than
60 lines, and every place that builds an error body (a dict literal, or a
``dict(...)`` call, with both ``reason`` and ``message`` keys) in the services'
source. Tests and scripts are not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [
    ROOT / "services" / "common" / "src",
    ROOT / "services" / "shop" / "src",
    ROOT / "gateway" / "src",
    ROOT / "agent" / "src",
    ROOT / "retriever" / "src",
]
LONG = 60


def python_files() -> list[Path]:
    return sorted(p for src in SOURCES for p in src.rglob("*.py"))


def _keys(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Dict):
        return {
            k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
        }
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {k.arg for k in node.keywords if k.arg}
    return set()


def main() -> None:
    print("app.py line counts:")
    for src in SOURCES:
        for app in sorted(src.glob("*/app.py")):
            print(f"  {app.relative_to(ROOT)}: {len(app.read_text().splitlines())}")
    long_functions: list[tuple[int, str]] = []
    error_bodies: list[str] = []
    for path in python_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONG:
                    long_functions.append((length, f"{where}:{node.lineno} {node.name}"))
            if {"reason", "message"} <= _keys(node):
                error_bodies.append(f"{where}:{node.lineno}")  # type: ignore[attr-defined]
    print(f"functions over {LONG} lines: {len(long_functions)}")
    for length, name in sorted(long_functions, reverse=True):
        print(f"  {length:4d}  {name}")
    print(f"places that build an error body: {len(error_bodies)}")
    for place in error_bodies:
        print(f"  {place}")


if __name__ == "__main__":
    main()
