"""Fixtures for the hardening suites: a network guard and a blocking portal.

The guard is package-scoped so hypothesis tests run under it too. It refuses every
address but 127.0.0.1 and also remembers each refused attempt, so a test can prove that
nothing even tried to reach another host (a redirect to 127.0.0.2 must not be followed).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hardening_support import Guard
from netguard import is_invalid_name

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, SEED_USERNAME, FakeCooked

LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost", b"127.0.0.1", b"localhost", None}


@pytest.fixture(scope="package", autouse=True)
def network_guard() -> Iterator[Guard]:
    guard = Guard()
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        # .invalid names go on to the suite-wide guard, which answers "not found" without a query.
        if host not in LOOPBACK_HOSTS and host != "127.0.0.2" and not is_invalid_name(host):
            guard.refused.append(f"resolve {host!r}")
            raise OSError(f"test network guard: refusing to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def refused(self: socket.socket, address: Any) -> bool:
        return self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK_HOSTS

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if refused(self, address):
            guard.refused.append(f"connect {address[0]!r}")
            raise OSError(f"test network guard: refusing to connect to {address[0]!r}")
        real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if refused(self, address):
            guard.refused.append(f"connect {address[0]!r}")
            return 111  # ECONNREFUSED
        return real_connect_ex(self, address)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
        patch.setattr(socket.socket, "connect", guarded_connect)
        patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
        yield guard


@pytest.fixture(scope="module")
def portal() -> Iterator[BlockingPortal]:
    """An event loop on its own thread, so synchronous tests (hypothesis, subprocess waits) can
    share one MCP session with a module's async fixtures."""
    with start_blocking_portal("asyncio") as running:
        yield running


#: The one session cookie value the module's fake answers every login with (``one_session_cookie``).
SESSION_TOKEN = "hardening-session-7c2f0b"


@pytest.fixture(scope="module")
def one_session_cookie(running_fake: FakeCooked) -> None:
    """Every login to the module's fake is answered with the same cookie value, as after a reset it
    would be with another. The error text of each failed call is scrubbed of the secrets of the
    moment, the session cookie among them, with one pattern compiled per set of secrets and kept
    (redaction.py): a new random cookie after each case's reset compiled it again for every
    failure, a quarter of the CPU of the suites that reset per case. The value is still a secret
    held in the jar, and a reset still expires it."""
    running_fake.use_account(
        login=SEED_LOGIN, password=SEED_PASSWORD, username=SEED_USERNAME, session_token=SESSION_TOKEN
    )
