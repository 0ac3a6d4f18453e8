"""A misbehaving Cooked (or network) cannot wedge, bloat or hammer the client (issues 16 and 17).

Against the fake Cooked over real HTTP on 127.0.0.1 unless the answer cannot be produced by
a server at all: an answer that trickles in, a compressed bomb, a cookie flood, a header
refused for its size, connection failures of each kind, and credentials Cooked rejects.
"""

from __future__ import annotations

import asyncio
import gzip
import time
import tracemalloc

import anyio
import httpx
import pytest
import respx
from client_support import LOGIN_PATH, SESSION_COOKIE, make_client, user_path
from pydantic import SecretStr
from servers import free_port
from sessions import client_for, cooked_session, text_of

from cooked_fake import SEED_USERNAME, FakeCooked
from cooked_mcp.cooked import CookedClient
from cooked_mcp.cooked.sender import MAX_COOKIE_BYTES, MAX_COOKIES
from cooked_mcp.cooked.session import LOGIN_BACKOFF_SECONDS
from cooked_mcp.exceptions import CookedAuthError, CookedError, CookedResponseError, CookedUnavailable

SHOPPING = f"/api/user/{SEED_USERNAME}/shopping-list"


# --- one deadline per exchange (issue 17 item 3) ------------------------------------------------


@pytest.mark.req("api-client.ERRORS.1", "api-client.ERRORS.5", "authentication.LOGIN.1")
@pytest.mark.anyio
async def test_a_trickling_login_ends_at_the_deadline_for_every_waiting_call(fake: FakeCooked) -> None:
    """One byte every 0.1 s keeps each read far inside the 0.6 s read timeout, but the whole login
    answer would take ~7 s. With connect 0.4 s + read 0.6 s the exchange has a 1 s deadline: the call
    that sent the login and the call waiting for it both get "did not answer in time" by then,
    and the next call logs in afresh."""
    fake.fail_with("trickle", method="POST", path=LOGIN_PATH, seconds=0.1)
    async with client_for(fake, connect_timeout=0.4, read_timeout=0.6) as client:
        started = time.monotonic()
        first = asyncio.create_task(client.get_shopping_list())
        # Once the login has reached Cooked, the first call holds the login lock, waiting on the trickle.
        await anyio.to_thread.run_sync(fake.wait_for_request, "POST", LOGIN_PATH)
        second = asyncio.create_task(client.get_shopping_list())
        results = await asyncio.gather(first, second, return_exceptions=True)
        waited = time.monotonic() - started
        shopping = await client.get_shopping_list()  # starts afresh: the trickle was a one-off

    assert waited < 5, f"calls waited {waited:.1f} s for a trickling login (deadline 1 s)"
    for result in results:
        assert isinstance(result, CookedUnavailable), result
        assert "did not answer in time" in str(result) and "login" in str(result)
    assert shopping.aisles
    assert fake.login_count == 2


@pytest.mark.req("api-client.ERRORS.5", "api-client.ERRORS.1")
@pytest.mark.anyio
async def test_a_trickling_answer_to_a_change_ends_at_the_deadline_and_says_it_may_have_happened(
    fake: FakeCooked,
) -> None:
    """``{"added": 1}`` one byte every 0.4 s would take ~5 s; each read waits 0.4 s of the 1 s read
    timeout, and the 1.4 s deadline ends the exchange."""
    fake.fail_with("trickle", method="POST", path=f"{SHOPPING}/ingredients", seconds=0.4)
    async with client_for(fake, connect_timeout=0.4, read_timeout=1.0) as client:
        await client.get_shopping_list()
        started = time.monotonic()
        with pytest.raises(CookedUnavailable) as caught:
            await client.add_ingredients("2 eggs")
        waited = time.monotonic() - started
        assert (await client.get_shopping_list()).aisles

    assert waited < 4, f"the call waited {waited:.1f} s for a trickling answer (deadline 1.4 s)"
    assert "did not answer in time" in str(caught.value)
    assert "may have made the change" in caught.value.next_step


@pytest.mark.req("authentication.SESSION.4", "authentication.SESSION.5")
@pytest.mark.anyio
async def test_a_re_login_and_the_retry_after_it_each_get_a_deadline_of_their_own(fake: FakeCooked) -> None:
    """With connect 0.5 s + read 2 s each exchange has a 2.5 s deadline. The 401 comes after 1.4 s
    and the login takes 1.4 s more: under one deadline for the whole call (2.8 s > 2.5 s) the
    re-login would be cut off; each exchange within its own, the call succeeds."""
    async with client_for(fake, connect_timeout=0.5, read_timeout=2.0) as client:
        await client.ensure_session()
        fake.expire_sessions()
        fake.fail_with("slow", method="GET", path=SHOPPING, seconds=1.4)
        fake.fail_with("slow", method="POST", path=LOGIN_PATH, seconds=1.4)
        shopping = await client.get_shopping_list()

    assert shopping.aisles
    assert fake.login_count == 2


# --- compressed answers are refused (issue 17 item 5) ------------------------------------------


def _gzip_bomb(layers: int, size: int = 64 * 1024 * 1024) -> bytes:
    data = b"\0" * size
    for _ in range(layers):
        data = gzip.compress(data, compresslevel=9)
    return data


@pytest.mark.req("api-client.LIMITS.1", "api-client.RESPONSES.3", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_a_stacked_gzip_answer_is_refused_unread(fake: FakeCooked) -> None:
    """``gzip, gzip`` of 64 MiB of zeros is a few hundred bytes on the wire; decoded, 64 MiB."""
    bomb = _gzip_bomb(2)
    assert len(bomb) < 100_000
    fake.fail(
        method="GET",
        path=SHOPPING,
        status=200,
        body=bomb,
        headers={"Content-Encoding": "gzip, gzip", "Content-Type": "application/json"},
    )
    async with client_for(fake) as client:
        await client.ensure_session()
        tracemalloc.start()
        try:
            with pytest.raises(CookedResponseError) as caught:
                await client.get_shopping_list()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert (await client.get_shopping_list()).aisles  # the next call works

    assert "compressed (Content-Encoding: gzip, gzip)" in str(caught.value)
    assert peak < 4 * 1024 * 1024, f"peak allocation {peak} bytes while refusing a gzip bomb"


@pytest.mark.req("api-client.LIMITS.1", "api-client.ERRORS.2")
@pytest.mark.anyio
async def test_a_compressed_error_answer_keeps_its_status_and_loses_only_its_body(fake: FakeCooked) -> None:
    fake.fail(
        method="GET", path=SHOPPING, status=503, body=_gzip_bomb(1), headers={"Content-Encoding": "gzip"}
    )
    async with client_for(fake) as client:
        with pytest.raises(CookedError) as caught:
            await client.get_shopping_list()

    assert caught.value.status == 503 and caught.value.cooked_message is None


@pytest.mark.req("api-client.LIMITS.1", "authentication.SESSION.4", "authentication.SESSION.5")
@pytest.mark.anyio
async def test_a_huge_401_body_is_read_only_up_to_the_error_bound_before_the_re_login(
    fake: FakeCooked,
) -> None:
    """The sender reads an error body only up to ``MAX_ERROR_BODY_BYTES``, a 401 too, so a 16 MiB
    401 never sits in memory whole before the re-login."""
    async with client_for(fake) as client:
        await client.ensure_session()
        fake.fail(method="GET", path=SHOPPING, status=401, body=b"x" * (16 * 1024 * 1024))
        tracemalloc.start()
        try:
            shopping = await client.get_shopping_list()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert shopping.aisles
    assert fake.login_count == 2
    assert peak < 4 * 1024 * 1024, f"peak allocation {peak} bytes for a 16 MiB 401 body"


# --- a bounded cookie jar; a header refused for its size is a lost session (issue 17 item 7) ----


@pytest.mark.req("authentication.SESSION.1", "authentication.SESSION.2", "authentication.LOGIN.3")
@pytest.mark.anyio
async def test_the_cookie_jar_is_bounded_in_count_and_bytes_and_keeps_the_session(
    router: respx.MockRouter,
) -> None:
    """A server that sets 200 new cookies on every answer: after 18 calls the ``Cookie`` header
    was 64 KB before the bound; now it stays within the bound and still carries the session."""
    answers = 0

    def flood(request: httpx.Request) -> httpx.Response:
        nonlocal answers
        answers += 1
        cookies = [("Set-Cookie", f"flood{answers}x{i}={'v' * 40}; Path=/") for i in range(200)]
        return httpx.Response(200, json={"aisles": []}, headers=cookies)

    route = router.get(user_path("/shopping-list")).mock(side_effect=flood)
    async with make_client(router) as client:
        for _ in range(18):
            await client.get_shopping_list()

    header = route.calls.last.request.headers["cookie"]
    cookies = header.split("; ")
    assert len(cookies) <= MAX_COOKIES and len(header.encode()) <= MAX_COOKIE_BYTES
    assert f"ring-session={SESSION_COOKIE}" in cookies


@pytest.mark.req("authentication.SESSION.3", "authentication.SESSION.4", "authentication.SESSION.5")
@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "body"),
    [
        (431, "Request Header Fields Too Large"),
        (400, "<html><body><h1>400 Bad Request</h1>Request Header Or Cookie Too Large</body></html>"),
    ],
    ids=["431", "nginx-400"],
)
async def test_a_request_refused_for_its_header_size_clears_the_jar_and_logs_in_again_once(
    fake: FakeCooked, status: int, body: str
) -> None:
    async with client_for(fake) as client:
        await client.get_shopping_list()
        fake.fail(method="GET", path=SHOPPING, status=status, body=body)
        shopping = await client.get_shopping_list()
        # Refused again right after the fresh login: an error, not a loop.
        fake.fail(method="GET", path=SHOPPING, status=status, body=body, times=2)
        with pytest.raises(CookedError) as caught:
            await client.get_shopping_list()

    assert shopping.aisles
    assert fake.login_count == 3
    assert caught.value.status == status


@pytest.mark.req("api-client.ERRORS.2", "api-client.ERRORS.3", "authentication.SESSION.4")
@pytest.mark.anyio
async def test_cookeds_own_400_is_not_mistaken_for_a_header_too_large(fake: FakeCooked) -> None:
    async with client_for(fake) as client:
        await client.get_shopping_list()
        fake.fail(
            method="GET", path=SHOPPING, status=400, body={"code": "INVALID_REQUEST", "message": "bad header"}
        )
        with pytest.raises(CookedError) as caught:
            await client.get_shopping_list()

    assert caught.value.code == "INVALID_REQUEST"
    assert fake.login_count == 1


# --- "could not be reached" names its cause (issue 16 item 3) ----------------------------------


@pytest.mark.req("api-client.ERRORS.5", "api-client.ERRORS.1", "api-client.VERIFICATION.2")
@pytest.mark.anyio
async def test_a_refused_connection_says_so_and_that_retrying_may_help() -> None:
    async with CookedClient(f"http://127.0.0.1:{free_port()}", "someone", SecretStr("pw-123")) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 1)

    assert "connection was refused" in str(caught.value)
    assert "host and port in COOKED_BASE_URL" in caught.value.next_step
    assert "retry later" in caught.value.next_step


@pytest.mark.req("api-client.ERRORS.5", "api-client.ERRORS.1", "api-client.VERIFICATION.2")
@pytest.mark.anyio
async def test_a_host_name_that_does_not_resolve_says_so_without_retry_advice() -> None:
    """``.invalid`` never resolves (RFC 6761); the network guard answers for the resolver, so no
    DNS query leaves this machine."""
    async with CookedClient("https://cooked.invalid", "someone", SecretStr("pw-123")) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 1)

    assert "host name was not found" in str(caught.value)
    assert (
        "check the host name in COOKED_BASE_URL or cooked.base_url (https://cooked.invalid)"
        in caught.value.next_step
    )
    assert "retry" not in caught.value.next_step


@pytest.mark.req("api-client.ERRORS.5", "api-client.ERRORS.1", "api-client.VERIFICATION.1")
@pytest.mark.anyio
async def test_https_spoken_to_an_http_server_is_a_tls_failure_naming_the_scheme(fake: FakeCooked) -> None:
    async with CookedClient(f"https://127.0.0.1:{fake.port}", "someone", SecretStr("pw-123")) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.list_recipes(1, 1)

    assert "TLS handshake failed" in str(caught.value)
    assert "check the scheme in COOKED_BASE_URL" in caught.value.next_step
    assert "retry" not in caught.value.next_step


# --- rejected credentials are not tried again for a minute (issue 16 item 4) -------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.req(
    "authentication.LOGIN.4",
    "authentication.SECRETS.3",
    "authentication.VERIFICATION.1",
    "api-client.ERRORS.5",
)
@pytest.mark.anyio
async def test_rejected_credentials_are_tried_at_most_once_a_minute_whatever_the_call_rate(
    fake: FakeCooked,
) -> None:
    clock = _Clock()
    async with client_for(fake, password="wrong-password", clock=clock) as client:
        burst = await asyncio.gather(*(client.get_shopping_list() for _ in range(10)), return_exceptions=True)
        later = []
        for _ in range(20):
            clock.now += 2.9  # 58 s of calls, one every 2.9 s
            with pytest.raises(CookedAuthError) as caught:
                await client.list_recipes(1, 5)
            later.append(caught.value)
        logins_within_a_minute = fake.login_count
        clock.now += LOGIN_BACKOFF_SECONDS  # the back-off has passed: one new attempt
        with pytest.raises(CookedAuthError):
            await client.get_shopping_list()
        with pytest.raises(CookedAuthError):
            await client.get_shopping_list()

    assert all(isinstance(result, CookedAuthError) for result in burst)
    assert logins_within_a_minute == 1
    assert fake.login_count == 2
    assert [r.path for r in fake.requests] == [LOGIN_PATH, LOGIN_PATH]  # nothing else reached Cooked
    for error in later:
        assert error.status == 401 and "COOKED_LOGIN_PASSWORD" in str(error)
        assert "Cooked was not asked again" in error.next_step
        assert "wrong-password" not in str(error)


@pytest.mark.req("authentication.LOGIN.4", "authentication.LOGIN.1")
@pytest.mark.anyio
async def test_a_403_on_login_is_a_rejection_too_and_a_later_success_ends_the_back_off(
    fake: FakeCooked,
) -> None:
    clock = _Clock()
    fake.fail(method="POST", path=LOGIN_PATH, status=403)
    async with client_for(fake, clock=clock) as client:
        with pytest.raises(CookedAuthError) as first:
            await client.get_shopping_list()
        with pytest.raises(CookedAuthError):
            await client.get_shopping_list()
        assert fake.login_count == 1
        clock.now += LOGIN_BACKOFF_SECONDS + 1
        assert (await client.get_shopping_list()).aisles
        fake.expire_sessions()
        assert (await client.get_shopping_list()).aisles  # a session lost later logs in at once

    assert first.value.status == 403 and "COOKED_LOGIN_PASSWORD" in str(first.value)
    assert fake.login_count == 3


@pytest.mark.req("authentication.LOGIN.4", "api-client.ERRORS.5")
@pytest.mark.anyio
async def test_a_login_that_fails_for_another_reason_is_not_backed_off(fake: FakeCooked) -> None:
    fake.fail(method="POST", path=LOGIN_PATH, status=503)
    async with client_for(fake, clock=_Clock()) as client:
        with pytest.raises(CookedError):
            await client.get_shopping_list()
        assert (await client.get_shopping_list()).aisles

    assert fake.login_count == 2


@pytest.mark.req("authentication.LOGIN.4", "tools.RESPONSES.6", "authentication.SECRETS.3")
@pytest.mark.anyio
async def test_four_tool_calls_with_rejected_credentials_make_one_login(fake: FakeCooked) -> None:
    """Issue 16: four tool calls made four logins, all 401. Now the first asks Cooked, the rest
    answer at once with the same error, and nothing but that one login reaches Cooked."""
    fake.fail(method="POST", path=LOGIN_PATH, status=401, times=None)
    async with cooked_session(fake) as session:
        results = [
            await session.call_tool("read", {"target": target})
            for target in ("recipes", "shopping_list", "recipes", "shopping_list")
        ]

    assert [r.path for r in fake.requests] == [LOGIN_PATH]
    for result in results:
        assert result.is_error
        assert "Cooked rejected the configured username or password" in text_of(result)
        assert "COOKED_LOGIN_PASSWORD" in text_of(result)
    assert all("Cooked was not asked again" in text_of(result) for result in results[1:])
