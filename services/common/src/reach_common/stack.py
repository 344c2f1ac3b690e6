"""``make run``: the whole Reach stack on one machine, with no Docker.

1. Start the embedded PostgreSQL and Redis (or use ``DATABASE_URL`` / ``REDIS_URL``).
2. Migrate the database to head, and mint the API key the gateway's ``rag_*``
   tools use to call the retriever (a tool secret, bound to the retriever's host).
3. Start shop, retriever, gateway and agent as child processes, each in its
   own process group, with their output prefixed by name.
4. Wait until every ``/readyz`` answers 200, then print the URLs.

Ctrl-C or SIGTERM stops every child (SIGTERM, then SIGKILL after a grace
period) and then the embedded servers this process started, so nothing is
left running. Data stays in ``REACH_DATA_DIR`` (``.reach/``) for the next run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO

import httpx
import psycopg
import typer
from pydantic import Field
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from reach_common import migrate
from reach_common.auth.keys import hash_key, new_key
from reach_common.db import libpq_url
from reach_common.embedded import EmbeddedServers, EmbeddedStartError
from reach_common.processes import stop_processes
from reach_common.settings import DatabaseSettings, EmbeddedSettings, RedisSettings

console = Console(highlight=False)
cli = typer.Typer(add_completion=False, help="Run the Reach stack locally.")

SERVICE_KEY_USER = "svc-gateway-tools"
SERVICE_KEY_SECRET = "retriever_api_key"  # noqa: S105 - the secret's name, not its value
SERVICE_KEY_ENV = "REACH_SECRET_RETRIEVER_API_KEY"
COLOURS = {"shop": "magenta", "retriever": "cyan", "gateway": "green", "agent": "yellow"}


class StackSettings(DatabaseSettings, RedisSettings, EmbeddedSettings):
    host: str = Field("127.0.0.1", description="Interface every service binds to.")
    shop_port: int = 9000
    retriever_port: int = 8082
    gateway_port: int = 8080
    agent_port: int = 8081
    ready_timeout_s: float = Field(60.0, description="How long to wait for every /readyz.")
    ready_s_per_manifest: float = Field(
        0.05,
        ge=0,
        description="More time to wait for /readyz per manifest the gateway loads at start "
        "(`TOOL_AUTO_DISCOVERY`): a folder of thousands takes minutes to embed.",
    )
    stop_grace_s: float = Field(
        10.0, description="SIGTERM → SIGKILL grace for the children to stop."
    )


@dataclass
class Child:
    name: str
    port: int
    process: subprocess.Popen[bytes] | None = None
    pump: threading.Thread | None = field(default=None, repr=False)


def _pump(name: str, stream: IO[bytes]) -> None:
    colour = COLOURS.get(name, "white")
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace").rstrip()
        console.print(f"[{colour}]{name:>9} |[/] {line}", markup=True, soft_wrap=True)


class Stack:
    def __init__(self, settings: StackSettings) -> None:
        self.settings = settings
        self.servers: EmbeddedServers | None = None
        self.children = [
            Child("shop", settings.shop_port),
            Child("retriever", settings.retriever_port),
            Child("gateway", settings.gateway_port),
            Child("agent", settings.agent_port),
        ]
        self._stopping = threading.Event()
        self.service_key: str | None = None

    def url(self, child: Child) -> str:
        return f"http://{self.settings.host}:{child.port}"

    def start_backends(self) -> tuple[str, str]:
        s = self.settings
        if not s.database_url or not s.redis_url:
            self.servers = EmbeddedServers(Path(s.reach_data_dir)).start(
                need_postgres=not s.database_url, need_redis=not s.redis_url
            )
        database_url = s.database_url or self.servers.postgres.url  # type: ignore[union-attr]
        redis_url = s.redis_url or self.servers.redis.url  # type: ignore[union-attr]
        return database_url, redis_url

    def child_env(self, child: Child, database_url: str, redis_url: str) -> dict[str, str]:
        by_name = {c.name: self.url(c) for c in self.children}
        env = dict(os.environ)
        env.update(
            DATABASE_URL=database_url,
            REDIS_URL=redis_url,
            HOST=self.settings.host,
            PORT=str(child.port),
            SHOP_URL=by_name["shop"],
            RETRIEVER_URL=by_name["retriever"],
            GATEWAY_URL=by_name["gateway"],
            AGENT_URL=by_name["agent"],
            PYTHONUNBUFFERED="1",
        )
        env.pop(f"{child.name.upper()}_PORT", None)  # PORT above is the one to use
        # The local stack serves the shipped tools: the gateway loads and
        # watches manifests/ unless told otherwise.
        env.setdefault("TOOL_AUTO_DISCOVERY", "true")
        env.setdefault("MANIFESTS_DIR", str(Path("manifests").resolve()))
        if child.name == "gateway" and self.service_key:
            # The rag_* tools call the retriever with this key (role retriever_writer),
            # bound to the retriever's host as every tool secret must be.
            env.setdefault(SERVICE_KEY_ENV, self.service_key)
            env.setdefault("TOOL_SECRET_HOSTS", json.dumps({SERVICE_KEY_SECRET: ["retriever"]}))
        return env

    def start_children(self, database_url: str, redis_url: str) -> None:
        for child in self.children:
            child.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                [sys.executable, "-m", child.name],
                env=self.child_env(child, database_url, redis_url),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # we, not the terminal, decide when it stops
            )
            assert child.process.stdout is not None
            child.pump = threading.Thread(
                target=_pump, args=(child.name, child.process.stdout), daemon=True
            )
            child.pump.start()

    def ready_limit_s(self) -> float:
        """``ready_timeout_s``, plus ``ready_s_per_manifest`` for each manifest the gateway
        loads at start: the limit follows the registry's size."""
        gateway = next(c for c in self.children if c.name == "gateway")
        env = self.child_env(gateway, "", "")
        if env.get("TOOL_AUTO_DISCOVERY", "").lower() not in ("1", "true", "yes", "on"):
            return self.settings.ready_timeout_s
        folder = Path(env.get("MANIFESTS_DIR", "manifests"))
        count = sum(1 for p in folder.glob("*.json") if p.name != "schema.json")
        return self.settings.ready_timeout_s + count * self.settings.ready_s_per_manifest

    def wait_ready(self) -> bool:
        limit = self.ready_limit_s()
        deadline = time.monotonic() + limit
        pending = list(self.children)
        with httpx.Client(timeout=1.0) as http:
            while pending and time.monotonic() < deadline and not self._stopping.is_set():
                for child in list(pending):
                    assert child.process is not None
                    if child.process.poll() is not None:
                        console.print(f"[red]{child.name} exited with {child.process.returncode}")
                        return False
                    try:
                        if http.get(self.url(child) + "/readyz").status_code == 200:
                            pending.remove(child)
                    except httpx.HTTPError:
                        pass
                time.sleep(0.2)
        if pending:
            names = ", ".join(c.name for c in pending)
            console.print(f"[red]not ready after {limit:.0f}s: {names}")
        return not pending

    def print_urls(self) -> None:
        table = Table(title="Reach is up", show_header=True)
        table.add_column("service")
        table.add_column("URL")
        table.add_column("API docs")
        for child in self.children:
            table.add_row(child.name, self.url(child), self.url(child) + "/docs")
        console.print(table)
        gateway = next((c for c in self.children if c.name == "gateway"), None)
        if gateway is not None:
            console.print(
                f"Traces in a browser: {self.url(gateway)}/ui/traces · MCP: "
                f"{self.url(gateway)}/mcp · the `reach` command: .venv/bin/reach --help"
            )
        console.print("Press Ctrl-C to stop everything.")

    def watch(self) -> None:
        """Block until asked to stop or until a child dies."""
        while not self._stopping.wait(0.5):
            for child in self.children:
                if child.process is not None and child.process.poll() is not None:
                    console.print(f"[red]{child.name} exited with {child.process.returncode}")
                    return

    def request_stop(self, signum: int, _: FrameType | None) -> None:
        self._stopping.set()

    def stop(self) -> None:
        running = [c.process for c in reversed(self.children) if c.process is not None]
        stop_processes(running, self.settings.stop_grace_s, group=True)
        for child in self.children:
            if child.pump is not None:
                child.pump.join(timeout=2)
        if self.servers is not None:
            self.servers.stop()
        console.print("stopped: every service and embedded server is down")


def mint_service_key(database_url: str) -> str:
    """A fresh API key for the gateway's calls to the retriever; the last run's is revoked.

    It lives only in this process and the gateway's environment (as a tool secret);
    the database keeps its hash, like every key.
    """
    with psycopg.connect(libpq_url(database_url)) as conn:
        conn.execute(
            "UPDATE auth.api_key SET revoked_at = now() WHERE user_id = %s AND revoked_at IS NULL",
            (SERVICE_KEY_USER,),
        )
    return mint_key(database_url, SERVICE_KEY_USER, ["retriever_writer"])


def mint_key(database_url: str, user_id: str, roles: list[str]) -> str:
    """A new API key for ``user_id`` with ``roles``, as an operator makes one: the
    database keeps only its hash."""
    key_id, key = new_key()
    with psycopg.connect(libpq_url(database_url)) as conn:
        conn.execute(
            "INSERT INTO auth.api_key (key_id, key_hash, user_id, roles) VALUES (%s, %s, %s, %s)",
            (key_id, hash_key(key), user_id, roles),
        )
    return key


@cli.command()
def run() -> None:
    """Start the embedded servers, migrate, run all four services; Ctrl-C stops all."""
    stack = Stack(StackSettings())
    signal.signal(signal.SIGINT, stack.request_stop)
    signal.signal(signal.SIGTERM, stack.request_stop)
    code = 1
    try:
        try:
            database_url, redis_url = stack.start_backends()
        except EmbeddedStartError as exc:
            console.print(f"[red]cannot start: {escape(str(exc))}", markup=True, soft_wrap=True)
            raise typer.Exit(1) from None
        console.print("migrating the database to head")
        migrate.upgrade(database_url)
        stack.service_key = mint_service_key(database_url)
        stack.start_children(database_url, redis_url)
        if stack.wait_ready():
            stack.print_urls()
            stack.watch()
            code = 0 if stack._stopping.is_set() else 1
    finally:
        stack.stop()
    raise typer.Exit(code)


@cli.command("db-upgrade")
def db_upgrade(revision: str = "heads") -> None:
    """Migrate the database (the embedded one unless DATABASE_URL is set)."""
    settings = StackSettings()
    servers = None
    url = settings.database_url
    if not url:
        servers = EmbeddedServers(Path(settings.reach_data_dir)).start(need_redis=False)
        url = servers.postgres.url  # type: ignore[union-attr]
    try:
        migrate.upgrade(url, revision)
        console.print(f"database at revision {revision}")
    finally:
        if servers is not None:
            servers.stop()


if __name__ == "__main__":
    cli()
