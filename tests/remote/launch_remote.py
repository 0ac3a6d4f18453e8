"""``cooked-mcp`` for the remote-mode process tests, with two test-only injections no user can
reach: a short access-token lifetime, and a CIMD fetcher that takes ``client.test`` to be
127.0.0.1 and trusts the test CA. Both come from this script's own environment variables."""

from __future__ import annotations

import functools
import ipaddress
import os
import ssl
import sys

import cooked_mcp.remote.wiring as wiring
from cooked_mcp.cli import main
from cooked_mcp.config.limits import RemoteLimits
from cooked_mcp.remote.cimd import CimdFetcher


async def _client_test_is_loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"] if host == "client.test" else []


def _loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return address.is_loopback


if __name__ == "__main__":
    ca = os.environ.get("REMOTE_TEST_CA")
    wiring.build = functools.partial(  # type: ignore[assignment]
        wiring.build,
        bounds=RemoteLimits(access_token_seconds=float(os.environ.get("REMOTE_TEST_ACCESS_SECONDS", "3600"))),
        fetch_client=CimdFetcher(
            resolver=_client_test_is_loopback,
            allowed=_loopback,
            ssl_context=ssl.create_default_context(cafile=ca) if ca else None,
        ),
    )
    sys.exit(main(sys.argv[1:]))
