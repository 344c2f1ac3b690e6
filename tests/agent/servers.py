"""Run an ASGI app on a loopback port in a background thread (its own event loop).

The agent under test reaches these over real HTTP, as it reaches the gateway
and the model vendors in production, whether the agent runs in the test's
process or as a subprocess.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

import uvicorn

from tests.e2e.processes import free_port


class ServerThread:
    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="on",
            # A request a test left hanging is cancelled after this, then the
            # app shuts down cleanly.
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {self.port} did not start")
            time.sleep(0.02)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=15)
