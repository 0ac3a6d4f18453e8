"""One HTTP exchange with Cooked: build, send, read a bounded body, map transport failures.

This is the only module that touches httpx directly. It owns the process's one httpx
transport (its connection pool) and one cookie jar: cookies live in that in-memory jar
only, are set by Cooked's ``Set-Cookie`` and put on each request by the jar, and never
follow a redirect, because redirects are not followed at all.

Requests go straight to the transport rather than through ``httpx.AsyncClient``: the
client's per-request work (merging a base URL, headers, cookies and parameters; auth and
redirect machinery) is of no use here, where every request goes to one origin with fixed
headers, and it cost about 0.5 ms of CPU per Cooked request (``make bench``). What the
client would take from the environment is kept: a proxy from ``HTTPS_PROXY``,
``HTTP_PROXY`` or ``ALL_PROXY`` unless ``NO_PROXY`` covers the host, and the CA settings
``SSL_CERT_FILE`` and ``SSL_CERT_DIR``.

Every bound that keeps a misbehaving Cooked (or a proxy in front of it) from holding the
process lives here: one overall deadline per exchange, bounded body reads, no compressed
bodies at all, and a bounded cookie jar.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from cooked_mcp import __version__
from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.cooked.errors import MAX_ERROR_BODY_BYTES, base_url_setting, connect_failure
from cooked_mcp.errors import CookedResponseError, CookedUnavailable
from cooked_mcp.logging_setup import quiet_library_loggers

__all__ = [
    "MAX_COOKIES",
    "MAX_COOKIE_BYTES",
    "MAX_SUCCESS_BODY_BYTES",
    "Reply",
    "Timeouts",
    "Wire",
]

logger = logging.getLogger("cooked_mcp.cooked")

#: Far above any real answer (a recipe is a few KiB), low enough that a broken proxy cannot exhaust memory.
MAX_SUCCESS_BODY_BYTES = 8 * 1024 * 1024

#: The cookie jar's bounds: Cooked sets one session cookie and a proxy a few more; a server that sets
#: hundreds would otherwise grow every request's ``Cookie`` header until servers refuse it. 4 KiB
#: stays under every common server's header limit (8 KiB and up).
MAX_COOKIES = 32
MAX_COOKIE_BYTES = 4096


@dataclass(frozen=True)
class Timeouts:
    """Seconds; ``slow_read`` is for importing a URL, which Cooked says can take a minute.

    ``connect`` and ``read`` bound each network step; ``deadline`` bounds the whole exchange
    (connecting, sending, and reading the answer to its last byte), so an answer that trickles
    in one byte at a time, each within the read timeout, still ends.
    """

    connect: float = 10.0
    read: float = 30.0
    slow_read: float = 90.0

    def for_endpoint(self, endpoint: Endpoint) -> httpx.Timeout:
        read = self.slow_read if endpoint.slow else self.read
        return httpx.Timeout(read, connect=self.connect)

    def deadline(self, endpoint: Endpoint) -> float:
        return self.connect + (self.slow_read if endpoint.slow else self.read)


@dataclass(frozen=True)
class Reply:
    """A received answer: status, the (bounded) body, and whether the body was cut short.

    ``header_too_large``: the request was refused for its size (431, or a proxy's 400 about its
    headers or cookies) while it carried cookies, which only a cookie jar grown too big explains.
    """

    status: int
    body: bytes
    truncated: bool
    retry_after: str | None
    header_too_large: bool = False

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def session_lost(self) -> bool:
        """The session cannot be used as it is: log in afresh (with an empty jar) and retry once."""
        return self.status == 401 or self.header_too_large


class Wire:
    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeouts: Timeouts | None = None,
        base_url_from: str | None = None,
    ) -> None:
        """``base_url_from`` is where the base URL was set, for the messages that ask to check it."""
        quiet_library_loggers()
        self.base_url = base_url.rstrip("/")
        #: The base URL and its source, as messages that point at the setting name it.
        self.base_url_setting = base_url_setting(self.base_url, base_url_from)
        self._timeouts = timeouts or Timeouts()
        self._given_transport = transport
        # Chosen now (the environment as it is at start-up); built at the first request, because
        # building it loads the TLS trust store, the largest part of start-up that is ours.
        self._proxy = None if transport else _environment_proxy(httpx.URL(self.base_url))
        if self._proxy is not None:
            httpx.Proxy(self._proxy)  # a malformed proxy setting still fails here, at start-up
        # implements: authentication.SESSION.7, authentication.SESSION.8
        self._cookies = httpx.Cookies()
        # implements: api-client.REQUESTS.2
        self._headers = {
            "Accept": "application/json",
            # identity: the bounds on how much of a body is read are then bounds on bytes received,
            # not on what a small compressed answer could expand to.
            "Accept-Encoding": "identity",
            "User-Agent": f"cooked-mcp/{__version__}",
        }

    # implements: authentication.SESSION.3
    def clear_cookies(self) -> None:
        """Forget the session: the next request goes out without any Cooked cookie."""
        self._cookies.clear()

    def cookie_values(self) -> list[str]:
        """Cookie values held right now, only so that error text can be scrubbed of them."""
        return [cookie.value for cookie in self._cookies.jar if cookie.value]

    @functools.cached_property
    def _transport(self) -> httpx.AsyncBaseTransport:
        return self._given_transport or httpx.AsyncHTTPTransport(proxy=self._proxy)

    async def aclose(self) -> None:
        if "_transport" in self.__dict__ or self._given_transport is not None:
            await self._transport.aclose()

    # implements: api-client.REQUESTS.1, api-client.REQUESTS.4, authentication.SESSION.1, authentication.SESSION.2, authentication.LOGIN.3, api-client.LIMITS.1
    async def send(
        self,
        endpoint: Endpoint,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Reply:
        """Send one request and return its answer; only transport trouble raises here.

        The body of a non-2xx answer is read up to ``MAX_ERROR_BODY_BYTES`` and the rest is
        never downloaded: it is only used to extract ``code`` and ``message``. The whole
        exchange ends by the endpoint's deadline, whatever the answer's pace.
        """
        unknown = set(params or {}) - set(endpoint.query)
        if unknown:
            raise ValueError(f"{endpoint.name} takes no query parameters {sorted(unknown)}")
        request = httpx.Request(
            endpoint.method,
            httpx.URL(self.base_url + path, params=params),
            headers=self._headers,
            json=body,
            extensions={"timeout": self._timeouts.for_endpoint(endpoint).as_dict()},
        )
        if request.url.raw_path.split(b"?", 1)[0] != path.encode("ascii"):
            raise ValueError(f"{endpoint.name}: the request path was rewritten")
        self._cookies.set_cookie_header(request)
        try:
            async with asyncio.timeout(self._timeouts.deadline(endpoint)):
                response = await self._transport.handle_async_request(request)
                response.request = request
                try:
                    if "set-cookie" in response.headers:
                        self._store_cookies(response)
                    if response.is_redirect or 300 <= response.status_code < 400:
                        raise self._redirected(endpoint, response)
                    data, truncated = await self._read_body(endpoint, response)
                finally:
                    await response.aclose()
        except (httpx.ConnectTimeout, httpx.PoolTimeout):  # nothing was sent, so nothing can have changed
            raise self._unavailable(endpoint, "did not answer in time") from None
        except (httpx.TimeoutException, TimeoutError):  # TimeoutError: the overall deadline passed
            raise self._unavailable(endpoint, "did not answer in time", answer_lost=True) from None
        except httpx.ConnectError as exc:
            what, next_step = connect_failure(exc, self.base_url_setting)
            raise self._unavailable(endpoint, what, next_step=next_step) from None
        except httpx.TransportError:
            raise self._unavailable(endpoint, "broke off the connection", answer_lost=True) from None
        _log(endpoint, str(response.status_code))
        return Reply(
            status=response.status_code,
            body=data,
            truncated=truncated,
            retry_after=response.headers.get("retry-after"),
            header_too_large="cookie" in request.headers and _refused_for_size(response.status_code, data),
        )

    async def _read_body(self, endpoint: Endpoint, response: httpx.Response) -> tuple[bytes, bool]:
        """The raw body, bounded; a compressed one is never decompressed.

        The client asks for ``identity``, so the read bound is a bound on bytes received. A
        server that compresses anyway could make a few KiB expand to gigabytes (``gzip, gzip``
        compounds), so such a successful answer is refused unread; an error answer keeps its
        status and loses only its (unreadable) body.
        """
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            if not response.is_success:
                return b"", False
            _log(endpoint, f"failed: refused Content-Encoding {encoding[:40]!r}")
            raise CookedResponseError(
                f"Cooked's answer to the {endpoint.name} request was compressed "
                f"(Content-Encoding: {encoding[:40]}) although cooked-mcp asked for an uncompressed one; "
                "it was not read",
                next_step="retry once; if it happens again, Cooked or a proxy in front of it is misbehaving",
            )
        limit = MAX_SUCCESS_BODY_BYTES if response.is_success else MAX_ERROR_BODY_BYTES
        return await _read_bounded(response, limit)

    def _store_cookies(self, response: httpx.Response) -> None:
        """Take the answer's cookies into the jar, keeping it within ``MAX_COOKIES`` / ``MAX_COOKIE_BYTES``.

        Cookies already held come first (the session cookie set at login stays), then new ones
        in the order they were set, while they fit; the rest are dropped.
        """
        jar = self._cookies.jar
        held = {(cookie.domain, cookie.path, cookie.name) for cookie in jar}
        self._cookies.extract_cookies(response)
        ordered = sorted(jar, key=lambda cookie: (cookie.domain, cookie.path, cookie.name) not in held)
        count = size = dropped = 0
        for cookie in ordered:
            cost = len(cookie.name.encode()) + len((cookie.value or "").encode()) + 3  # "=" and "; "
            if count < MAX_COOKIES and size + cost <= MAX_COOKIE_BYTES:
                count, size = count + 1, size + cost
            else:
                jar.clear(cookie.domain, cookie.path, cookie.name)
                dropped += 1
        if dropped:
            logger.warning(
                "Cooked set more cookies than cooked-mcp keeps (at most %d cookies, %d bytes); dropped %d",
                MAX_COOKIES,
                MAX_COOKIE_BYTES,
                dropped,
            )

    def _unavailable(
        self, endpoint: Endpoint, what: str, *, answer_lost: bool = False, next_step: str | None = None
    ) -> CookedUnavailable:
        """``answer_lost``: the request may have reached Cooked, so a change it asked for may have happened."""
        _log(endpoint, f"failed: {what}")
        if next_step is None:
            next_step = f"retry later; if it keeps failing, check that {self.base_url_setting} is right"
        if endpoint.slow:
            next_step = (
                "the import may still finish on Cooked's side: list the recipes before retrying; " + next_step
            )
        elif answer_lost and endpoint.changes:
            next_step = (
                "Cooked may have made the change before the answer was lost: read the recipes or the "
                "shopping list to check before repeating it; " + next_step
            )
        return CookedUnavailable(
            f"Cooked at {self.base_url} {what} during the {endpoint.name} request", next_step=next_step
        )

    def _redirected(self, endpoint: Endpoint, response: httpx.Response) -> CookedUnavailable:
        _log(endpoint, f"{response.status_code}, redirect not followed")
        target = ""
        location = response.headers.get("location")
        if location:
            try:
                url = response.request.url.join(location)
            except httpx.InvalidURL:
                url = None
            if url is not None and url.host and url.host != response.request.url.host:
                target = f" to {url.scheme}://{url.host}"
        return CookedUnavailable(
            f"Cooked at {self.base_url} redirected the {endpoint.name} request{target} "
            "instead of answering it",
            status=response.status_code,
            next_step=(
                f"change {self.base_url_setting} to the address Cooked answers at directly "
                "(for example https://cooked.wiki), or retry later"
            ),
        )


def _environment_proxy(base_url: httpx.URL) -> str | None:
    """The proxy ``httpx.AsyncClient`` would pick for ``base_url`` from the environment.

    ``urllib.request`` reads the same variables httpx does (on macOS and Windows also the
    system settings); the transport itself reads ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``.
    """
    proxies = urllib.request.getproxies()
    proxy = proxies.get(base_url.scheme) or proxies.get("all")
    if proxy and urllib.request.proxy_bypass(base_url.host):
        proxy = None
    if proxy and "://" not in proxy:
        proxy = f"http://{proxy}"
    return proxy or None


def _log(endpoint: Endpoint, outcome: str) -> None:
    """Method, path template and outcome only: never the filled path (it holds the username)."""
    logger.debug("Cooked %s %s (%s) -> %s", endpoint.method, endpoint.path_template, endpoint.name, outcome)


def _refused_for_size(status: int, body: bytes) -> bool:
    """431, or a 400 that is not Cooked's JSON error but a server's page about headers or cookies."""
    if status == 431:
        return True
    text = body.lower()
    return status == 400 and not body.lstrip().startswith(b"{") and (b"cookie" in text or b"header" in text)


async def _read_bounded(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body; the rest is left unread and the stream closed.

    Only called for an uncompressed answer, so the bytes httpx yields are the bytes received.
    """
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        room = limit - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False
