"""Section: what the Cooked client's HTTP layer costs for going through ``httpx.AsyncClient``.

Until issue 19, ``cooked_mcp.cooked.sender`` sent straight to the httpx transport (about 0.5 ms
of CPU saved per request, it said) and so re-implemented proxy selection from the environment
and cookie handling, with login and the re-login on a 401 spread over ``session.py`` and
``client.py``. The issue's rule: a real Cooked round trip is tens of ms, so prefer the library
unless it costs more than ``LIBRARY_LIMIT_MS`` at p50 per request. Measured A/B in one run
(this section's first version), ``httpx.AsyncClient(trust_env=True)`` with an ``httpx.Auth``
login flow cost +0.07 to +0.10 ms, and the product moved to it. Since issue 40 the client
retries after a re-login itself (no ``httpx.Auth``) and uses httpx's own cookie jar.

This section keeps measuring that decision on every run, against the fake Cooked on
127.0.0.1, both sides in this process, in turn and in both orders (A,B,B,A...):

- **product**: what ``CookedClient`` does per request, ``Session.current()`` then ``Sender.send()``
  through the ``httpx.AsyncClient``;
- **transport**: ``TransportDirect`` below, the pre-issue-19 hot path: one ``httpx.Request``
  handed to the transport, the cookie jar applied by hand, the same bounded read.

Both must answer the same bytes for the same request. The figure and the threshold are
printed (an informational line: the decision is the reader's, not a pass/fail target).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import SecretStr

from cooked_fake import SEED_LOGIN, SEED_PASSWORD
from cooked_mcp import __version__
from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.endpoints import Endpoint, Key
from cooked_mcp.cooked.sender import MAX_SUCCESS_BODY_BYTES, Answer, Sender, Timeouts, read_bounded
from cooked_mcp.cooked.session import Session

from .context import Context
from .measure import Stats, interleaved, ms

SECTION = "http_layer"
#: The issue's rule: the library is preferred unless it costs more than this at p50 per request.
LIBRARY_LIMIT_MS = 0.3


class TransportDirect:
    """The pre-issue-19 hot path: straight to the transport, cookies applied by hand."""

    def __init__(self, base_url: str, timeouts: Timeouts | None = None) -> None:
        self._base_url = base_url
        self._timeouts = timeouts or Timeouts()
        self._transport = httpx.AsyncHTTPTransport()
        self._cookies = httpx.Cookies()
        self._headers = {
            "Accept": "application/json",
            "Accept-Encoding": "identity",
            "User-Agent": f"cooked-mcp/{__version__}",
        }
        self.username = ""

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def login(self) -> None:
        body = {Key.USERNAME: SEED_LOGIN, Key.PASSWORD: SEED_PASSWORD}
        reply = await self.send(endpoints.LOGIN, endpoints.LOGIN.path(), body=body)
        self.username = str(json.loads(reply.body)[Key.USERNAME])

    async def send(
        self,
        endpoint: Endpoint,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Answer:
        request = httpx.Request(
            endpoint.method,
            httpx.URL(self._base_url + path, params=params),
            headers=self._headers,
            json=body,
            extensions={"timeout": self._timeouts.for_endpoint(endpoint).as_dict()},
        )
        self._cookies.set_cookie_header(request)
        async with asyncio.timeout(self._timeouts.deadline(endpoint)):
            response = await self._transport.handle_async_request(request)
            response.request = request
            try:
                if "set-cookie" in response.headers:
                    self._cookies.extract_cookies(response)
                data, truncated = await read_bounded(response.aiter_bytes(), MAX_SUCCESS_BODY_BYTES)
            finally:
                await response.aclose()
        return Answer(response.status_code, data, truncated, None)


class _Product:
    """What ``CookedClient._call`` does per request, short of decoding the answer."""

    def __init__(self, base_url: str) -> None:
        self.wire = Sender(base_url)
        self.session = Session(self.wire, SEED_LOGIN, SecretStr(SEED_PASSWORD))

    async def send(self, endpoint: Endpoint, path: Mapping[str, str]) -> Answer:
        _, username = await self.session.current()
        return await self.wire.send(endpoint, _path(endpoint, path, username))


def _path(endpoint: Endpoint, values: Mapping[str, str], username: str) -> str:
    """The request path, with the signed-in username for a user-scoped endpoint."""
    return endpoint.path(**values, **({"username": username} if endpoint.user_scoped else {}))


WORKLOADS: tuple[tuple[str, Endpoint, dict[str, str]], ...] = (
    ("GET recipe", endpoints.GET_RECIPE, {"recipe_id": "r-0001"}),
    ("GET shopping list", endpoints.GET_SHOPPING_LIST, {}),
)


async def run(ctx: Context) -> None:
    calls, warmup = ctx.plan.overhead_calls * 4, ctx.plan.overhead_warmup * 4
    print(
        f"HTTP layer: httpx.AsyncClient (the product) vs the transport directly, "
        f"{calls} requests each after {warmup} warm-up, in turn",
        flush=True,
    )
    ctx.fake.reset()
    product, transport = _Product(ctx.fake.base_url), TransportDirect(ctx.fake.base_url)
    rows: list[dict[str, Any]] = []
    try:
        await transport.login()
        for name, endpoint, path in WORKLOADS:

            async def a(endpoint: Endpoint = endpoint, path: dict[str, str] = path) -> Answer:
                return await product.send(endpoint, path)

            async def b(endpoint: Endpoint = endpoint, path: dict[str, str] = path) -> Answer:
                return await transport.send(endpoint, _path(endpoint, path, transport.username))

            first_a, first_b = await a(), await b()
            if (first_a.status, first_a.body) != (first_b.status, first_b.body) or not first_a.ok:
                raise RuntimeError(
                    f"{name}: the two answered differently ({first_a.status}, {first_b.status})"
                )
            await interleaved(warmup, a, b)
            product_times, transport_times = await interleaved(calls, a, b, alternate=True)
            client, direct = Stats.of(product_times), Stats.of(transport_times)
            rows.append(
                {
                    "request": name,
                    "async_client_and_auth": client.as_dict(),
                    "transport_direct": direct.as_dict(),
                    "library_minus_transport_p50_ms": ms(client.p50 - direct.p50),
                }
            )
            print(
                f"  {name:18} p50 AsyncClient+Auth {client.p50:.3f} ms, transport directly {direct.p50:.3f} ms "
                f"({client.p50 - direct.p50:+.3f} ms; threshold {LIBRARY_LIMIT_MS} ms)",
                flush=True,
            )
    finally:
        await product.wire.aclose()
        await transport.aclose()
    ctx.results.sections[SECTION] = {"rows": rows, "limit_ms": LIBRARY_LIMIT_MS}
    ctx.results.check(
        SECTION,
        "httpx.AsyncClient (the product) minus the transport directly, p50 per Cooked request",
        f"library preferred while ≤ {LIBRARY_LIMIT_MS:g} ms",
        ", ".join(f"{row['request']} {row['library_minus_transport_p50_ms']:+.3f} ms" for row in rows),
        None,
    )
