"""What every ``reach`` command shares: where the services are, who is calling, and how
an answer is printed (a table for people, the server's JSON with ``--json``)."""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from reach_cli.client import CommandFailed, Target

DEFAULT_RETRIEVER_URL = "http://127.0.0.1:8082"
DEFAULT_AGENT_URL = "http://127.0.0.1:8081"

out = Console(soft_wrap=True)
err = Console(stderr=True)


class State:
    """The global options, set once by the app's callback."""

    target = Target()
    retriever = Target(url=DEFAULT_RETRIEVER_URL)
    agent = Target(url=DEFAULT_AGENT_URL)
    as_json = False


def fail(reason: str, message: str, exit_code: int = 1) -> typer.Exit:
    """Print a refusal (JSON with ``--json``) and return the exit to raise."""
    if State.as_json:
        print(json.dumps({"reason": reason, "message": message}))
    else:
        err.print(f"[bold red]{reason}[/]: {message}", markup=True, highlight=False)
    return typer.Exit(exit_code)


def call(method: str, path: str, *, target: Target | None = None, **kwargs: Any) -> Any:
    """The server's answer, or exit with its reason."""
    try:
        return (target or State.target).request(method, path, **kwargs)[1]
    except CommandFailed as exc:
        raise fail(exc.reason, exc.message, exc.exit_code) from exc


def show(body: Any, table: Table | None = None) -> None:
    if State.as_json or table is None:
        print(json.dumps(body, ensure_ascii=False, indent=None if State.as_json else 2))
    else:
        out.print(table)


def with_identity(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the claimed identity (``--user``/``--roles``) as its ``user_context``."""
    context = State.target.user_context()
    return {**body, "user_context": context} if context else body


def parse_value(text: str) -> Any:
    """``key=value`` values: JSON when they parse (numbers, true, lists), else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text
