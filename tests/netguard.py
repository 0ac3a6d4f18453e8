"""The whole suite's network guard: nothing but this machine's loopback is reachable.

No test may contact the real Cooked or send traffic anywhere but 127.0.0.0/8
and ::1; with resolving and connecting refused for every other address, a
mistake fails loudly instead of leaving the machine. Names under ``.invalid`` get the
resolver's "not found" answer without any query, so tests can see that failure offline.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

_LOCAL_NAMES = {"localhost", b"localhost", None}


def is_loopback(host: Any) -> bool:
    if host in _LOCAL_NAMES:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    try:
        return ipaddress.ip_address(text.strip("[]").split("%")[0]).is_loopback
    except ValueError:
        return False


def is_invalid_name(host: Any) -> bool:
    """A name under ``.invalid``, which RFC 6761 reserves as never resolving."""
    text = host.decode() if isinstance(host, bytes) else str(host)
    return text.rstrip(".").lower().endswith(".invalid")


# implements: api-client.VERIFICATION.2, authentication.VERIFICATION.2, recipes.VERIFICATION.2, shopping-list.VERIFICATION.2, server.VERIFICATION.1
@contextmanager
def loopback_only() -> Iterator[None]:
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if is_invalid_name(host):  # answered here as a resolver would, so no DNS query goes out
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if not is_loopback(host):
            raise OSError(f"test network guard: refusing to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
            raise OSError(f"test network guard: refusing to connect to {address[0]!r}")
        real_connect(self, address)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", getaddrinfo)
        patch.setattr(socket.socket, "connect", connect)
        yield
