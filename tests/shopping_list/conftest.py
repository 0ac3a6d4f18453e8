"""One fake Cooked for the shopping-list tests, reset to seed data before each test.

Every test here talks real HTTP to that fake on 127.0.0.1; a guard on the socket layer
refuses any other host for the whole package, so no test can reach the real Cooked.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from cooked_fake import FakeCooked

LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost", b"127.0.0.1", b"localhost", None}


@pytest.fixture(scope="package", autouse=True)
def only_loopback_network() -> Iterator[None]:
    """Package-scoped (not function-scoped) so hypothesis tests run under it too."""
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in LOOPBACK_HOSTS:
            raise OSError(f"test network guard: refusing to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK_HOSTS:
            raise OSError(f"test network guard: refusing to connect to {address[0]!r}")
        real_connect(self, address)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
        patch.setattr(socket.socket, "connect", guarded_connect)
        yield


@pytest.fixture(scope="module")
def running() -> Iterator[FakeCooked]:
    """Hypothesis tests take this one and call reset() per example themselves."""
    with FakeCooked() as fake:
        yield fake


@pytest.fixture
def fake(running: FakeCooked) -> FakeCooked:
    running.reset()
    return running
