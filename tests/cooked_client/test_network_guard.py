"""The client tests cannot reach the real Cooked: every test runs behind a loopback-only guard."""

from __future__ import annotations

import socket

import pytest
from client_support import BASE_URL, PASSWORD
from netguard import loopback_only
from pydantic import SecretStr

from cooked_mcp.config import default
from cooked_mcp.cooked import CookedClient
from cooked_mcp.exceptions import CookedUnavailable


@pytest.mark.req("authentication.VERIFICATION.2", "api-client.VERIFICATION.2")
@pytest.mark.anyio
async def test_the_real_cooked_is_unreachable_from_these_tests() -> None:
    assert "cooked.wiki" not in BASE_URL
    async with CookedClient(default("base_url"), "someone", SecretStr(PASSWORD)) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 1)

    assert "could not be reached" in str(caught.value)


@pytest.mark.req("api-client.VERIFICATION.2", "authentication.VERIFICATION.2")
def test_invalid_names_are_not_found_without_any_dns_query(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard answers ``.invalid`` names itself (RFC 6761: they never resolve), as a resolver would."""
    asked: list[object] = []

    def resolver(host: object, *args: object, **kwargs: object) -> object:
        asked.append(host)
        raise AssertionError(f"a DNS query for {host!r} would have left this machine")

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with loopback_only(), pytest.raises(socket.gaierror) as caught:  # the guard's resolver is the recorder
        socket.getaddrinfo("cooked.invalid", 443)

    assert caught.value.errno == socket.EAI_NONAME
    assert asked == []
