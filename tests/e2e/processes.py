"""Run services as real processes on loopback ports, as production does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reach_common.processes import free_port, running_service, stop_process, wait_until_ready

__all__ = ["free_port", "service_process", "stop_process", "wait_until_ready"]


@contextmanager
def service_process(module: str, port: int, env: dict[str, str], log_dir: Path) -> Iterator[str]:
    """``python -m <module>`` on ``port``; yields its base URL, SIGTERMs it on exit."""
    with running_service(module, port, env, log_dir) as service:
        yield service.url
