"""`make run`'s runner: ready within 60 s, Ctrl-C leaves nothing behind, data survives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from tests.e2e.processes import free_port

SERVICES = ("shop", "retriever", "gateway", "agent")


def start_stack(data_dir: Path, ports: dict[str, int], log: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["REACH_DATA_DIR"] = str(data_dir)
    env.update({f"{name.upper()}_PORT": str(port) for name, port in ports.items()})
    return subprocess.Popen(
        [sys.executable, "-m", "reach_common.stack", "run"],
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


def wait_all_ready(ports: dict[str, int], stack: subprocess.Popen[bytes], timeout: float) -> None:
    """Poll every /readyz until all answer 200; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pending = dict(ports)
    while pending and time.monotonic() < deadline:
        assert stack.poll() is None, "the stack exited before it was ready"
        for name, port in list(pending.items()):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    del pending[name]
            except httpx.HTTPError:
                pass
        time.sleep(0.2)
    assert not pending, f"not ready within {timeout}s: {sorted(pending)}"


def processes_of(stack: subprocess.Popen[bytes], data_dir: Path) -> list[psutil.Process]:
    """The runner's children plus the embedded servers (postgres daemonises)."""
    procs = psutil.Process(stack.pid).children(recursive=True)
    pg_pid = int((data_dir / "postgres" / "postmaster.pid").read_text().split()[0])
    redis_pid = int((data_dir / "redis" / "redis.pid").read_text())
    procs += [psutil.Process(pg_pid), psutil.Process(redis_pid)]
    procs += psutil.Process(pg_pid).children(recursive=True)
    return procs


def alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def still_alive(procs: list[psutil.Process], timeout: float = 15) -> list[psutil.Process]:
    """The processes still running once all are gone or ``timeout`` passed (bounded polling)."""
    deadline = time.monotonic() + timeout
    while (left := [p for p in procs if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def interrupt(stack: subprocess.Popen[bytes]) -> int:
    stack.send_signal(signal.SIGINT)
    return stack.wait(timeout=45)


@pytest.mark.slow
def test_run_ready_stop_clean_and_keep_data(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    ports = {name: free_port() for name in SERVICES}
    log = tmp_path / "stack.log"

    stack = start_stack(data_dir, ports, log)
    try:
        wait_all_ready(ports, stack, timeout=60)
        order = httpx.post(
            f"http://127.0.0.1:{ports['shop']}/api/orders",
            json={"sku": "SKU2024001", "quantity": 2, "customer": "lifecycle-test"},
        )
        assert order.status_code == 201, order.text
        order_id = order.json()["order_id"]
        procs = processes_of(stack, data_dir)
        assert len(procs) >= 6
    finally:
        code = interrupt(stack)
    assert code == 0, log.read_text()[-3000:]
    assert still_alive(procs) == [], log.read_text()[-3000:]
    # Once up, the stack says where everything is, the trace viewer included.
    assert f"http://127.0.0.1:{ports['gateway']}/ui/traces" in log.read_text()

    stack = start_stack(data_dir, ports, log)
    try:
        wait_all_ready(ports, stack, timeout=60)
        again = httpx.get(f"http://127.0.0.1:{ports['shop']}/api/orders/{order_id}")
        procs = processes_of(stack, data_dir)
    finally:
        assert interrupt(stack) == 0
    assert again.status_code == 200, again.text
    assert again.json()["customer"] == "lifecycle-test"
    assert still_alive(procs) == []
