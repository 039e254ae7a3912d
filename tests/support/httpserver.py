"""``shipcode-mcp APP --http 127.0.0.1:PORT`` as a subprocess on an ephemeral port, for the HTTP tests."""

from __future__ import annotations

import http.client
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from support.wire import engine_env

APP = str(Path(__file__).parents[1] / "apps" / "web.py")
MODERN_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HttpServer:
    """``shipcode-mcp APP --http 127.0.0.1:PORT ...`` until stopped."""

    def __init__(
        self,
        engine_name: str,
        *args: str,
        env: dict[str, str] | None = None,
        app: str = APP,
        factory: str | None = None,
    ) -> None:
        """``factory`` (``module:function`` of a module in ``app``'s folder): serve what it builds with
        ``uvicorn --factory`` instead."""
        self.port = free_port()
        if factory is None:
            command = ["-m", "shipcode_mcp", app, "--http", f"127.0.0.1:{self.port}"]
        else:
            command = [
                "-m",
                "uvicorn",
                "--factory",
                "--app-dir",
                str(Path(app).parent),
                factory,
                "--port",
                str(self.port),
            ]
        self.process = subprocess.Popen(
            [sys.executable, *command, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**engine_env(engine_name), **(env or {})},
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"the server did not start: {self.process.stderr.read()!r}") from None
                time.sleep(0.05)

    def post(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("POST", "/mcp", body, headers)
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            self.process.stderr.close()
