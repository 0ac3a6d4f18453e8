"""The session's cookie jar: ``http.cookiejar``'s rules, each decision remembered until it can change.

Every Cooked request carries the cookies the jar picks for its address, by the standard
library's domain, path, secure-scheme and expiry rules (authentication.SESSION.1/2). Making
that decision costs about 30 µs a request (httpx builds a ``urllib`` request for it and the
policy parses its URL again for each check), and answering with no ``Set-Cookie`` another
20 µs (the same shim, for nothing): together the largest part of a tool call that was
cooked-mcp's own.

So the jar remembers what it decided for an address (scheme, host, port and path; the query
plays no part in cookie rules) and gives the same answer again only while nothing that
decision rests on can have changed: any cookie set or cleared (an answer's ``Set-Cookie``,
a login clearing the jar, the jar bounds dropping one), a new policy, or the moment its
earliest-expiring cookie expires. Everything else goes through the standard library as
before, and an answer without ``Set-Cookie`` is not offered to the jar at all (there is
nothing in it for the jar to take).
"""

from __future__ import annotations

import http.cookiejar
import math
import time
import urllib.request

import httpx

__all__ = ["MAX_REMEMBERED", "SessionCookies", "SessionJar"]

#: Addresses remembered at once; past it the jar forgets them all and starts again.
MAX_REMEMBERED = 64


def _address(url: str) -> str:
    return url.partition("?")[0]


# implements: authentication.SESSION.1, authentication.SESSION.2
class SessionJar(http.cookiejar.CookieJar):
    """A ``CookieJar`` whose ``add_cookie_header`` decision is remembered per address.

    Every change to the jar goes through ``set_cookie`` or ``clear`` (the standard library's
    ``extract_cookies``, ``set_cookie_if_ok`` and ``clear_*`` call them), and each one forgets
    every remembered decision. Like the rest of the Cooked client it is used from one thread,
    the event loop's.
    """

    def __init__(self, policy: http.cookiejar.CookiePolicy | None = None) -> None:
        policy = policy or http.cookiejar.DefaultCookiePolicy()
        #: address -> (the ``Cookie`` header decided, "" for none; when the first cookie in the jar expires)
        self._decided: dict[str, tuple[str, float]] = {}
        self._rfc2965 = policy.rfc2965
        super().__init__(policy)

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        self._decided.clear()
        super().set_cookie(cookie)

    def clear(self, domain: str | None = None, path: str | None = None, name: str | None = None) -> None:
        self._decided.clear()
        super().clear(domain, path, name)

    def set_policy(self, policy: http.cookiejar.CookiePolicy) -> None:
        self._decided.clear()
        self._rfc2965 = policy.rfc2965
        super().set_policy(policy)

    def add_cookie_header(self, request: urllib.request.Request) -> None:
        """The standard library's decision, remembered for the request's address when it rests on
        that address alone: a request the user asked for (not ``unverifiable``, so whose page it
        came from plays no part) with no ``Cookie`` header of its own, and no RFC 2965
        ``Cookie2`` header to advertise."""
        remember = not (request.unverifiable or request.has_header("Cookie") or self._rfc2965)
        super().add_cookie_header(request)  # also clears expired cookies
        if remember:
            if len(self._decided) >= MAX_REMEMBERED:
                self._decided.clear()
            expires = min((cookie.expires for cookie in self if cookie.expires is not None), default=math.inf)
            self._decided[_address(request.get_full_url())] = (request.get_header("Cookie", ""), expires)

    def decided_header(self, url: str) -> str | None:
        """The ``Cookie`` header this jar decided for ``url``'s address ("" for none), or None
        when it has to decide afresh: never decided, or the jar changed or a cookie expired since."""
        decided = self._decided.get(_address(url))
        if decided is None or time.time() >= decided[1]:
            return None
        return decided[0]


class SessionCookies(httpx.Cookies):
    """httpx's cookies over a ``SessionJar``, without httpx's ``urllib`` shim when it has nothing to do.

    A request whose address the jar has decided gets the jar's remembered header; any other
    goes through httpx and the standard library as usual (and the jar remembers it). An answer
    is passed to the jar only when it sets a cookie.
    """

    jar: SessionJar

    def __init__(self) -> None:
        super().__init__(SessionJar())

    def set_cookie_header(self, request: httpx.Request) -> None:
        header = self.jar.decided_header(str(request.url))
        if header is None:
            super().set_cookie_header(request)
        elif header and "cookie" not in request.headers:
            request.headers["Cookie"] = header

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)
