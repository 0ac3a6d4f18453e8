"""Shared pieces for the Cooked client tests: canary credentials, a respx-backed client, a network guard.

The canaries are distinctive strings that must never show up in an exception, a repr or a
log line; tests search for them verbatim.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from pydantic import SecretStr

from cooked_mcp.cooked import CookedClient

BASE_URL = "https://cooked.test"
LOGIN_NAME = "CANARY-login-5e2d@example.com"
PASSWORD = "CANARY-PW-7f3a"
CANONICAL_USERNAME = "canary-user-9b1e"
SESSION_COOKIE = "CANARY-COOKIE-31c4"
CANARIES = (LOGIN_NAME, PASSWORD, CANONICAL_USERNAME, SESSION_COOKIE)
LOGIN_PATH = "/api/public/login"

_LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture(autouse=True)
def only_loopback_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test here may resolve or connect to anything but this machine (never the real Cooked)."""
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOOPBACK_HOSTS and host not in (None, b"127.0.0.1", b"localhost"):
            raise OSError(f"test network guard: refusing to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOOPBACK_HOSTS:
            raise OSError(f"test network guard: refusing to connect to {address[0]!r}")
        real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)


def login_response(username: str = CANONICAL_USERNAME, cookie: str = SESSION_COOKIE) -> httpx.Response:
    return httpx.Response(
        200,
        json={"message": "Authenticated successfully", "username": username},
        headers={"Set-Cookie": f"ring-session={cookie}; Path=/; HttpOnly"},
    )


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    """A respx router used as the client's transport: no global patching, nothing unmocked gets out."""
    mock = respx.MockRouter(base_url=BASE_URL, assert_all_called=False, assert_all_mocked=True)
    mock.post(LOGIN_PATH, name="login").mock(return_value=login_response())
    yield mock


def make_client(router: respx.MockRouter, **kwargs: Any) -> CookedClient:
    transport = httpx.MockTransport(router.async_handler)
    return CookedClient(BASE_URL, LOGIN_NAME, SecretStr(PASSWORD), transport=transport, **kwargs)


def user_path(suffix: str = "") -> str:
    return f"/api/user/{CANONICAL_USERNAME}{suffix}"


def assert_no_canary(*texts: object) -> None:
    for text in texts:
        for canary in CANARIES:
            assert canary not in str(text), f"canary {canary!r} leaked into {text!r}"
