"""The Cooked client keeps its session in httpx's own in-memory cookie jar, bounded by ``bound_jar``:
every request gets the cookies the standard library's rules give it, and dropped cookies stay gone.
"""

from __future__ import annotations

import httpx
import pytest
import respx
from client_support import SESSION_COOKIE, make_client, user_path

from cooked_mcp.cooked.bounds import MAX_COOKIES, bound_jar

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
