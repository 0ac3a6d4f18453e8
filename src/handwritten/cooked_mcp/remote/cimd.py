"""Client ID Metadata Documents: a client_id that is an https URL names its own registration.

Fetching it is a request a public server makes to a URL anyone may type, so it is fenced in:
https only; every address the name resolves to must be public (no loopback, private,
link-local, shared or metadata address), checked after resolution and connected to by that
checked address, so a second lookup cannot swap it; no redirects; at most ``max_bytes`` and
``seconds``; at most ``cimd_fetches`` a ``cimd_window`` for everyone together; a good document is
cached. The document must name the URL as its ``client_id`` and list its redirect URIs, which
are then matched as ``provider.Client`` says; it may not claim a client secret.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import httpcore
from mcp.shared.auth import InvalidRedirectUriError
from pydantic import AnyUrl, ValidationError

from cooked_mcp.text import printable

from ..config.limits import RemoteLimits
from .provider import Client
from .window import Window

logger = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]


class Refused(Exception):
    """Why a client_id URL was not accepted; the message is logged, never sent to the client."""


class _TooMany(Refused):
    """``cimd_fetches`` documents were fetched in the last ``cimd_window`` seconds: come back later."""


class _Unfetched(Client):
    """A document not fetched for the rate. The SDK's authorization endpoint sends a refused redirect
    URI's message (400, no redirect), so refusing all says to come back; at the token endpoint it is
    public, as every CIMD client is, so a connected client still refreshes (its token is the proof).
    It lists no redirect URI: the unread URL may be one pydantic's URL type refuses (a space in the host)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        raise InvalidRedirectUriError("too many new clients are connecting at once: try again in a minute")


async def resolve(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


#: RFC 6052's NAT64 prefix: a gateway turns 64:ff9b::a00:5 into 10.0.0.5, so the IPv4 decides.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: IPv6 global unicast; outside it (IPv4-compatible ::a.b.c.d, site-local fec0::/10, ...)
#: Python's ``is_global`` says True for some ranges that are not.
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def is_public(address: IPAddress) -> bool:
    """Only global unicast: ``is_global`` is False for loopback, private, link-local (cloud
    metadata at 169.254.169.254), shared (100.64/10) and reserved ranges. An IPv6 address
    carrying an IPv4 one (mapped, NAT64) is judged by it; 6to4 (2002::/16) is refused."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        if address in _NAT64:
            return is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if address not in _GLOBAL_UNICAST or address.sixtofour is not None:
            return False
    return address.is_global and not address.is_multicast


@dataclass
class _Backend(httpcore.AsyncNetworkBackend):
    """Connects only to checked addresses; the TLS layer still verifies the certificate for the name."""

    resolver: Resolver
    allowed: Callable[[IPAddress], bool]
    inner: httpcore.AsyncNetworkBackend = field(default_factory=httpcore.AnyIOBackend)

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = [ipaddress.ip_address(a.split("%")[0]) for a in await self.resolver(host, port)]
        if not addresses:
            raise Refused(f"{host} does not resolve")
        refused = [a for a in addresses if not self.allowed(a)]
        if refused:
            raise Refused(f"{host} resolves to a non-public address ({refused[0]})")
        return await self.inner.connect_tcp(str(addresses[0]), port, timeout, local_address, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


# implements: extensions.REMOTE.12, extensions.REMOTE.13
class CimdFetcher:
    """``await fetcher(url)``: the client the document at ``url`` describes, or None (logged why).

    ``resolver``, ``allowed``, ``ssl_context`` and ``clock`` exist for tests, which serve documents
    from 127.0.0.1 with their own CA; nothing a user configures reaches them.
    """

    def __init__(
        self,
        *,
        limits: RemoteLimits | None = None,
        resolver: Resolver = resolve,
        allowed: Callable[[IPAddress], bool] = is_public,
        ssl_context: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits = limits or RemoteLimits()
        self.clock = clock
        self.fetches = Window(limits.cimd_fetches, limits.cimd_window, clock)
        self._cache: dict[str, tuple[float, Client]] = {}
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context or ssl.create_default_context(),
            max_connections=limits.cimd_connections,
            network_backend=_Backend(resolver, allowed),
        )

    async def __call__(self, url: str) -> Client | None:
        cached = self._cache.get(url)
        if cached is not None and cached[0] > self.clock():
            return cached[1]
        try:
            client = await self.fetch(url)
        except _TooMany as exc:  # not refused: an authorization is told to come back, a token request passes
            logger.warning("did not fetch the client_id %s now: %s", printable(url, 200), exc)
            return _Unfetched(client_id=url, token_endpoint_auth_method="none")
        except Refused as exc:
            logger.warning("refused the client_id %s: %s", printable(url, 200), exc)
            return None
        if len(self._cache) >= self.limits.cimd_cache_size:
            del self._cache[min(self._cache, key=lambda key: self._cache[key][0])]
        self._cache[url] = (self.clock() + self.limits.cimd_cache_seconds, client)
        return client

    async def fetch(self, url: str) -> Client:
        try:
            parts = urlsplit(url)
            _ = parts.port  # raises for a port out of range, as urlsplit does for a broken [IPv6]
        except ValueError as exc:
            raise Refused(f"the client_id is no URL: {exc}") from None
        if parts.scheme != "https" or not parts.hostname or parts.username is not None or parts.fragment:
            raise Refused("a client_id URL must be https, with a host and no user name or fragment")
        if parts.path in ("", "/") or "/./" in parts.path or "/../" in parts.path:
            raise Refused("a client_id URL must have a path without dot segments")
        if self.fetches.wait():
            raise _TooMany(
                f"{self.limits.cimd_fetches} documents were fetched in {self.limits.cimd_window:g} s"
            )
        self.fetches.add()
        body = bytearray()
        try:
            with anyio.fail_after(self.limits.cimd_seconds):
                async with self._pool.stream(
                    "GET", url, headers=[(b"Accept", b"application/json")]
                ) as response:
                    if response.status != 200:  # a redirect too: none is followed
                        raise Refused(f"it answered HTTP {response.status}")
                    async for chunk in response.aiter_stream():
                        body += chunk
                        if len(body) > self.limits.cimd_bytes:
                            raise Refused(f"the document is larger than {self.limits.cimd_bytes} bytes")
        except TimeoutError:
            raise Refused(f"no document within {self.limits.cimd_seconds:g} s") from None
        except (httpcore.ConnectError, httpcore.NetworkError, httpcore.ProtocolError, OSError) as exc:
            raise Refused(f"cannot fetch it ({type(exc).__name__})") from None
        return _client(url, bytes(body))


def _client(url: str, body: bytes) -> Client:
    try:
        document = json.loads(body)
    except ValueError:
        raise Refused("the document is not JSON") from None
    if not isinstance(document, dict):
        raise Refused("the document is not a JSON object")
    if document.get("client_id") != url:
        raise Refused("the document's client_id is not its own URL")
    if "client_secret" in document or document.get("token_endpoint_auth_method", "none") != "none":
        raise Refused(
            "a client_id URL names a public client: no client secret, token_endpoint_auth_method none"
        )
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise Refused("the document lists no redirect_uris")
    try:
        return Client.model_validate(
            {
                **document,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
            }
        )
    except ValidationError as exc:
        raise Refused(f"the document is not valid client metadata ({exc.error_count()} problems)") from None
