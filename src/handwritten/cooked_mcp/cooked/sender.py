"""One HTTP exchange with Cooked: the only module that touches httpx. Every bound against a
misbehaving Cooked or proxy is applied here: one deadline per exchange, bodies read up to a bound
(the rest never downloaded), no compressed bodies, no redirects, and a cookie jar small enough that
no server refuses the ``Cookie`` header it makes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import os
import socket
import ssl
import time
from collections.abc import AsyncIterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from cooked_mcp import __version__
from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.exceptions import CookedResponseError, CookedUnavailable
from cooked_mcp_runtime.results import ANSWERS

logger = logging.getLogger("cooked_mcp.cooked")

#: Far above any real answer (a recipe is a few KiB), low enough that a broken proxy cannot exhaust memory.
MAX_SUCCESS_BODY_BYTES = 8 * 1024 * 1024
#: How much of an error body is ever read: enough for any JSON error, never a whole proxy page.
# implements: api-client.LIMITS.1
MAX_ERROR_BODY_BYTES = 64 * 1024
#: The cookie jar's bounds: Cooked sets one session cookie and a proxy a few more; a server that sets
#: hundreds would otherwise grow every request's ``Cookie`` header until servers refuse it. 4 KiB
#: stays under every common server's header limit (8 KiB and up).
MAX_COOKIES = 32
MAX_COOKIE_BYTES = 4096
#: Parsed request URLs kept (httpx checks each one character by character); past this many the least
#: recently used is forgotten.
MAX_PARSED_URLS = 128

CookieKey = tuple[str, str, str]  # domain, path, name

#: What a cause found in a connection failure means and what to do ("retry later" only where time can
#: fix it); anyio's end of stream while connecting: the server hung up on the TLS client hello.
_CONNECT_FAILURES: tuple[tuple[type[BaseException] | Any, str, str], ...] = (
    (
        ssl.SSLCertVerificationError,
        "its TLS certificate was not accepted",
        "check that {setting} names Cooked itself; behind a TLS-inspecting proxy, point SSL_CERT_FILE "
        "at the proxy's CA certificate",
    ),
    (
        ssl.SSLError | anyio.EndOfStream | anyio.BrokenResourceError,
        "the TLS handshake failed",
        "check the scheme in {setting}: https:// for Cooked (a server that speaks plain HTTP fails "
        "this way), http:// only for a local test server",
    ),
    (
        socket.gaierror,
        "its host name was not found",
        "check the host name in {setting} and this machine's network connection and DNS",
    ),
    (
        ConnectionRefusedError,
        "the connection was refused (nothing is listening there)",
        "check the host and port in {setting}; if they are right, Cooked is down: retry later",
    ),
)


@dataclass(frozen=True)
class Timeouts:
    """Seconds; ``slow_read`` is for a URL import. ``deadline`` bounds the whole exchange, so an answer
    trickling in within each read timeout still ends.
    """

    connect: float = 10.0
    read: float = 30.0
    slow_read: float = 90.0

    def for_endpoint(self, endpoint: Endpoint) -> httpx.Timeout:
        return httpx.Timeout(self.slow_read if endpoint.slow else self.read, connect=self.connect)

    def deadline(self, endpoint: Endpoint) -> float:
        return self.connect + (self.slow_read if endpoint.slow else self.read)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    truncated: bool
    retry_after: str | None
    carried_cookies: bool = False

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def session_lost(self) -> bool:
        """A 401, or a size refusal of a request carrying cookies, which only a grown jar explains: log in
        afresh with an empty jar and retry once. A size refusal is a 431, or a 400 that is not Cooked's JSON
        error but a server's page about headers or cookies."""
        if self.status == 401 or not self.carried_cookies or self.status not in (400, 431):
            return self.status == 401
        text = self.body.lower()
        return self.status == 431 or (
            not self.body.lstrip().startswith(b"{") and (b"cookie" in text or b"header" in text)
        )


class Sender:
    """One per Cooked client, so every call shares its connection pool, cookie jar and bounds."""

    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeouts: Timeouts | None = None,
        base_url_from: str | None = None,
    ) -> None:
        """``base_url_from`` is where the base URL was set, named by the messages that ask to check it."""
        self.base_url = base_url.rstrip("/")
        self.base_url_setting = (
            f"the base URL {self.base_url} from {base_url_from}"
            if base_url_from
            else f"COOKED_BASE_URL or cooked.base_url ({self.base_url})"
        )
        self.timeouts = timeouts or Timeouts()
        self._given_transport = transport
        self._http: httpx.AsyncClient | None = None  # built at the first request: ``_client``
        #: The cookies kept after the last answer that set any: they come first when the jar is bounded.
        self._held: set[CookieKey] = set()
        #: The jar's ``Cookie`` header for every request and until when it holds (``_add_cookies``).
        self._cookie: tuple[str, float] | None = None
        self._url = functools.lru_cache(MAX_PARSED_URLS)(self._parse_url)  # by path and query
        # implements: api-client.REQUESTS.2
        # identity: the bounds on how much of a body is read are then bounds on bytes received, not on
        # what a small compressed answer could expand to. Normalised once; each request copies them.
        headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
        self._headers = httpx.Headers({**headers, "User-Agent": f"cooked-mcp/{__version__}"})

    # implements: authentication.SESSION.3
    def clear_cookies(self) -> None:
        """Forget the session: the next request goes out without any Cooked cookie."""
        if self._http is not None:
            self._http.cookies.clear()
        self._held, self._cookie = set(), None

    def cookie_values(self) -> list[str]:
        """Cookie values held right now, only so that error text can be scrubbed of them."""
        return [cookie.value for cookie in self._http.cookies.jar if cookie.value] if self._http else []

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    # implements: api-client.REQUESTS.1, api-client.REQUESTS.4, authentication.SESSION.1, authentication.SESSION.2, authentication.LOGIN.3, api-client.LIMITS.1
    async def send(
        self,
        endpoint: Endpoint,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Answer:
        """Send one request within the endpoint's deadline; an error body is read only up to its bound."""
        try:
            async with asyncio.timeout(self.timeouts.deadline(endpoint)):
                timeout = self.timeouts.for_endpoint(endpoint).as_dict()
                url = self._url(path, tuple(params.items()) if params else ())
                request = httpx.Request(
                    endpoint.method, url, headers=self._headers, json=body, extensions={"timeout": timeout}
                )
                http = self._client(endpoint)
                self._add_cookies(http.cookies, request)
                response = await http.send(request, stream=True)
                try:
                    if "set-cookie" in response.headers:  # httpx has put them in the jar: bound it
                        self._held, self._cookie = bound_jar(http.cookies, self._held), None
                    if 300 <= response.status_code < 400:
                        raise self._redirected(endpoint, response)
                    data, truncated = await self._read_body(endpoint, response)
                finally:
                    await response.aclose()
        except (httpx.ConnectTimeout, httpx.PoolTimeout):  # nothing was sent, so nothing can have changed
            raise self._unavailable(endpoint, "did not answer in time") from None
        except (httpx.TimeoutException, TimeoutError):  # TimeoutError: the overall deadline passed
            raise self._unavailable(endpoint, "did not answer in time", answer_lost=True) from None
        except httpx.ConnectError as exc:
            raise self._unreachable(endpoint, exc) from None
        except httpx.TransportError:
            raise self._unavailable(endpoint, "broke off the connection", answer_lost=True) from None
        _log(endpoint, str(response.status_code))
        retry_after = response.headers.get("retry-after")
        return Answer(response.status_code, data, truncated, retry_after, "cookie" in request.headers)

    def _parse_url(self, path: str, query: tuple[tuple[str, str | int], ...]) -> httpx.URL:
        return httpx.URL(self.base_url + path, params=query or None)

    def _add_cookies(self, cookies: httpx.Cookies, request: httpx.Request) -> None:
        """The jar's ``Cookie`` header on ``request``, by the standard library's rules. Every request
        goes to one scheme, host and port, so while each cookie held has path ``/`` the jar gives
        every request the same header until a cookie is set, cleared or expires: it is asked once
        then, not per request (httpx's way to ask it parses the request's URL twice, ~0.1 ms)."""
        remembered = self._cookie
        if remembered is not None and time.time() < remembered[1]:
            if remembered[0]:
                request.headers["Cookie"] = remembered[0]
            return
        cookies.set_cookie_header(request)  # also drops the expired cookies
        held = list(cookies.jar)
        if all(cookie.path == "/" for cookie in held):
            expiry = min((cookie.expires for cookie in held if cookie.expires is not None), default=math.inf)
            self._cookie = (request.headers.get("cookie", ""), expiry)

    def _client(self, endpoint: Endpoint) -> httpx.AsyncClient:
        """The client, built at the first request (loading the trust store is costly); a proxy variable
        httpx cannot use, or CA settings it cannot load, fail here, on every call until fixed."""
        if self._http is not None:
            return self._http
        try:
            # implements: authentication.SESSION.7, authentication.SESSION.8
            self._http = httpx.AsyncClient(
                trust_env=True,  # proxy and CA settings from the environment, as any httpx client
                verify=httpx.create_ssl_context(),  # one trust store for the client and a proxy's transport
                transport=self._given_transport,
                follow_redirects=False,
            )
            return self._http
        except OSError as exc:  # the CA bundle httpx loads is missing, unreadable or holds no certificate
            named = next((name for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if os.environ.get(name)), None)
            which = f"{named} names" if named else "httpx uses"
            what = f"load the CA certificates {which} ({exc.strerror or type(exc).__name__})"
            fix = (
                f"point {named} at a readable PEM bundle or unset it"
                if named
                else "reinstall cooked-mcp (its CA bundle is missing) or set SSL_CERT_FILE"
            )
        except ValueError:  # httpx.Proxy: an unknown scheme or a malformed URL; its text may hold the URL
            what = "use the proxy set in its environment"
            fix = (
                "fix or unset HTTPS_PROXY, HTTP_PROXY and ALL_PROXY (a proxy URL starts with http://, https:// "
                "or socks5://)"
            )
        _log(endpoint, f"failed: could not {what}")
        raise CookedUnavailable(
            f"cooked-mcp could not {what} for the {endpoint.name} request, so nothing was sent",
            next_step=f"{fix} in the environment cooked-mcp starts with, then restart it",
        )

    async def _read_body(self, endpoint: Endpoint, response: httpx.Response) -> tuple[bytes, bool]:
        """The raw body, bounded; a compressed one could expand without bound, so a success is refused
        unread and an error keeps only its status."""
        encoding = response.headers.get("content-encoding", "").strip().lower()
        compressed = encoding not in ("", "identity")
        if not response.is_success:
            if compressed:
                return b"", False
            return await read_bounded(response.aiter_bytes(), MAX_ERROR_BODY_BYTES)
        if compressed:
            _log(endpoint, f"failed: refused Content-Encoding {encoding[:40]!r}")
            raise CookedResponseError(
                f"The {endpoint.name} request failed: Cooked's answer was compressed "
                f"(Content-Encoding: {encoding[:40]}) although cooked-mcp asked for an uncompressed one; "
                "it was not read",
                next_step="retry once; if it happens again, Cooked or a proxy in front of it is misbehaving",
            )
        # Held before reading, while the tool call's answer is made (results.ANSWERS); the answer to
        # a change is held without waiting: the change is made, its answer must not be lost.
        declared = response.headers.get("content-length", "")
        size = min(int(declared), MAX_SUCCESS_BODY_BYTES) if declared.isdigit() else MAX_SUCCESS_BODY_BYTES
        charged = await ANSWERS.hold(size, wait=endpoint.method == "GET")
        body = await read_bounded(response.aiter_bytes(), MAX_SUCCESS_BODY_BYTES)
        ANSWERS.keep(charged, len(body[0]))
        return body

    def _unavailable(
        self, endpoint: Endpoint, what: str, *, answer_lost: bool = False, next_step: str | None = None
    ) -> CookedUnavailable:
        """``answer_lost``: the request may have reached Cooked, so a change it asked for may have happened."""
        _log(endpoint, f"failed: {what}")
        next_step = (
            next_step or f"retry later; if it keeps failing, check that {self.base_url_setting} is right"
        )
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
            f"The {endpoint.name} request failed: Cooked at {self.base_url} {what}",
            next_step=next_step,
            may_have_changed=answer_lost and endpoint.changes,
        )

    def _unreachable(self, endpoint: Endpoint, exc: httpx.ConnectError) -> CookedUnavailable:
        """The connection failure's cause, found in what httpx's ``ConnectError`` wraps, and its advice."""
        causes = tuple(_causes(exc))
        setting = self.base_url_setting
        for kind, what, advice in _CONNECT_FAILURES:
            if any(isinstance(cause, kind) for cause in causes):
                reason = f"could not be reached: {what}"
                return self._unavailable(endpoint, reason, next_step=advice.format(setting=setting))
        advice = f"check this machine's network connection and {setting}; retry later"
        return self._unavailable(endpoint, "could not be reached", next_step=advice)

    def _redirected(self, endpoint: Endpoint, response: httpx.Response) -> CookedUnavailable:
        _log(endpoint, f"{response.status_code}, redirect not followed")
        # httpx builds the redirect's request even when it follows none; a 3xx without Location has none
        url = response.next_request.url if response.next_request else response.request.url
        host = url.host if url.host != response.request.url.host else ""
        return CookedUnavailable(
            f"The {endpoint.name} request failed: Cooked at {self.base_url} redirected it"
            f"{f' to {url.scheme}://{host}' if host else ''} instead of answering it",
            status=response.status_code,
            next_step=(
                f"change {self.base_url_setting} to the address Cooked answers at directly "
                "(for example https://cooked.wiki), or retry later"
            ),
        )


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and everything it wraps: causes, contexts and the members of exception groups, each
    once (``raise a from b`` inside ``except b`` makes a loop)."""
    seen: set[int] = set()
    waiting = [exc]
    while waiting:
        current = waiting.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        grouped = current.exceptions if isinstance(current, BaseExceptionGroup) else ()
        waiting += [
            inner for inner in (current.__cause__, current.__context__, *grouped) if inner is not None
        ]


def _log(endpoint: Endpoint, outcome: str) -> None:
    """Method, path template and outcome only: never the filled path (it holds the username)."""
    logger.debug("Cooked %s %s (%s) -> %s", endpoint.method, endpoint.path_template, endpoint.name, outcome)


async def read_bounded(chunks: AsyncIterable[bytes], limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of an uncompressed body, and whether there was more (the rest stays unread)."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            del body[limit:]  # in place: a slice would copy the whole bound again
            return bytes(body), True
    return bytes(body), False


def bound_jar(jar: httpx.Cookies, held: set[CookieKey]) -> set[CookieKey]:
    """Keep ``jar`` within ``MAX_COOKIES`` / ``MAX_COOKIE_BYTES``: cookies already ``held`` first (the login's
    session cookie stays), then new ones while they fit. Returns the cookies now held.
    """
    cookies = jar.jar
    ordered = sorted(cookies, key=lambda cookie: (cookie.domain, cookie.path, cookie.name) not in held)
    count = size = 0
    for cookie in ordered:
        cost = len(cookie.name.encode()) + len((cookie.value or "").encode()) + 3  # "=" and "; "
        if count < MAX_COOKIES and size + cost <= MAX_COOKIE_BYTES:
            count, size = count + 1, size + cost
        else:
            cookies.clear(cookie.domain, cookie.path, cookie.name)
    if dropped := len(ordered) - count:
        logger.warning(
            "Cooked set more cookies than cooked-mcp keeps (at most %d cookies, %d bytes); dropped %d",
            MAX_COOKIES,
            MAX_COOKIE_BYTES,
            dropped,
        )
    return {(cookie.domain, cookie.path, cookie.name) for cookie in cookies}
