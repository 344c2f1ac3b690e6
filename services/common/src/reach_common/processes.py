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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
    """Poll ``url/readyz`` until it answers 200; fail fast if the process exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited with {process.returncode} before it was ready")
        try:
            if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{url}/readyz not ready after {timeout}s")


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
