"""Fixtures for the recipe tool tests: one fake Cooked per module, reset before every test.

Starting a fake costs a thread and a socket; resetting it restores the seed data, faults,
sessions and records, which is all a test can observe, so sharing it is safe and fast.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from mcp import Client
from sessions import cooked_session

from cooked_fake import FakeCooked

_LOOPBACK = {"127.0.0.1", "::1", "localhost", b"127.0.0.1", b"localhost", None}


@pytest.fixture(scope="module")
def running_fake() -> Iterator[FakeCooked]:
    with FakeCooked() as fake:
        yield fake


@pytest.fixture
def fake(running_fake: FakeCooked) -> FakeCooked:
    running_fake.reset()
    return running_fake


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Cooked is never contacted: in this process nothing but 127.0.0.1 can be reached."""
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOOPBACK:
            raise OSError(f"recipe tests may not resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOOPBACK:
            raise OSError(f"recipe tests may not connect to {address[0]!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module scope, so one MCP session (``client``) can serve every example of a property test."""
    return "asyncio"


@pytest.fixture(scope="module")
async def client(running_fake: FakeCooked) -> AsyncIterator[Client]:
    """A long-lived MCP session on the module's fake; a fake reset only makes it log in again."""
    async with cooked_session(running_fake) as session:
        yield session
