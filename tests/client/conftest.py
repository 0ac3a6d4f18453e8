"""Fixtures for the Cooked client tests: a respx router and a guard that keeps every test on loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
import respx
from client_support import BASE_URL, LOGIN_PATH, login_response

_LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost", b"127.0.0.1", b"localhost", None}


@pytest.fixture(autouse=True)
def only_loopback_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test here may resolve or connect to anything but this machine (never the real Cooked)."""
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOOPBACK_HOSTS:
            raise OSError(f"test network guard: refusing to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOOPBACK_HOSTS:
            raise OSError(f"test network guard: refusing to connect to {address[0]!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    """Routes for https://cooked.test with a working login; tests add the routes they need."""
    mock = respx.MockRouter(base_url=BASE_URL, assert_all_called=False, assert_all_mocked=True)
    mock.post(LOGIN_PATH, name="login").mock(return_value=login_response())
    yield mock
