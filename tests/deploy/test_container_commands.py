"""The images' commands, run here as the containers would run them.

No engine, but the same commands: the Dockerfile's service CMD (through
``sh -c``, as Docker runs it) with the image's environment, compose's
healthcheck against it, the Kubernetes probe paths, and the migrate target's
command against an empty database. The interpreter and packages are the
project's .venv instead of the image's /opt/venv, both installed from the lock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import psutil
import psycopg
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url

from reach_common.db import libpq_url
from reach_common.processes import stop_process
from tests.conftest import Backends
from tests.deploy import files
from tests.e2e.processes import free_port

VENV_BIN = str(Path(sys.executable).parent)
dockerfile = files.parse_dockerfile()


def image_command(target: str) -> list[str]:
    command = dockerfile.stage(target).all("CMD")[-1].exec_form()
    assert command is not None
    return command


def compose_healthcheck(service: str) -> list[str]:
    test: list[str] = files.load_compose_raw()["services"][service]["healthcheck"]["test"]
    assert test[0] == "CMD"
    # `python` in the image is /opt/venv's; here it is this venv's.
    return [sys.executable if word == "python" else word for word in test[1:]]


def image_environment(service: str, port: int, backends: Backends) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
    env.update(
        REACH_SERVICE=service,  # ENV of the service stage (ARG SERVICE)
        PORT=str(port),  # ENV of the service stage (ARG PORT)
        HOST="127.0.0.1",  # the image says 0.0.0.0; tests stay on loopback
        HF_HUB_OFFLINE="1",
        DATABASE_URL=backends.database_url,
        REDIS_URL=backends.redis_url,
        LOG_LEVEL="WARNING",
    )
    env.pop(f"{service.upper()}_PORT", None)
    return env


@contextmanager
def container(service: str, backends: Backends, log_dir: Path) -> Iterator[tuple[int, int]]:
    """The service CMD running; yields (pid, port). Stops it with SIGTERM like `docker stop`."""
    port = free_port()
    env = image_environment(service, port, backends)
    with (log_dir / f"{service}.log").open("wb") as log:
        process = subprocess.Popen(
            image_command("service"),
            env=env,
            cwd=files.REPO_ROOT,  # the image's WORKDIR holds the same files
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield process.pid, port
        finally:
            stop_process(process, grace_s=25)  # docker stop: SIGTERM, then SIGKILL


def healthy(service: str, port: int) -> bool:
    result = subprocess.run(
        compose_healthcheck(service),
        env={**os.environ, "PORT": str(port)},
        capture_output=True,
        timeout=10,
        check=False,
    )
    return result.returncode == 0


def accepted_from(pid: int, port: int, client_ip: str) -> bool:
    """The process ``pid`` holds an accepted connection from ``client_ip`` on ``port``."""
    return any(
        c.status == psutil.CONN_ESTABLISHED
        and c.laddr.port == port
        and c.raddr
        and c.raddr.ip == client_ip
        for c in psutil.Process(pid).net_connections(kind="tcp")
    )


def ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.mark.slow
def test_service_commands_start_pass_their_checks_and_stop_on_sigterm(
    clean_state: Backends, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        running = {
            s: stack.enter_context(container(s, clean_state, tmp_path)) for s in files.SERVICES
        }
        deadline = time.monotonic() + 90
        pending = set(files.SERVICES)
        while pending and time.monotonic() < deadline:
            for service in sorted(pending):
                pid, port = running[service]
                assert psutil.pid_exists(pid), (tmp_path / f"{service}.log").read_text()[-2000:]
                if ready(port):
                    pending.discard(service)
            time.sleep(0.2)
        logs = {s: (tmp_path / f"{s}.log").read_text()[-2000:] for s in pending}
        assert not pending, logs
        for service, (pid, port) in running.items():
            # `exec` in the CMD: uvicorn itself is the process Docker signals, not sh.
            assert "uvicorn" in " ".join(psutil.Process(pid).cmdline()), service
            # compose's healthcheck command, as Docker runs it in the container
            assert healthy(service, port), service
            # The paths the Kubernetes probes use.
            live = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
            assert live.status_code == 200, service
            assert live.json() == {"status": "ok"}, service
            readiness = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
            assert readiness.status_code == 200, service
            assert readiness.json() == {"status": "ok", "checks": {"postgres": "ok", "redis": "ok"}}
        # SIGTERM (docker stop, a pod's deletion) drains: a request in flight
        # when it arrives still gets its answer. The report takes 1.5 s. The request
        # comes from its own loopback address, so the shop's accepted connection for it
        # can be seen (bounded polling) before the signal is sent.
        shop_pid, shop_port = running["shop"]
        client_ip = "127.0.0.2"
        slow_client = httpx.Client(
            transport=httpx.HTTPTransport(local_address=client_ip), timeout=20
        )
        with slow_client, ThreadPoolExecutor(max_workers=1) as pool:
            in_flight = pool.submit(
                slow_client.get,
                f"http://127.0.0.1:{shop_port}/api/reports/monthly?delay_ms=1500",
            )
            deadline = time.monotonic() + 10
            while not accepted_from(shop_pid, shop_port, client_ip):
                assert time.monotonic() < deadline, "the shop never accepted the request"
                assert not in_flight.done(), in_flight.result()
                time.sleep(0.01)
            for pid, _ in running.values():
                os.kill(pid, signal.SIGTERM)
            report = in_flight.result()
        assert report.status_code == 200
        assert "month" in report.json()
        for service, (pid, port) in running.items():
            # uvicorn re-raises the SIGTERM it handled once it has shut down.
            code = psutil.Process(pid).wait(timeout=25)
            assert code in (0, -signal.SIGTERM), f"{service} exited with {code}"
            assert not healthy(service, port), service


def test_service_command_refuses_to_start_without_database_url(
    backends: Backends, tmp_path: Path
) -> None:
    """In a container a missing DATABASE_URL is an error, never an embedded server."""
    env = image_environment("shop", free_port(), backends)
    del env["DATABASE_URL"]
    result = subprocess.run(
        image_command("service"),
        env=env,
        cwd=files.REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert "DATABASE_URL and REDIS_URL must be set" in result.stdout + result.stderr


@pytest.fixture
def empty_database(backends: Backends) -> Iterator[str]:
    """A new, empty database on the test server; dropped afterwards."""
    name = f"reach_migrate_{uuid.uuid4().hex[:8]}"
    admin = libpq_url(backends.database_url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield (
            make_url(backends.database_url).set(database=name).render_as_string(hide_password=False)
        )
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_migrate_command_brings_an_empty_database_to_every_head(empty_database: str) -> None:
    command = image_command("migrate")
    env = {**os.environ, "DATABASE_URL": empty_database, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
    result = subprocess.run(
        command,
        env=env,
        cwd=files.REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    heads = set(
        ScriptDirectory.from_config(Config(str(files.REPO_ROOT / "alembic.ini"))).get_heads()
    )
    assert len(heads) >= 1
    with psycopg.connect(libpq_url(empty_database)) as conn:
        applied = {row[0] for row in conn.execute("SELECT version_num FROM public.alembic_version")}
        vector = conn.execute(
            "SELECT extname FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
    assert applied == heads
    assert vector == ("vector",)
