"""Services started as child processes get ports of their own and are ready only when
they answer themselves (``reach_common.processes``).

A CI run once failed because a gateway was handed a port another test worker's service
took first: the gateway's bind failed, but the other service's ``/readyz`` answered 200,
so the test talked to the wrong service.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from reach_common.processes import PORT_RANGE_ENV, free_port, stop_process, wait_until_ready

# A server that answers 200 to every GET, on the port given as its argument.
SERVER = """
import http.server, sys
class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ok).serve_forever()
"""


@contextmanager
def child(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, *args])
    try:
        yield process
    finally:
        stop_process(process, grace_s=5)


def test_ports_come_from_the_range_set_and_never_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    low = 40000 + (free_port() % 1000) * 10  # a block of its own in every run
    monkeypatch.setenv(PORT_RANGE_ENV, f"{low}-{low + 59}")
    ports = [free_port() for _ in range(40)]
    assert len(set(ports)) == 40
    assert all(low <= port <= low + 59 for port in ports)


@pytest.mark.parametrize("text", ["", "10-20", "5000", "abc-def", "30000-20000", "1-99999"])
def test_a_range_that_is_not_one_leaves_the_pick_to_the_kernel(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setenv(PORT_RANGE_ENV, text)
    assert 1024 <= free_port() <= 65535


def test_a_service_is_ready_when_it_answers_itself() -> None:
    port = free_port()
    with child("-c", SERVER, str(port)) as process:
        wait_until_ready(f"http://127.0.0.1:{port}", process, timeout=30)


def test_another_programs_answer_on_the_port_is_not_readiness() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with child("-c", SERVER, str(port)) as other:
        wait_until_ready(url, other, timeout=30)
        # A service that never binds the port: the other program's 200 is not its own.
        with child("-c", "import time; time.sleep(60)") as silent, pytest.raises(TimeoutError):
            wait_until_ready(url, silent, timeout=2)
        # A service whose bind fails, as a gateway's does on a taken port: it exits.
        with child("-c", SERVER, str(port)) as loser, pytest.raises(RuntimeError, match="exited"):
            wait_until_ready(url, loser, timeout=30)
