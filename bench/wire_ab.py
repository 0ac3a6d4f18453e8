"""Section: the Cooked client's HTTP layer, today's ``Wire`` against ``httpx.AsyncClient`` + ``httpx.Auth``.

``cooked_mcp.cooked.wire`` sends straight to the httpx transport and so re-implements what
``httpx.AsyncClient(trust_env=True)`` would give (proxy selection from the environment, the
cookie jar), and login / the one re-login on a 401 live in ``session.py`` and ``client.py``
instead of an ``httpx.Auth`` flow. Issue 19 asks to prefer the library unless it costs more
than ``LIBRARY_LIMIT_MS`` at p50 per Cooked request (a real Cooked round trip is tens of ms).

Both sides run in this process against the fake Cooked on 127.0.0.1, in turn (A,B,A,B...)
and in both orders
(A,B,B,A...) so they see the same machine at the same moments:

- **wire**: today's product path, ``Session.current()`` then ``Wire.send()``;
- **library**: ``LibraryWire`` below, the same bounds built on ``httpx.AsyncClient(trust_env=True)``
  with a ``LoginAuth`` flow that logs in and renews the session once on a 401 (single-flight:
  concurrent 401s cause one login; checked here before anything is timed).

Both return the same ``Reply`` for the same request. The figure and the threshold are
printed on every run, so the decision is re-measured whenever the benchmark runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any

import httpx
from pydantic import SecretStr

from cooked_fake import SEED_LOGIN, SEED_PASSWORD
from cooked_mcp import __version__
from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.endpoints import Endpoint, Key
from cooked_mcp.cooked.session import Session
from cooked_mcp.cooked.wire import (
    MAX_COOKIE_BYTES,
    MAX_COOKIES,
    MAX_SUCCESS_BODY_BYTES,
    Reply,
    Timeouts,
    Wire,
)

from .context import Context
from .measure import Stats, interleaved, ms

SECTION = "http_layer"
#: The issue's rule: the library is preferred unless it costs more than this at p50 per request.
LIBRARY_LIMIT_MS = 0.3
#: Error bodies are read up to this many bytes, as ``cooked.errors.MAX_ERROR_BODY_BYTES``.
_MAX_ERROR_BODY_BYTES = 64 * 1024


class LoginAuth(httpx.Auth):
    """Login before the first request and one renewal on a 401, single-flight.

    A generation counter (finished logins) decides who logs in: a flow that saw generation
    ``g`` rejected renews only if no other flow has finished a login since.
    """

    def __init__(self, login: Callable[[], Awaitable[str]], cookies: httpx.Cookies) -> None:
        self._login = login
        self._cookies = cookies
        self._lock = asyncio.Lock()
        self.generation = 0
        self.username: str | None = None
        self.logins = 0

    async def renew(self, seen: int) -> str:
        async with self._lock:
            if self.generation == seen or self.username is None:
                self._cookies.clear()
                try:
                    self.username = await self._login()
                    self.logins += 1
                finally:
                    self.generation += 1
            assert self.username is not None
            return self.username

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        seen = self.generation
        if self.username is None:
            await self.renew(seen)
            self._set_cookie_header(request)
            seen = self.generation
        response = yield request
        if response.status_code != 401:
            return
        await response.aclose()
        response._content = b""  # the rejected answer's body is not read (httpx would read all of it)
        await self.renew(seen)
        self._set_cookie_header(request)
        yield request

    def _set_cookie_header(self, request: httpx.Request) -> None:
        """The request was built with the cookies of the session before: put the new session's on."""
        request.headers.pop("cookie", None)
        self._cookies.set_cookie_header(request)


class LibraryWire:
    """The same exchange as ``Wire.send`` (same bounds, same ``Reply``) on ``httpx.AsyncClient``."""

    def __init__(
        self, base_url: str, login_name: str, password: str, timeouts: Timeouts | None = None
    ) -> None:
        self._timeouts = timeouts or Timeouts()
        self._login_body = {Key.USERNAME: login_name, Key.PASSWORD: password}
        self._http = httpx.AsyncClient(
            base_url=base_url,
            trust_env=True,
            follow_redirects=False,
            headers={
                "Accept": "application/json",
                "Accept-Encoding": "identity",
                "User-Agent": f"cooked-mcp/{__version__}",
            },
            event_hooks={"response": [self._bound_cookies]},
        )
        self.auth = LoginAuth(self._post_login, self._http.cookies)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _bound_cookies(self, response: httpx.Response) -> None:
        """The jar's bounds, as ``Wire._store_cookies`` keeps them (the client has just stored them)."""
        if "set-cookie" not in response.headers:
            return
        jar = self._http.cookies.jar
        count = size = 0
        for cookie in list(jar):
            cost = len(cookie.name.encode()) + len((cookie.value or "").encode()) + 3
            if count < MAX_COOKIES and size + cost <= MAX_COOKIE_BYTES:
                count, size = count + 1, size + cost
            else:
                jar.clear(cookie.domain, cookie.path, cookie.name)

    async def _post_login(self) -> str:
        reply = await self._exchange(
            endpoints.LOGIN, endpoints.LOGIN.path(), None, self._login_body, auth=None
        )
        if not reply.ok:
            raise RuntimeError(f"login failed: {reply.status}")
        return str(httpx.Response(200, content=reply.body).json()[Key.USERNAME])

    async def username(self) -> str:
        return self.auth.username or await self.auth.renew(self.auth.generation)

    async def send(
        self,
        endpoint: Endpoint,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Reply:
        return await self._exchange(endpoint, path, params, body, auth=self.auth)

    async def _exchange(
        self,
        endpoint: Endpoint,
        path: str,
        params: Mapping[str, str | int] | None,
        body: Mapping[str, Any] | None,
        *,
        auth: httpx.Auth | None,
    ) -> Reply:
        request = self._http.build_request(
            endpoint.method, path, params=params, json=body, timeout=self._timeouts.for_endpoint(endpoint)
        )
        async with asyncio.timeout(self._timeouts.deadline(endpoint)):
            response = await self._http.send(request, stream=True, auth=auth)
            try:
                if 300 <= response.status_code < 400:
                    raise RuntimeError("redirected")
                limit = MAX_SUCCESS_BODY_BYTES if response.is_success else _MAX_ERROR_BODY_BYTES
                chunks: list[bytes] = []
                size, truncated = 0, False
                async for chunk in response.aiter_bytes():
                    room = limit - size
                    if len(chunk) > room:
                        chunks.append(chunk[:room])
                        truncated = True
                        break
                    chunks.append(chunk)
                    size += len(chunk)
            finally:
                await response.aclose()
        return Reply(
            status=response.status_code,
            body=b"".join(chunks),
            truncated=truncated,
            retry_after=response.headers.get("retry-after"),
        )


class _Today:
    """The product's path today: the session, then the wire."""

    def __init__(self, base_url: str) -> None:
        self.wire = Wire(base_url)
        self.session = Session(self.wire, SEED_LOGIN, SecretStr(SEED_PASSWORD))

    async def send(self, endpoint: Endpoint, **path: str) -> Reply:
        _, username = await self.session.current()
        if endpoint.user_scoped:
            path["username"] = username
        return await self.wire.send(endpoint, endpoint.path(**path))


async def _library_send(library: LibraryWire, endpoint: Endpoint, **path: str) -> Reply:
    if endpoint.user_scoped:
        path["username"] = await library.username()
    return await library.send(endpoint, endpoint.path(**path))


async def _single_flight(ctx: Context) -> int:
    """Expire every session, then 16 concurrent requests: the Auth flow must log in once.

    A client of its own: the burst leaves 16 connections in its pool, which makes every later
    request through that pool slower (about 0.2 ms here) and would blur the comparison.
    """
    library = LibraryWire(ctx.fake.base_url, SEED_LOGIN, SEED_PASSWORD)
    try:
        await library.username()
        before = library.auth.logins
        ctx.fake.expire_sessions()
        recipe = endpoints.GET_RECIPE
        replies = await asyncio.gather(
            *(_library_send(library, recipe, recipe_id="r-0001") for _ in range(16))
        )
    finally:
        await library.aclose()
    if any(not reply.ok for reply in replies):
        raise RuntimeError(f"the library variant failed after re-login: {[r.status for r in replies]}")
    return library.auth.logins - before


WORKLOADS: tuple[tuple[str, Endpoint, dict[str, str]], ...] = (
    ("GET recipe", endpoints.GET_RECIPE, {"recipe_id": "r-0001"}),
    ("GET shopping list", endpoints.GET_SHOPPING_LIST, {}),
)


async def run(ctx: Context) -> None:
    calls, warmup = ctx.plan.overhead_calls * 4, ctx.plan.overhead_warmup * 4
    print(
        f"HTTP layer A/B: today's wire vs httpx.AsyncClient(trust_env=True) + httpx.Auth, "
        f"{calls} requests each after {warmup} warm-up, in turn",
        flush=True,
    )
    ctx.fake.reset()
    logins = await _single_flight(ctx)
    today, library = _Today(ctx.fake.base_url), LibraryWire(ctx.fake.base_url, SEED_LOGIN, SEED_PASSWORD)
    rows: list[dict[str, Any]] = []
    try:
        for name, endpoint, path in WORKLOADS:

            async def a(endpoint: Endpoint = endpoint, path: dict[str, str] = path) -> Reply:
                return await today.send(endpoint, **path)

            async def b(endpoint: Endpoint = endpoint, path: dict[str, str] = path) -> Reply:
                return await _library_send(library, endpoint, **path)

            first_a, first_b = await a(), await b()
            if (first_a.status, first_a.body) != (first_b.status, first_b.body):
                raise RuntimeError(f"{name}: the two variants answered differently")
            for _ in range(warmup):
                await a()
                await b()
            wire_times, library_times = await interleaved(calls, a, b, alternate=True)
            wire, lib = Stats.of(wire_times), Stats.of(library_times)
            rows.append(
                {
                    "request": name,
                    "wire": wire.as_dict(),
                    "library": lib.as_dict(),
                    "library_minus_wire_p50_ms": ms(lib.p50 - wire.p50),
                }
            )
            print(
                f"  {name:18} p50 wire {wire.p50:.3f} ms, library {lib.p50:.3f} ms "
                f"({lib.p50 - wire.p50:+.3f} ms; threshold {LIBRARY_LIMIT_MS} ms)",
                flush=True,
            )
    finally:
        await today.wire.aclose()
        await library.aclose()
    ctx.results.sections[SECTION] = {"rows": rows, "limit_ms": LIBRARY_LIMIT_MS, "burst_logins": logins}
    ctx.results.check(
        SECTION,
        "httpx.AsyncClient + httpx.Auth minus today's wire, p50 per Cooked request",
        f"switch if ≤ {LIBRARY_LIMIT_MS:g} ms",
        ", ".join(f"{row['request']} {row['library_minus_wire_p50_ms']:+.3f} ms" for row in rows)
        + f" (16 concurrent 401s → {logins} login)",
        None,
    )
