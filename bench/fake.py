"""The fake Cooked in its own process, driven through its /_fake/ control surface.

The fake runs out of process so that its request-handling threads never compete for the
benchmark's GIL: the load generator (many MCP clients at once) and the fake would
otherwise slow each other down and blur what is measured. The class mirrors the
in-process ``FakeCooked`` API the tests use (``requests``, ``clear_requests()``,
``login_count``, ``expire_sessions()``, ``delay``, ``reset()``, ``set_import_result()``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx

from .procs import HOST, PYTHON, Child, free_port, spawn

ImportResult = Literal["saved", "draft", "fail"]


@dataclass(frozen=True)
class Request:
    """One request the fake received: what the request counts are made of."""

    method: str
    path: str
    status: int

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


class RemoteFake:
    def __init__(self, child: Child, port: int) -> None:
        self.child = child
        self.base_url = f"http://{HOST}:{port}"
        self._control = httpx.Client(base_url=f"{self.base_url}/_fake", timeout=10.0)
        self._delay = 0.0

    def close(self) -> None:
        self._control.close()

    def _post(self, action: str, body: dict[str, Any] | None = None) -> Any:
        response = self._control.post(f"/{action}", json=body or {})
        response.raise_for_status()
        return response.json()

    def _snapshot(self) -> dict[str, Any]:
        response = self._control.get("/requests")
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    @property
    def requests(self) -> list[Request]:
        return [Request(r["method"], r["path"], int(r["status"])) for r in self._snapshot()["requests"]]

    @property
    def login_count(self) -> int:
        return int(self._snapshot()["login-count"])

    def clear_requests(self) -> None:
        self._post("clear-requests")

    def expire_sessions(self) -> None:
        self._post("expire-sessions")

    def reset(self) -> None:
        """Seed data, no sessions, no records, no delay."""
        self._post("reset")
        self._delay = 0.0

    def set_import_result(self, url: str, result: ImportResult) -> None:
        self._post("import-result", {"url": url, "result": result})

    @property
    def delay(self) -> float:
        return self._delay

    @delay.setter
    def delay(self, seconds: float) -> None:
        self._post("delay", {"seconds": seconds})
        self._delay = seconds

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.child.alive():
                raise RuntimeError(f"the fake Cooked exited:\n{self.child.stderr_tail()}")
            with contextlib.suppress(httpx.TransportError):
                self._snapshot()
                return
            time.sleep(0.05)
        raise TimeoutError(f"the fake Cooked did not answer within {timeout:.0f} s")


@contextlib.contextmanager
def remote_fake(log: Path) -> Iterator[RemoteFake]:
    """Start ``python -m cooked_fake`` on a free 127.0.0.1 port and stop it afterwards."""
    port = free_port()
    argv = [PYTHON, "-m", "cooked_fake", "--port", str(port)]
    env = {"PATH": "/usr/bin:/bin"}
    with spawn("fake Cooked", argv, env, log) as child:
        fake = RemoteFake(child, port)
        try:
            fake.wait_ready()
            yield fake
        finally:
            fake.close()
