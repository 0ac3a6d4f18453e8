"""The session rules, unit-tested with respx: cookie jar, one re-login, one retry, single flight."""

from __future__ import annotations

import asyncio
import os
from http.cookiejar import CookieJar, FileCookieJar
from pathlib import Path

import httpx
import pytest
import respx
from canaries import assert_no_canary
from client_support import CANARIES, LOGIN_PATH, SESSION_COOKIE, login_response, make_client, user_path

from cooked_mcp.cooked.session import LOGIN_BACKOFF_SECONDS
from cooked_mcp.exceptions import CookedAuthError, CookedError

SHOPPING = user_path("/shopping-list")


def _cookie_header(request: httpx.Request) -> str | None:
    return request.headers.get("cookie")


def _session_checking_route(router: respx.MockRouter, *, valid: set[str]) -> respx.Route:
    """The shopping list, answering 401 unless the request carries one of the ``valid`` cookies.

    It takes a moment to answer, so that concurrent calls really are in flight together.
    """

    async def answer(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.005)
        if _cookie_header(request) in {f"ring-session={value}" for value in valid}:
            return httpx.Response(200, json={"aisles": []})
        return httpx.Response(401, json={"code": "UNAUTHORIZED", "message": "Session expired"})

    return router.get(SHOPPING).mock(side_effect=answer)


@pytest.mark.req(
    "authentication.LOGIN.3",
    "authentication.SESSION.1",
    "authentication.SESSION.2",
    "authentication.CREDENTIALS.10",
)
@pytest.mark.anyio
async def test_login_cookies_are_kept_in_the_jar_and_sent_by_it(router: respx.MockRouter) -> None:
    router.routes["login"].mock(
        return_value=httpx.Response(
            200,
            json={"username": "canary-user-9b1e"},
            headers=[
                ("Set-Cookie", f"ring-session={SESSION_COOKIE}; Path=/; HttpOnly"),
                ("Set-Cookie", "scoped=only-recipes; Path=/api/saved"),
                ("Set-Cookie", "elsewhere=nope; Domain=other.test; Path=/"),
            ],
        )
    )
    shopping = router.get(SHOPPING).mock(return_value=httpx.Response(200, json={"aisles": []}))
    recipe = router.get("/api/saved/r-1").mock(
        return_value=httpx.Response(200, json={"id": "r-1", "description": ""})
    )
    async with make_client(router) as client:
        await client.get_shopping_list()
        await client.get_recipe("r-1")

    # A jar applies each cookie's path and domain; a hand-built Cookie header could not.
    assert _cookie_header(shopping.calls.last.request) == f"ring-session={SESSION_COOKIE}"
    assert sorted((_cookie_header(recipe.calls.last.request) or "").split("; ")) == [
        f"ring-session={SESSION_COOKIE}",
        "scoped=only-recipes",
    ]
    assert _cookie_header(router.routes["login"].calls.last.request) is None


@pytest.mark.req(
    "authentication.SESSION.3",
    "authentication.SESSION.4",
    "authentication.SESSION.5",
)
@pytest.mark.anyio
async def test_a_401_drops_the_cookies_logs_in_once_and_retries_once(router: respx.MockRouter) -> None:
    router.routes["login"].mock(side_effect=[login_response(cookie="old"), login_response(cookie="new")])
    shopping = _session_checking_route(router, valid={"new"})
    async with make_client(router) as client:
        result = await client.get_shopping_list()

    assert result.aisles == []
    logins = router.routes["login"].calls
    assert len(logins) == 2
    assert _cookie_header(logins[1].request) is None  # the rejected cookie was discarded before re-login
    assert [_cookie_header(call.request) for call in shopping.calls] == [
        "ring-session=old",
        "ring-session=new",
    ]
    assert [call.request.url.path for call in router.calls] == [LOGIN_PATH, SHOPPING, LOGIN_PATH, SHOPPING]


@pytest.mark.req("authentication.SESSION.6", "authentication.SESSION.4", "authentication.SECRETS.3")
@pytest.mark.anyio
async def test_a_retry_that_is_rejected_again_is_an_auth_error_without_another_retry(
    router: respx.MockRouter,
) -> None:
    shopping = _session_checking_route(router, valid=set())
    async with make_client(router) as client:
        with pytest.raises(CookedAuthError) as caught:
            await client.get_shopping_list()

    assert router.routes["login"].call_count == 2
    assert shopping.call_count == 2
    assert caught.value.status == 401
    assert "COOKED_BASE_URL" in caught.value.next_step
    assert_no_canary(CANARIES, str(caught.value), repr(caught.value))


@pytest.mark.req("authentication.LOGIN.4", "authentication.SECRETS.3", "api-client.ERRORS.5")
@pytest.mark.anyio
async def test_a_rejected_login_is_an_auth_error_naming_the_settings_not_the_values(
    router: respx.MockRouter,
) -> None:
    router.routes["login"].mock(
        return_value=httpx.Response(
            401, json={"code": "INVALID_AUTHENTICATION", "message": "Invalid username or password"}
        )
    )
    shopping = router.get(SHOPPING)
    async with make_client(router) as client:
        with pytest.raises(CookedAuthError) as caught:
            await client.get_shopping_list()

    error = caught.value
    assert shopping.call_count == 0
    assert router.routes["login"].call_count == 1  # a rejected login is not retried
    assert (error.status, error.code) == (401, "INVALID_AUTHENTICATION")
    text = str(error)
    for setting in ("COOKED_LOGIN_USERNAME", "COOKED_LOGIN_PASSWORD", "user.name", "user.password"):
        assert setting in text
    assert_no_canary(CANARIES, text, repr(error), error.args)


@pytest.mark.req("authentication.LOGIN.4", "api-client.ERRORS.2")
@pytest.mark.anyio
async def test_other_login_failures_keep_their_status(router: respx.MockRouter) -> None:
    router.routes["login"].mock(
        return_value=httpx.Response(429, json={"code": "RATE_LIMITED"}, headers={"Retry-After": "30"})
    )
    async with make_client(router) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_shopping_list()

    assert not isinstance(caught.value, CookedAuthError)
    assert (caught.value.status, caught.value.retry_after) == (429, 30.0)


@pytest.mark.req("authentication.LOGIN.1", "authentication.SESSION.4")
@pytest.mark.anyio
async def test_concurrent_first_calls_share_one_login(router: respx.MockRouter) -> None:
    async def slow_login(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.02)
        return login_response()

    router.routes["login"].mock(side_effect=slow_login)
    _session_checking_route(router, valid={SESSION_COOKIE})
    async with make_client(router) as client:
        await asyncio.gather(*(client.get_shopping_list() for _ in range(20)))

    assert router.routes["login"].call_count == 1


@pytest.mark.req("authentication.SESSION.3", "authentication.SESSION.4", "authentication.SESSION.5")
@pytest.mark.anyio
async def test_concurrent_401s_share_one_re_login(router: respx.MockRouter) -> None:
    cookies = iter(["first", "second", "third"])

    async def slow_login(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.02)
        return login_response(cookie=next(cookies))

    router.routes["login"].mock(side_effect=slow_login)
    valid = {"first"}
    shopping = _session_checking_route(router, valid=valid)
    async with make_client(router) as client:
        await client.get_shopping_list()
        valid.clear()
        valid.add("second")  # Cooked expired the first session
        await asyncio.gather(*(client.get_shopping_list() for _ in range(20)))

    assert router.routes["login"].call_count == 2
    assert shopping.call_count == 1 + 20 + 20


@pytest.mark.req("authentication.LOGIN.4", "authentication.SESSION.6")
@pytest.mark.anyio
async def test_concurrent_callers_share_a_failed_login_instead_of_repeating_it(
    router: respx.MockRouter,
) -> None:
    async def rejected(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.02)
        return httpx.Response(401, json={"code": "INVALID_AUTHENTICATION"})

    now = [0.0]
    router.routes["login"].mock(side_effect=rejected)
    async with make_client(router, clock=lambda: now[0]) as client:
        results = await asyncio.gather(
            *(client.get_shopping_list() for _ in range(10)), return_exceptions=True
        )
        assert router.routes["login"].call_count == 1
        assert all(isinstance(result, CookedAuthError) for result in results)
        # A later call, once the back-off has passed (Cooked may have unlocked the account), tries again.
        now[0] += LOGIN_BACKOFF_SECONDS
        with pytest.raises(CookedAuthError):
            await client.get_shopping_list()

    assert router.routes["login"].call_count == 2


@pytest.mark.req("authentication.SESSION.7", "authentication.SESSION.8", "authentication.SESSION.9")
@pytest.mark.anyio
async def test_the_session_lives_in_memory_only_and_a_new_process_logs_in_again(
    router: respx.MockRouter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    _session_checking_route(router, valid={SESSION_COOKIE})

    async with make_client(router) as first:
        await first.get_shopping_list()
        jar = first._sender._http.cookies.jar
        assert isinstance(jar, CookieJar) and not isinstance(jar, FileCookieJar)
    async with make_client(router) as restarted:
        await restarted.get_shopping_list()

    assert router.routes["login"].call_count == 2  # nothing carried over from the first "process"
    assert list(os.walk(tmp_path)) == [(str(tmp_path), [], [])]  # nothing written anywhere


@pytest.mark.req("authentication.LOGIN.1")
@pytest.mark.anyio
async def test_a_cancelled_login_does_not_strand_the_callers_waiting_for_it(router: respx.MockRouter) -> None:
    started = asyncio.Event()
    attempts: list[int] = []

    async def slow_login(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        started.set()
        await asyncio.sleep(0.05)
        return login_response()

    router.routes["login"].mock(side_effect=slow_login)
    _session_checking_route(router, valid={SESSION_COOKIE})
    async with make_client(router) as client:
        first = asyncio.create_task(client.get_shopping_list())
        await started.wait()
        waiter = asyncio.create_task(client.get_shopping_list())
        await asyncio.sleep(0)
        first.cancel()
        result = await waiter

    assert result.aisles == []
    assert first.cancelled()
    assert len(attempts) == 2  # the waiter started its own login once the first was cancelled
