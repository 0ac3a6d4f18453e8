"""The session jar remembers its decisions, yet every request still gets the cookies the standard
library's rules give it: path, domain, secure scheme, expiry, a cleared jar, a bounded jar.

Each check compares the ``Cookie`` header ``SessionCookies`` puts on a request with the one a plain
``http.cookiejar.CookieJar`` holding the same cookies puts there, asked afresh every time.
"""

from __future__ import annotations

import http.cookiejar
import time

import httpx
import pytest
import respx
from client_support import SESSION_COOKIE, make_client, user_path
from hypothesis import given, settings
from hypothesis import strategies as st

from cooked_mcp.cooked.bounds import MAX_COOKIES, bound_jar
from cooked_mcp.cooked.jar import MAX_REMEMBERED, SessionCookies
from cooked_mcp.cooked.sender import URL_CACHE_SIZE
from cooked_mcp.cooked.sender import _url as request_url

HOST = "https://cooked.test"


def _answer(url: str, *set_cookies: str) -> httpx.Response:
    return httpx.Response(
        200, headers=[("Set-Cookie", c) for c in set_cookies], request=httpx.Request("GET", url)
    )


def _header(cookies: httpx.Cookies, url: str) -> str | None:
    request = httpx.Request("GET", url)
    cookies.set_cookie_header(request)
    return request.headers.get("cookie")


def _fresh_decision(jar: http.cookiejar.CookieJar, url: str) -> str | None:
    """What a plain jar holding the same cookies decides, with no memory of earlier requests."""
    plain = httpx.Cookies()
    for cookie in jar:
        plain.jar.set_cookie(cookie)
    return _header(plain, url)


class _Clock:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = time.time()
        monkeypatch.setattr(time, "time", lambda: self.now)  # the jar and http.cookiejar both read time.time


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
def test_path_domain_and_secure_rules_hold_for_remembered_decisions() -> None:
    cookies = SessionCookies()
    cookies.extract_cookies(
        _answer(
            f"{HOST}/api/public/login",
            "session=s1; Path=/; HttpOnly",
            "scoped=only-recipes; Path=/api/saved",
            "tls=only-https; Path=/; Secure",
            "elsewhere=nope; Domain=other.test; Path=/",
        )
    )
    for _ in range(3):  # the first request decides, the next two are answered from memory
        assert _header(cookies, f"{HOST}/api/user/u/shopping-list") == "session=s1; tls=only-https"
        assert (
            _header(cookies, f"{HOST}/api/saved/r-1?x=1") == "scoped=only-recipes; session=s1; tls=only-https"
        )
        assert _header(cookies, "http://cooked.test/api/saved/r-1") == "scoped=only-recipes; session=s1"
        assert _header(cookies, "https://other.test/api/saved/r-1") is None
        assert _header(cookies, "https://cooked.test:8443/api/user/u") == "session=s1; tls=only-https"


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
def test_a_remembered_cookie_is_not_sent_once_it_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _Clock(monkeypatch)
    cookies = SessionCookies()
    cookies.extract_cookies(
        _answer(f"{HOST}/api/public/login", "session=s1; Path=/", "short=x; Path=/; Max-Age=60")
    )
    url = f"{HOST}/api/user/u/shopping-list"
    assert _header(cookies, url) == "session=s1; short=x"
    clock.now += 59
    assert _header(cookies, url) == "session=s1; short=x"
    clock.now += 1
    assert _header(cookies, url) == "session=s1"
    assert [cookie.name for cookie in cookies.jar] == ["session"]  # cleared, as a plain jar clears it


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2", "authentication.SESSION.3")
def test_a_set_cookie_or_a_cleared_jar_changes_the_next_request_at_once() -> None:
    cookies = SessionCookies()
    url = f"{HOST}/api/user/u/shopping-list"
    cookies.extract_cookies(_answer(f"{HOST}/api/public/login", "session=old; Path=/"))
    assert _header(cookies, url) == "session=old"
    cookies.extract_cookies(_answer(url, "session=new; Path=/"))
    assert _header(cookies, url) == "session=new"
    cookies.clear()  # what a 401 does before the new login
    assert _header(cookies, url) is None
    cookies.extract_cookies(_answer(f"{HOST}/api/public/login", "session=newer; Path=/"))
    assert _header(cookies, url) == "session=newer"
    cookies.extract_cookies(_answer(url, "session=gone; Path=/; Max-Age=0"))  # Cooked deletes it
    assert _header(cookies, url) is None


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
def test_an_answer_without_set_cookie_leaves_the_jar_and_its_decision_alone() -> None:
    cookies = SessionCookies()
    url = f"{HOST}/api/user/u/shopping-list"
    cookies.extract_cookies(_answer(f"{HOST}/api/public/login", "session=s1; Path=/"))
    assert _header(cookies, url) == "session=s1"
    cookies.extract_cookies(_answer(url))
    assert cookies.jar.decided_header(url) == "session=s1"
    assert _header(cookies, url) == "session=s1"


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
def test_cookies_dropped_by_the_jar_bound_are_not_sent_again() -> None:
    cookies = SessionCookies()
    url = f"{HOST}/api/user/u/shopping-list"
    cookies.extract_cookies(_answer(f"{HOST}/api/public/login", "session=s1; Path=/"))
    held = bound_jar(cookies, set())
    assert _header(cookies, url) == "session=s1"
    cookies.extract_cookies(_answer(url, *(f"flood{i}=v; Path=/" for i in range(MAX_COOKIES + 5))))
    bound_jar(cookies, held)
    header = _header(cookies, url) or ""
    assert len(header.split("; ")) == MAX_COOKIES
    assert "session=s1" in header.split("; ")
    assert header == _fresh_decision(cookies.jar, url)


_PATHS = ["/", "/api", "/api/saved", "/api/saved/r-1", "/api/user/u"]
_operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("set"),
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(_PATHS),
            st.booleans(),  # Secure
            st.sampled_from([None, 0, 5, 30]),  # Max-Age
            st.sampled_from(["cooked.test", "other.test"]),
        ),
        st.tuples(st.just("clear")),
        st.tuples(st.just("wait"), st.integers(min_value=0, max_value=20)),
        st.tuples(st.just("send"), st.sampled_from(["https", "http"]), st.sampled_from(_PATHS)),
    ),
    max_size=30,
)


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
@settings(max_examples=150, deadline=None)
@given(operations=_operations)
def test_every_decision_is_the_one_a_plain_jar_makes(operations: list[tuple[object, ...]]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        clock = _Clock(monkeypatch)
        cookies = SessionCookies()
        for operation in operations:
            if operation[0] == "set":
                _, name, path, secure, max_age, domain = operation
                attributes = f"{name}=v{clock.now}; Path={path}; Domain={domain}" + "; Secure" * bool(secure)
                if max_age is not None:
                    attributes += f"; Max-Age={max_age}"
                cookies.extract_cookies(_answer(f"https://{domain}/api/public/login", attributes))
            elif operation[0] == "clear":
                cookies.clear()
            elif operation[0] == "wait":
                clock.now += float(str(operation[1]))
            else:
                url = f"{operation[1]}://cooked.test{operation[2]}"
                expected = _fresh_decision(cookies.jar, url)
                assert _header(cookies, url) == expected


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
@pytest.mark.anyio
async def test_the_client_sends_through_the_session_jar(router: respx.MockRouter) -> None:
    """The Cooked client's httpx client uses this jar for its requests and its answers alike."""
    shopping = router.get(user_path("/shopping-list")).mock(
        return_value=httpx.Response(200, json={"aisles": []})
    )
    async with make_client(router) as client:
        await client.get_shopping_list()
        await client.get_shopping_list()
        assert isinstance(client._sender._http.cookies, SessionCookies)

    assert [call.request.headers["cookie"] for call in shopping.calls] == [
        f"ring-session={SESSION_COOKIE}"
    ] * 2


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2")
def test_remembered_decisions_and_parsed_addresses_stay_bounded() -> None:
    """An agent reading recipe after recipe makes a new address each time: the jar keeps at most
    ``MAX_REMEMBERED`` decisions and the sender at most ``URL_CACHE_SIZE`` parsed addresses, and
    past the bound every request still gets the plain jar's cookies."""
    cookies = SessionCookies()
    cookies.extract_cookies(_answer(f"{HOST}/api/public/login", "session=s1; Path=/"))
    for i in range(3 * MAX_REMEMBERED):
        url = f"{HOST}/api/saved/r-{i}"
        assert _header(cookies, url) == "session=s1" == _fresh_decision(cookies.jar, url)
        assert len(cookies.jar._decided) <= MAX_REMEMBERED
    for i in range(3 * URL_CACHE_SIZE):
        request_url(HOST, f"/api/saved/r-{i}", (), "recipe")
    assert request_url.cache_info().currsize <= URL_CACHE_SIZE
