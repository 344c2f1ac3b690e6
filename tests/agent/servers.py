"""Run an ASGI app on a loopback port in a background thread (its own event loop).

The agent under test reaches these over real HTTP, as it reaches the gateway
and the model vendors in production, whether the agent runs in the test's
process or as a subprocess.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

import uvicorn


class ServerThread:
    def __init__(self, app: Any, port: int | None = None) -> None:
        # Without a port asked for, the socket is bound here and handed to uvicorn: a port
        # picked free and bound later may be taken meanwhile by another test worker.
        self._socket: socket.socket | None = None
        if port is None:
            self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._socket.bind(("127.0.0.1", 0))
            port = int(self._socket.getsockname()[1])
        self.port = port
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
        sockets = [self._socket] if self._socket is not None else None
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": sockets}, daemon=True
        )

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
        if self._socket is not None:
            self._socket.close()
