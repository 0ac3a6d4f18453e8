"""The Cooked client keeps its session in httpx's own in-memory cookie jar, bounded by ``bound_jar``:
every request gets the cookies the standard library's rules give it, and dropped cookies stay gone.
"""

from __future__ import annotations

import time

import httpx
import pytest
import respx
from client_support import SESSION_COOKIE, make_client, user_path

from cooked_mcp.cooked.sender import MAX_COOKIES, bound_jar

HOST = "https://cooked.test"


def _answer(url: str, *set_cookies: str) -> httpx.Response:
    return httpx.Response(
        200, headers=[("Set-Cookie", c) for c in set_cookies], request=httpx.Request("GET", url)
    )


def _header(cookies: httpx.Cookies, url: str) -> str | None:
    request = httpx.Request("GET", url)
    cookies.set_cookie_header(request)
    return request.headers.get("cookie")


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
def test_cookies_dropped_by_the_jar_bound_are_not_sent_again() -> None:
    cookies = httpx.Cookies()
    url = f"{HOST}/api/user/u/shopping-list"
    cookies.extract_cookies(_answer(f"{HOST}/api/public/login", "session=s1; Path=/"))
    held = bound_jar(cookies, set())
    assert _header(cookies, url) == "session=s1"
    cookies.extract_cookies(_answer(url, *(f"flood{i}=v; Path=/" for i in range(MAX_COOKIES + 5))))
    bound_jar(cookies, held)
    header = _header(cookies, url) or ""
    assert len(header.split("; ")) == MAX_COOKIES
    assert "session=s1" in header.split("; ")


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
@pytest.mark.anyio
async def test_the_client_sends_through_the_session_jar(router: respx.MockRouter) -> None:
    """The Cooked client's httpx client puts the login's cookie on its requests, and only where
    the cookie's path allows it."""
    router.post("/api/public/login").mock(
        return_value=httpx.Response(
            200,
            json={"message": "Authenticated successfully", "username": "canary-user-9b1e"},
            headers=[
                ("Set-Cookie", f"ring-session={SESSION_COOKIE}; Path=/; HttpOnly"),
                ("Set-Cookie", "scoped=elsewhere; Path=/api/saved"),
            ],
        )
    )
    shopping = router.get(user_path("/shopping-list")).mock(
        return_value=httpx.Response(200, json={"aisles": []})
    )
    async with make_client(router) as client:
        await client.get_shopping_list()
        await client.get_shopping_list()
        http = client._sender._http  # httpx's own client and jar: no subclass, no override
        assert type(http) is httpx.AsyncClient and type(http.cookies) is httpx.Cookies

    assert [call.request.headers["cookie"] for call in shopping.calls] == [
        f"ring-session={SESSION_COOKIE}"
    ] * 2


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
@pytest.mark.anyio
async def test_the_jar_is_asked_again_only_when_its_cookies_changed_or_expired(
    router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While every cookie held has path / the jar gives every request the same header, so it is
    asked once, not per request (asking costs ~0.1 ms a call); a cookie set, or one expiring,
    has it asked again, and an expired cookie is no longer sent."""
    asked: list[str] = []
    ask = httpx.Cookies.set_cookie_header

    def counted(cookies: httpx.Cookies, request: httpx.Request) -> None:
        asked.append(request.url.path)
        ask(cookies, request)

    monkeypatch.setattr(httpx.Cookies, "set_cookie_header", counted)
    now = [time.time()]
    monkeypatch.setattr(time, "time", lambda: now[0])
    router.post("/api/public/login").mock(
        return_value=httpx.Response(
            200,
            json={"message": "Authenticated successfully", "username": "canary-user-9b1e"},
            headers=[("Set-Cookie", f"ring-session={SESSION_COOKIE}; Path=/; Max-Age=600")],
        )
    )
    shopping = router.get(user_path("/shopping-list")).mock(
        side_effect=[
            httpx.Response(200, json={"aisles": []}),
            httpx.Response(200, json={"aisles": []}, headers={"Set-Cookie": "theme=dark; Path=/"}),
            *(httpx.Response(200, json={"aisles": []}) for _ in range(3)),
        ]
    )
    async with make_client(router) as client:
        for _ in range(3):
            await client.get_shopping_list()
        now[0] += 601  # the session cookie has expired
        await client.get_shopping_list()
        await client.get_shopping_list()

    sent = [call.request.headers.get("cookie") for call in shopping.calls]
    session = f"ring-session={SESSION_COOKIE}"
    assert sent == [session, session, f"{session}; theme=dark", "theme=dark", "theme=dark"]
    # the login, the first request, the one after a cookie was set, the one after the expiry
    assert len(asked) == 4, asked
