"""A name only partly bindable is refused: a half-bound name would send some clients elsewhere."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from cooked_mcp.exceptions import ListenError
from cooked_mcp.transports.connection_guard import listen


@pytest.mark.req("server.TRANSPORT.3")
def test_a_name_with_two_addresses_this_machine_lacks_is_not_half_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        stream, tcp = socket.SOCK_STREAM, socket.IPPROTO_TCP
        return [
            (socket.AF_INET, stream, tcp, "", ("127.0.0.1", 0)),
            (socket.AF_INET, stream, tcp, "", ("198.51.100.7", 0)),  # TEST-NET: on no machine
            (socket.AF_INET, stream, tcp, "", ("203.0.113.9", 0)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with pytest.raises(ListenError, match="this machine has no such address"):
        listen("three.example", 0)
