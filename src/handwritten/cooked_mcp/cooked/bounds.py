"""How much of what Cooked (or a proxy) sends is read and kept: bodies up to a bound, the rest never
downloaded, and a cookie jar small enough that no server refuses the ``Cookie`` header it makes.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable

import httpx

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

#: Parsed request URLs the client keeps (httpx checks each one character by character): the
#: addresses used again and again are parsed once; past this many it forgets them all.
MAX_PARSED_URLS = 128

CookieKey = tuple[str, str, str]  # domain, path, name


async def read_bounded(chunks: AsyncIterable[bytes], limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of an uncompressed body, and whether there was more (the rest stays unread)."""
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            return bytes(body[:limit]), True
    return bytes(body), False


def bound_jar(jar: httpx.Cookies, held: set[CookieKey]) -> set[CookieKey]:
    """Keep ``jar`` within ``MAX_COOKIES`` / ``MAX_COOKIE_BYTES``: cookies already ``held`` first (the login's
    session cookie stays), then new ones while they fit. Returns the cookies now held.
    """
    cookies = jar.jar
    ordered = sorted(cookies, key=lambda cookie: (cookie.domain, cookie.path, cookie.name) not in held)
    count = size = dropped = 0
    for cookie in ordered:
        cost = len(cookie.name.encode()) + len((cookie.value or "").encode()) + 3  # "=" and "; "
        if count < MAX_COOKIES and size + cost <= MAX_COOKIE_BYTES:
            count, size = count + 1, size + cost
        else:
            cookies.clear(cookie.domain, cookie.path, cookie.name)
            dropped += 1
    if dropped:
        logger.warning(
            "Cooked set more cookies than cooked-mcp keeps (at most %d cookies, %d bytes); dropped %d",
            MAX_COOKIES,
            MAX_COOKIE_BYTES,
            dropped,
        )
    return {(cookie.domain, cookie.path, cookie.name) for cookie in cookies}
