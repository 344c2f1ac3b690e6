"""Child processes: run a Reach service on a loopback port, and stop children.

Production runs each service as its own process, so end-to-end tests and
benchmarks do too: ``python -m <service>`` on a free 127.0.0.1 port, ready once
``/readyz`` answers 200, stopped with SIGTERM (then SIGKILL) on exit.

:func:`stop_processes` is the one way a child is stopped (services, the
``make run`` stack's children, the embedded Redis): SIGTERM, a grace period
to shut down, then SIGKILL.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

# Ports this process has handed out: free_port never gives one twice (see below).
_HANDED_OUT: set[int] = set()
PORT_RANGE_ENV = "REACH_PORT_RANGE"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now.

    A port is free only until somebody binds it, so two callers handed the same port
    both start a server on it and one of them loses. The kernel's own pick (bind to port
    0) can hand the same port to two test workers a moment apart. With
    ``REACH_PORT_RANGE=low-high`` set (``tests/conftest.py`` gives each pytest-xdist
    worker a range of its own, below the kernel's ephemeral range), the port is drawn
    from that range and never handed out twice by this process. Without it, the kernel
    picks.
    """
    span = _port_range(os.environ.get(PORT_RANGE_ENV, ""))
    if span is not None:
        low, high = span
        for _ in range(200):
            port = random.randint(low, high)  # noqa: S311 - a port, not a secret
            if port not in _HANDED_OUT and _bindable(port):
                _HANDED_OUT.add(port)
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    _HANDED_OUT.add(port)
    return port


def _port_range(text: str) -> tuple[int, int] | None:
    low, _, high = text.partition("-")
    if not (low.isdigit() and high.isdigit()):
        return None
    first, last = int(low), int(high)
    return (first, last) if 1024 <= first <= last <= 65535 else None


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def stop_processes(
    processes: Sequence[subprocess.Popen[bytes]], grace_s: float = 15.0, *, group: bool = False
) -> None:
    """Stop children: SIGTERM to each still running, then wait up to ``grace_s`` (all
    together) for them to exit; SIGKILL whichever has not. ``group``: signal each child's
    process group (a child started with ``start_new_session=True``, and its own children).
    """
    for process in processes:
        _signal(process, signal.SIGTERM, group)
    deadline = time.monotonic() + grace_s
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal(process, signal.SIGKILL, group)
            process.wait()


def stop_process(
    process: subprocess.Popen[bytes], grace_s: float = 15.0, *, group: bool = False
) -> int:
    """:func:`stop_processes` for one child; returns its exit code."""
    stop_processes([process], grace_s, group=group)
    return process.returncode


# A service is ready in 5-10 s on a quiet machine. On two shared cores running the whole
# test suite, imports alone have taken over 30 s (a gateway missed that limit): a wait
# this long still fails a service that hangs, without failing one that is merely slow.
READY_TIMEOUT_S = 90.0


def _signal(process: subprocess.Popen[bytes], signum: signal.Signals, group: bool) -> None:
    if process.poll() is not None:
        return
    with suppress(ProcessLookupError):  # it exited meanwhile
        if group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)


def wait_until_ready(
    url: str, process: subprocess.Popen[bytes], timeout: float = READY_TIMEOUT_S
) -> None:
    """Poll ``url/readyz`` until ``process`` answers 200 there; fail fast if it exits.

    A 200 counts only while ``process`` (or a child of it) holds the listening socket:
    when another program already had the port, its answer is not this service's, and
    this process is about to exit on its failed bind.
    """
    port = httpx.URL(url).port
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited with {process.returncode} before it was ready")
        try:
            answered = httpx.get(url + "/readyz", timeout=1).status_code == 200
        except httpx.HTTPError:
            answered = False
        if answered and (port is None or listens_on(process.pid, port)):
            return
        time.sleep(0.1)
    raise TimeoutError(f"{url}/readyz not ready after {timeout}s")


def listens_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` or one of its children listens on TCP ``port``. True when
    the system will not say (a platform that keeps other processes' sockets private)."""
    try:
        root = psutil.Process(pid)
        for proc in (root, *root.children(recursive=True)):
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                    return True
    except psutil.AccessDenied:
        return True
    except psutil.Error:
        return False
    return False


@dataclass(frozen=True)
class RunningService:
    url: str
    pid: int


@contextmanager
def running_service(
    module: str,
    port: int,
    env: dict[str, str],
    log_dir: Path,
    *,
    cwd: Path | None = None,
    ready_timeout: float = READY_TIMEOUT_S,
) -> Iterator[RunningService]:
    """``python -m <module>`` on ``port``, output in ``log_dir/<module>.log``."""
    with (log_dir / f"{module}.log").open("wb") as log:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", module],
            env={**os.environ, **env, "PORT": str(port), "HOST": "127.0.0.1"},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_ready(url, process, ready_timeout)
            yield RunningService(url, process.pid)
        finally:
            stop_process(process)
