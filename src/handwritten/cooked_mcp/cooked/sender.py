"""One HTTP exchange with Cooked: build, send, read a bounded body, map transport failures.

This is the only module that touches httpx directly. It owns the process's one
``httpx.AsyncClient``: its connection pool, the proxy it takes from the environment
(``HTTPS_PROXY``, ``HTTP_PROXY`` or ``ALL_PROXY`` unless ``NO_PROXY`` covers the host), the CA
settings ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``, and its cookie jar (``jar.SessionCookies``):
cookies live in that in-memory jar only, are set by Cooked's ``Set-Cookie`` and put on each
request by the jar, and never follow a redirect, because redirects are not followed at all.
Login and the one re-login on a lost session are the ``httpx.Auth`` flow of ``session.Session``.

The client is built at the first request, because building it loads the TLS trust store,
the largest part of start-up that is ours; the environment is read then. Going through the
client rather than straight to the transport costs a few hundredths of a millisecond per
request (``make bench``, section ``http_layer``; issue 19 set 0.3 ms as the most worth saving).

Every bound that keeps a misbehaving Cooked (or a proxy in front of it) from holding the
process is applied here: one overall deadline per exchange, bounded body reads (an error body
is cut to its bound as soon as it arrives, before the auth flow or httpx read it), no
compressed bodies at all, and a bounded cookie jar (the figures and readers are in ``bounds``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from cooked_mcp import __version__
from cooked_mcp.cooked.bounds import (
    MAX_SUCCESS_BODY_BYTES,
    CookieKey,
    bound_error_body,
    bound_jar,
    compression,
    error_body,
    read_bounded,
)
from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.cooked.failures import base_url_setting, connect_failure
from cooked_mcp.cooked.jar import SessionCookies
from cooked_mcp.exceptions import CookedResponseError, CookedUnavailable
from cooked_mcp_runtime.results import ANSWERS

__all__ = [
    "Answer",
    "Sender",
    "Timeouts",
    "session_lost",
]

logger = logging.getLogger("cooked_mcp.cooked")


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
class Answer:
    """A received answer: status, the (bounded) body, and whether the body was cut short."""

    status: int
    body: bytes
    truncated: bool
    retry_after: str | None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


#: Request and response extensions of ours (httpx passes unknown keys through untouched).
_REPATH = "cooked_mcp.repath"  # request: username -> path, to re-address a retry after a re-login
_DEADLINE = "cooked_mcp.deadline"  # request: the exchange's overall deadline


def session_lost(request: httpx.Request, response: httpx.Response) -> bool:
    """The session cannot be used as it is: log in afresh (with an empty jar) and retry once.

    A 401; or the request was refused for its size (431, or a proxy's 400 about its headers or
    cookies) while it carried cookies, which only a cookie jar grown too big explains.
    """
    if response.status_code == 401:
        return True
    body, _ = error_body(response)
    return "cookie" in request.headers and _refused_for_size(response.status_code, body)


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
        """``base_url_from`` is where the base URL was set, for the messages that ask to check it."""
        self.base_url = base_url.rstrip("/")
        #: The base URL and its source, as messages that point at the setting name it.
        self.base_url_setting = base_url_setting(self.base_url, base_url_from)
        self.timeouts = timeouts or Timeouts()
        self._given_transport = transport
        #: The cookies kept after the last answer that set any: they come first when the jar is bounded.
        self._held: set[CookieKey] = set()
        # implements: api-client.REQUESTS.2
        self._headers = httpx.Headers(  # normalised once; each request copies the list
            {
                "Accept": "application/json",
                # identity: the bounds on how much of a body is read are then bounds on bytes received,
                # not on what a small compressed answer could expand to.
                "Accept-Encoding": "identity",
                "User-Agent": f"cooked-mcp/{__version__}",
            }
        )

    @functools.cached_property
    def _http(self) -> httpx.AsyncClient:
        # implements: authentication.SESSION.7, authentication.SESSION.8
        return _Client(
            SessionCookies(),
            trust_env=True,  # proxy and CA settings from the environment, as any httpx client
            verify=httpx.create_ssl_context(),  # one trust store for the client and a proxy's transport
            transport=self._given_transport,
            follow_redirects=False,
            event_hooks={"response": [self._on_response]},
        )

    # implements: authentication.SESSION.3
    def clear_cookies(self) -> None:
        """Forget the session: the next request goes out without any Cooked cookie."""
        if "_http" in self.__dict__:
            self._http.cookies.clear()
        self._held = set()

    def cookie_values(self) -> list[str]:
        """Cookie values held right now, only so that error text can be scrubbed of them."""
        if "_http" not in self.__dict__:  # nothing sent yet: no cookie, and no trust store loaded for it
            return []
        return [cookie.value for cookie in self._http.cookies.jar if cookie.value]

    async def aclose(self) -> None:
        if "_http" in self.__dict__:
            await self._http.aclose()
        elif self._given_transport is not None:
            await self._given_transport.aclose()

    # implements: api-client.REQUESTS.1, api-client.REQUESTS.4, authentication.SESSION.1, authentication.SESSION.2, authentication.LOGIN.3, api-client.LIMITS.1
    async def send(
        self,
        endpoint: Endpoint,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
        auth: httpx.Auth | None = None,
        repath: Callable[[str], str] | None = None,
    ) -> Answer:
        """Send one request and return its answer; only transport trouble raises here
        (and whatever ``auth`` raises when it cannot log in).

        The body of a non-2xx answer is read up to ``bounds.MAX_ERROR_BODY_BYTES`` and the rest is
        never downloaded: it is only used to extract ``code`` and ``message``. The whole
        exchange ends by the endpoint's deadline, whatever the answer's pace; a re-login by
        ``auth`` and the retry after it get deadlines of their own (``restart_deadline``).
        ``repath`` gives the path for another username, for a retry after a re-login.
        """
        unknown = set(params or {}) - set(endpoint.query)
        if unknown:
            raise ValueError(f"{endpoint.name} takes no query parameters {sorted(unknown)}")
        seconds = self.timeouts.deadline(endpoint)
        try:
            async with asyncio.timeout(seconds) as deadline:
                # Built here rather than by the client's build_request, which copies the whole cookie
                # jar and merges default headers on every request: the client sends it as it is.
                request = httpx.Request(
                    endpoint.method,
                    _url(self.base_url, path, tuple(params.items()) if params else (), endpoint.name),
                    headers=self._headers,
                    json=body,
                    extensions={
                        "timeout": self.timeouts.for_endpoint(endpoint).as_dict(),
                        _DEADLINE: (deadline, seconds),
                        _REPATH: repath,
                    },
                )
                http = self._client(endpoint)
                http.cookies.set_cookie_header(request)
                response = await http.send(request, auth=auth, stream=True)
                try:
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
            what, next_step = connect_failure(exc, self.base_url_setting)
            raise self._unavailable(endpoint, what, next_step=next_step) from None
        except httpx.TransportError:
            raise self._unavailable(endpoint, "broke off the connection", answer_lost=True) from None
        _log(endpoint, str(response.status_code))
        return Answer(
            status=response.status_code,
            body=data,
            truncated=truncated,
            retry_after=response.headers.get("retry-after"),
        )

    def _client(self, endpoint: Endpoint) -> httpx.AsyncClient:
        """The client, built now if this is the first request; a proxy variable httpx cannot use,
        or CA settings (``SSL_CERT_FILE``, ``SSL_CERT_DIR``) it cannot load, fail here, on every
        call until fixed, as an error that says which setting to fix."""
        try:
            return self._http
        except ValueError:  # httpx.Proxy: an unknown scheme or a malformed URL; its text may hold the URL
            _log(endpoint, "failed: unusable proxy setting")
            raise CookedUnavailable(
                f"cooked-mcp could not use the proxy set in its environment for the {endpoint.name} request, "
                "so nothing was sent",
                next_step=(
                    "fix or unset HTTPS_PROXY, HTTP_PROXY and ALL_PROXY (a proxy URL starts with http://, "
                    "https:// or socks5://) in the environment cooked-mcp starts with, then restart it"
                ),
            ) from None
        except OSError as exc:  # the CA bundle httpx loads is missing, unreadable or holds no certificate
            _log(endpoint, "failed: unusable CA certificates")
            named = next((name for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if os.environ.get(name)), None)
            where = f"the CA certificates {named} names" if named else "the CA certificates httpx uses"
            raise CookedUnavailable(
                f"cooked-mcp could not load {where} ({exc.strerror or type(exc).__name__}) for the "
                f"{endpoint.name} request, so nothing was sent",
                next_step=(
                    f"point {named} at a readable PEM bundle or unset it"
                    if named
                    else "reinstall cooked-mcp (its certifi CA bundle is missing) or set SSL_CERT_FILE"
                )
                + " in the environment cooked-mcp starts with, then restart it",
            ) from None

    @staticmethod
    def pause_deadline(request: httpx.Request) -> None:
        """A re-login is under way for ``request``: the login's own exchange has its own deadline."""
        deadline, _ = request.extensions[_DEADLINE]
        deadline.reschedule(None)

    def readdress(self, request: httpx.Request, username: str) -> httpx.Request:
        """``request`` to send again after a re-login, as a new request: the new session's cookies,
        the path for the username that login returned, and a deadline of its own."""
        deadline, seconds = request.extensions[_DEADLINE]
        deadline.reschedule(asyncio.get_running_loop().time() + seconds)
        url, repath = request.url, request.extensions[_REPATH]
        if repath is not None:
            path = repath(username)
            query = url.query
            url = url.copy_with(raw_path=path.encode("ascii") + (b"?" + query if query else b""))
            _check_path(url, path)
        headers = request.headers.copy()
        headers.pop("cookie", None)
        retry = httpx.Request(
            request.method, url, headers=headers, content=request.content, extensions=request.extensions
        )
        self._http.cookies.set_cookie_header(retry)
        return retry

    async def _on_response(self, response: httpx.Response) -> None:
        """Runs on every answer as it arrives, before the auth flow or httpx see its body."""
        if "set-cookie" in response.headers:
            self._held = bound_jar(self._http.cookies, self._held)
        if not response.is_success and not 300 <= response.status_code < 400:
            await bound_error_body(response)

    async def _read_body(self, endpoint: Endpoint, response: httpx.Response) -> tuple[bytes, bool]:
        """The raw body, bounded; a compressed one is never decompressed.

        The client asks for ``identity``, so the read bound is a bound on bytes received. A
        server that compresses anyway could make a few KiB expand to gigabytes (``gzip, gzip``
        compounds), so such a successful answer is refused unread; an error answer keeps its
        status and loses only its (unreadable) body (``bounds.bound_error_body``).
        """
        if not response.is_success:
            return error_body(response)
        encoding = compression(response)
        if encoding is not None:
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
            f"The {endpoint.name} request failed: Cooked at {self.base_url} {what}",
            next_step=next_step,
            may_have_changed=answer_lost and endpoint.changes,
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
            f"The {endpoint.name} request failed: Cooked at {self.base_url} redirected it{target} "
            "instead of answering it",
            status=response.status_code,
            next_step=(
                f"change {self.base_url_setting} to the address Cooked answers at directly "
                "(for example https://cooked.wiki), or retry later"
            ),
        )


class _Client(httpx.AsyncClient):
    """An ``httpx.AsyncClient`` whose ``cookies`` are the session's own ``SessionCookies``:
    given to the constructor (or assigned), httpx would copy them into a plain jar."""

    def __init__(self, cookies: SessionCookies, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._session_cookies = cookies

    @property
    def cookies(self) -> SessionCookies:
        return self._session_cookies

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        raise AttributeError("the session's cookie jar cannot be replaced")


#: Parsed request addresses kept at once (SECURITY.md): the most recent ones, least recently used go first.
URL_CACHE_SIZE = 128


@functools.lru_cache(maxsize=URL_CACHE_SIZE)
def _url(base_url: str, path: str, query: tuple[tuple[str, str | int], ...], endpoint_name: str) -> httpx.URL:
    """The request URL, parsed once for the addresses used again and again (parsing one costs
    about 10 µs: httpx checks it character by character)."""
    url = httpx.URL(base_url + path, params=query or None)
    _check_path(url, path, endpoint_name)
    return url


def _check_path(url: httpx.URL, path: str, endpoint_name: str = "") -> None:
    """The path goes out exactly as the endpoint table built it (no dot segment resolved away)."""
    if url.raw_path.split(b"?", 1)[0] != path.encode("ascii"):
        raise ValueError(f"{endpoint_name + ': ' if endpoint_name else ''}the request path was rewritten")


def _log(endpoint: Endpoint, outcome: str) -> None:
    """Method, path template and outcome only: never the filled path (it holds the username)."""
    logger.debug("Cooked %s %s (%s) -> %s", endpoint.method, endpoint.path_template, endpoint.name, outcome)


def _refused_for_size(status: int, body: bytes) -> bool:
    """431, or a 400 that is not Cooked's JSON error but a server's page about headers or cookies."""
    if status == 431:
        return True
    text = body.lower()
    return status == 400 and not body.lstrip().startswith(b"{") and (b"cookie" in text or b"header" in text)
