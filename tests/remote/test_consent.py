"""The consent page: what it shows, how it is framed, the owner password and its lockout, CSRF."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from remote_support import OWNER, Harness, harness, pkce

from cooked_mcp.config.limits import RemoteLimits

pytestmark = pytest.mark.anyio

CALLBACK = "https://claude.ai/api/mcp/auth_callback"


@pytest.mark.req("extensions.REMOTE.9")
async def test_the_page_names_the_client_by_host_and_says_what_it_may_do(oauth: Harness) -> None:
    client_id = await oauth.register(CALLBACK, client_name="Your Bank (trusted)")
    page, _, csrf = await oauth.consent_page(client_id, pkce()[1], redirect=CALLBACK)
    assert page.status_code == 200
    text = page.text
    assert "<b>claude.ai</b>" in text
    assert "Your answer is sent to" not in text  # the host named is where the code goes
    assert "Your Bank" not in text  # the self-asserted name is not who is asking
    assert "read and change this Cooked account's recipes and shopping list" in text
    assert 'value="allow"' in text
    assert 'value="deny"' in text
    assert csrf in text
    assert "<script" not in text.lower()
    assert 'name="viewport"' in text
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"


@pytest.mark.req("extensions.REMOTE.10")
async def test_a_wrong_password_says_only_that_and_issues_nothing(oauth: Harness) -> None:
    client_id = await oauth.register()
    _, key, csrf = await oauth.consent_page(client_id, pkce()[1])
    wrong = await oauth.answer(key, csrf, password=OWNER[:-1])
    assert wrong.status_code == 401
    assert "That password is not right." in wrong.text
    assert "location" not in wrong.headers
    right = await oauth.answer(key, csrf)
    assert right.status_code == 303
    assert "code" in parse_qs(urlsplit(right.headers["location"]).query)


@pytest.mark.req("extensions.REMOTE.10")
async def test_password_guessing_locks_out_every_client_for_a_while(tmp_path: Path) -> None:
    async for guarded in harness(tmp_path, bounds=RemoteLimits(password_failures=3, lockout_seconds=0.5)):
        first = await guarded.register()
        _, key, csrf = await guarded.consent_page(first, pkce()[1])
        for guess in ("a", "b", "c"):
            assert (await guarded.answer(key, csrf, password=guess)).status_code == 401
        locked = await guarded.answer(key, csrf)  # even the right password, now
        assert locked.status_code == 429
        assert "Too many wrong passwords" in locked.text
        other = await guarded.register("http://127.0.0.1:9/other")
        _, other_key, other_csrf = await guarded.consent_page(
            other, pkce()[1], redirect="http://127.0.0.1:9/other"
        )
        assert (await guarded.answer(other_key, other_csrf)).status_code == 429
        await asyncio.sleep(0.6)
        assert (await guarded.answer(other_key, other_csrf)).status_code == 303


@pytest.mark.req("extensions.REMOTE.11")
async def test_an_answer_without_or_with_a_stale_csrf_token_changes_nothing(oauth: Harness) -> None:
    client_id = await oauth.register()
    _, key, csrf = await oauth.consent_page(client_id, pkce()[1])
    for token in (None, "", csrf[:-2] + "xx", "é"):
        refused = await oauth.answer(key, token)
        assert refused.status_code == 400
        assert "location" not in refused.headers
    assert (await oauth.answer(key, csrf)).status_code == 303
    again = await oauth.answer(key, csrf)  # already answered: stale
    assert again.status_code == 400
    assert "location" not in again.headers


@pytest.mark.req("extensions.REMOTE.11")
async def test_an_expired_consent_page_changes_nothing(tmp_path: Path) -> None:
    async for quick in harness(tmp_path, bounds=RemoteLimits(consent_seconds=0.05)):
        client_id = await quick.register()
        _, key, csrf = await quick.consent_page(client_id, pkce()[1])
        await asyncio.sleep(0.1)
        assert (await quick.answer(key, csrf)).status_code == 400


@pytest.mark.req("extensions.REMOTE.11")
async def test_open_consent_pages_are_bounded_the_oldest_dropped_for_a_new_one(tmp_path: Path) -> None:
    async for bounded in harness(tmp_path, bounds=RemoteLimits(open_consents=2)):
        client_id = await bounded.register()
        pages = [await bounded.consent_page(client_id, pkce()[1]) for _ in range(3)]
        assert len(bounded.remote.provider.pending) == 2
        _, oldest, oldest_csrf = pages[0]
        assert (await bounded.answer(oldest, oldest_csrf)).status_code == 400
        _, newest, newest_csrf = pages[2]
        assert (await bounded.answer(newest, newest_csrf)).status_code == 303


@pytest.mark.req("extensions.REMOTE.11")
async def test_deny_sends_the_client_back_with_access_denied_and_no_code(oauth: Harness) -> None:
    client_id = await oauth.register()
    _, key, csrf = await oauth.consent_page(client_id, pkce()[1])
    denied = await oauth.answer(key, csrf, decision="deny", password="")
    assert denied.status_code == 303
    query = parse_qs(urlsplit(denied.headers["location"]).query)
    assert query == {"error": ["access_denied"], "state": ["st4te"]}


@pytest.mark.req("extensions.REMOTE.9")
async def test_a_registered_client_is_named_by_the_host_its_code_goes_to(oauth: Harness) -> None:
    """A client may register several redirect URIs; the page names the one this request uses."""
    elsewhere = "https://collector.example/cb"
    client_id = await oauth.register(CALLBACK, redirect_uris=[CALLBACK, elsewhere])
    page, _, _ = await oauth.consent_page(client_id, pkce()[1], redirect=elsewhere)
    assert "<b>collector.example</b>" in page.text
    assert "claude.ai" not in page.text
