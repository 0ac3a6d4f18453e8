"""Client ID Metadata Documents: fetched over real https from 127.0.0.1, validated, fenced in.

Only the tests tell the fetcher that ``client.test`` is 127.0.0.1 and that loopback is fine
there; the refusals run with the fetcher's own address check.
"""

from __future__ import annotations

import ipaddress
import logging
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from https_support import HOST, Answer, Documents, https_documents
from remote_support import REDIRECT, harness, pkce

from cooked_mcp.config.limits import RemoteLimits
from cooked_mcp.remote.cimd import CimdFetcher, IPAddress, is_public

pytestmark = pytest.mark.anyio


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Documents, ssl.SSLContext]]:
    with https_documents(tmp_path) as pair:
        yield pair


def _to(addresses: list[str]) -> Any:
    async def resolver(host: str, port: int) -> list[str]:
        return addresses if host == HOST else []

    return resolver


def _loopback_allowed(address: IPAddress) -> bool:
    return address.is_loopback


def fetcher(trust: ssl.SSLContext, clock: Callable[[], float] = time.monotonic, **bounds: Any) -> CimdFetcher:
    """The test-only way in: client.test is 127.0.0.1, and loopback is allowed."""
    return CimdFetcher(
        resolver=_to(["127.0.0.1"]),
        allowed=_loopback_allowed,
        ssl_context=trust,
        limits=RemoteLimits(**bounds),
        clock=clock,
    )


@pytest.mark.req("extensions.REMOTE.12", "extensions.REMOTE.13")
async def test_a_valid_document_becomes_a_public_client_and_is_cached(
    served: tuple[Documents, ssl.SSLContext],
) -> None:
    documents, trust = served
    url = documents.document("/oauth/client.json")
    fetch = fetcher(trust)
    client = await fetch(url)
    assert client is not None
    assert client.client_id == url
    assert [str(uri) for uri in client.redirect_uris or []] == [REDIRECT]
    assert client.token_endpoint_auth_method == "none"
    assert client.client_secret is None
    assert await fetch(url) is client
    assert documents.hits == {"/oauth/client.json": 1}


@pytest.mark.req("extensions.REMOTE.13")
async def test_cached_documents_expire_and_the_cache_is_bounded(
    served: tuple[Documents, ssl.SSLContext],
) -> None:
    documents, trust = served
    first, second = documents.document("/first.json"), documents.document("/second.json")
    brief = fetcher(trust, cimd_cache_seconds=0.1)
    assert await brief(first) is not None
    await anyio.sleep(0.2)
    assert await brief(first) is not None
    assert documents.hits == {"/first.json": 2}
    small = fetcher(trust, cimd_cache_size=1)
    for url in (first, second, first):
        assert await small(url) is not None
    assert documents.hits == {"/first.json": 4, "/second.json": 1}


@pytest.mark.req("extensions.REMOTE.13")
async def test_fetches_beyond_the_rate_are_not_made_until_the_window_reopens(
    served: tuple[Documents, ssl.SSLContext], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Only network fetches count: a URL refused unread and a cached document cost nothing, and a
    connected client whose document left the cache still gets its tokens while the window is full."""
    documents, trust = served
    first, second, third = (documents.document(f"/{name}.json") for name in ("first", "second", "third"))
    now = [1000.0]
    fetch = fetcher(trust, lambda: now[0], cimd_fetches=2, cimd_window=60.0, cimd_cache_seconds=30.0)
    async for oauth in harness(tmp_path, fetch_client=fetch):
        verifier, challenge = pkce()
        unread = await oauth.authorize(first.replace("https://", "http://"), challenge)
        assert unread.status_code == 400
        await oauth.consent_page(second, challenge)
        code = await oauth.code(first, challenge)  # two fetches: the window is full
        refused = await oauth.authorize(third, challenge)
        assert refused.status_code == 400, refused.text
        assert "location" not in refused.headers
        assert refused.json() == {
            "error": "invalid_request",
            "error_description": "too many new clients are connecting at once: try again in a minute",
            "state": "st4te",
        }
        assert "/third.json" not in documents.hits
        # Put off, not refused: the log says so (a connected client's token request passes this way).
        assert "did not fetch the client_id https://client.test:" in caplog.text
        assert "refused the client_id" not in caplog.text.split("did not fetch")[1]
        await oauth.consent_page(first, challenge)  # cached
        now[0] += 31  # the first document leaves the cache; the window is still full
        answer = await oauth.exchange(first, code, verifier)
        assert answer.status_code == 200, answer.text
        assert (await oauth.authorize(third, challenge)).status_code == 400
        now[0] += 29  # the first two fetches are a minute old
        await oauth.consent_page(third, challenge)
    assert documents.hits == {"/first.json": 1, "/second.json": 1, "/third.json": 1}


@pytest.mark.req("extensions.REMOTE.13")
async def test_beyond_the_rate_a_client_id_no_url_parser_accepts_is_refused_not_a_crash(
    served: tuple[Documents, ssl.SSLContext], tmp_path: Path
) -> None:
    """urlsplit takes a space or a % in the host; pydantic's URL type does not."""
    documents, trust = served
    fetch = fetcher(trust, cimd_fetches=1)
    async for oauth in harness(tmp_path, fetch_client=fetch):
        _, challenge = pkce()
        await oauth.consent_page(documents.document("/first.json"), challenge)  # the window is full
        for url in ("https://a b.test/client.json", "https://a%.test/client.json"):
            refused = await oauth.authorize(url, challenge)
            assert refused.status_code == 400, refused.text
            assert "try again in a minute" in refused.json()["error_description"]
            answer = await oauth.refresh(url, "no-such-token")
            assert answer.status_code == 400, answer.text
            assert answer.json()["error"] == "invalid_grant"
    assert documents.hits == {"/first.json": 1}


@pytest.mark.req("extensions.REMOTE.12")
@pytest.mark.parametrize(
    "fields",
    [
        {"client_id": "https://elsewhere.example/client.json"},
        {"client_secret": "s3cret"},
        {"token_endpoint_auth_method": "client_secret_basic"},
        {"redirect_uris": []},
        {"redirect_uris": "http://127.0.0.1:9/callback"},
    ],
)
async def test_a_document_that_is_not_its_own_public_client_is_refused(
    served: tuple[Documents, ssl.SSLContext], fields: dict[str, object]
) -> None:
    documents, trust = served
    url = documents.document("/client.json", **fields)
    assert await fetcher(trust)(url) is None


@pytest.mark.req("extensions.REMOTE.12")
async def test_a_refused_client_id_is_logged_on_one_line(
    served: tuple[Documents, ssl.SSLContext], caplog: pytest.LogCaptureFixture
) -> None:
    """The client_id is anyone's text: a line break in it must not forge a log line."""
    _, trust = served
    caplog.set_level(logging.WARNING, logger="cooked_mcp.remote.cimd")
    assert await fetcher(trust)("https://elsewhere.test/c.json\ncooked-mcp WARNING forged") is None
    (record,) = caplog.records
    message = record.getMessage()
    assert "\n" not in message
    assert "refused the client_id https://elsewhere.test/c.json?cooked-mcp WARNING forged" in message


@pytest.mark.req("extensions.REMOTE.13")
async def test_no_redirect_is_followed(served: tuple[Documents, ssl.SSLContext]) -> None:
    documents, trust = served
    target = documents.document("/real.json")
    documents.answers["/moved.json"] = Answer(b"", 302, {"Location": target})
    assert await fetcher(trust)(documents.url("/moved.json")) is None
    assert "/real.json" not in documents.hits


@pytest.mark.req("extensions.REMOTE.13")
async def test_a_huge_document_is_cut_off(served: tuple[Documents, ssl.SSLContext]) -> None:
    documents, trust = served
    url = documents.document("/huge.json", padding="x" * 6000)
    assert await fetcher(trust)(url) is None
    assert await fetcher(trust, cimd_bytes=8000)(url) is not None  # the same document, allowed more


@pytest.mark.req("extensions.REMOTE.13")
async def test_a_slow_server_is_given_up_on(served: tuple[Documents, ssl.SSLContext]) -> None:
    documents, trust = served
    url = documents.document("/slow.json")
    documents.answers["/slow.json"].delay = 0.6
    assert await fetcher(trust, cimd_seconds=0.2)(url) is None


@pytest.mark.req("extensions.REMOTE.13")
@pytest.mark.parametrize(
    "addresses",
    [
        ["127.0.0.1"],
        ["::1"],
        ["10.0.0.5"],
        ["192.168.1.10"],
        ["169.254.169.254"],  # cloud metadata
        ["100.64.0.1"],
        ["fd00::1"],
        ["fe80::1"],
        ["::ffff:127.0.0.1"],
        ["64:ff9b::a9fe:a9fe"],  # cloud metadata through NAT64
        ["93.184.216.34", "127.0.0.1"],  # one public address does not make the others safe
    ],
)
async def test_names_resolving_to_non_public_addresses_are_refused_before_connecting(
    served: tuple[Documents, ssl.SSLContext], addresses: list[str]
) -> None:
    documents, trust = served
    url = documents.document("/client.json")
    fetch = CimdFetcher(resolver=_to(addresses), ssl_context=trust)  # the real address check
    assert await fetch(url) is None
    assert documents.hits == {}


@pytest.mark.req("extensions.REMOTE.13")
def test_only_global_unicast_is_public() -> None:
    assert is_public(ipaddress.ip_address("93.184.216.34"))
    assert is_public(ipaddress.ip_address("2606:4700::1111"))
    assert is_public(ipaddress.ip_address("64:ff9b::5db8:d822"))  # NAT64 of 93.184.216.34
    for address in (
        *("127.0.0.2", "10.1.2.3", "172.16.0.1", "169.254.169.254", "0.0.0.0", "224.0.0.1", "::"),
        "64:ff9b::a00:5",  # NAT64 of 10.0.0.5
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b:1::a00:5",  # local-use NAT64
        "::7f00:1",  # IPv4-compatible 127.0.0.1
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "fec0::1",  # site-local
    ):
        assert not is_public(ipaddress.ip_address(address)), address


@pytest.mark.req("extensions.REMOTE.12", "extensions.REMOTE.13")
async def test_only_https_urls_with_a_path_are_fetched(served: tuple[Documents, ssl.SSLContext]) -> None:
    documents, trust = served
    documents.document("/")
    fetch = fetcher(trust, cimd_fetches=1)
    for url in (
        documents.url("/").replace("https://", "http://") + "client.json",
        documents.url("/"),
        f"https://user@{HOST}:{documents.port}/client.json",
        f"https://{HOST}:99999/client.json",
        "https://[::1/client.json",
    ):
        assert await fetch(url) is None, url
    assert documents.hits == {}
    assert fetch.fetches.wait() == 0.0  # none of them counted as a fetch


@pytest.mark.req("extensions.REMOTE.12", "extensions.REMOTE.9", "extensions.REMOTE.15")
async def test_a_cimd_client_connects_named_by_its_host_with_a_registered_redirect_uri(
    served: tuple[Documents, ssl.SSLContext], tmp_path: Path
) -> None:
    documents, trust = served
    url = documents.document("/oauth/client.json", client_name="Definitely Claude")
    async for oauth in harness(tmp_path / "state", fetch_client=fetcher(trust)):
        verifier, challenge = pkce()
        page, _, _ = await oauth.consent_page(url, challenge)
        assert f"<b>{HOST}</b>" in page.text
        assert "Definitely Claude" not in page.text
        # Its code goes elsewhere, to whatever listens on 127.0.0.1: the page says so.
        assert "Your answer is sent to <b>127.0.0.1</b> (a program on this device" in page.text
        # Its redirect URI is on 127.0.0.1, so any port is accepted (RFC 8252 section 7.3).
        port = "http://127.0.0.1:50123/callback"
        answer = await oauth.exchange(url, await oauth.code(url, challenge, redirect=port), verifier, port)
        assert answer.status_code == 200, answer.text
        assert await oauth.mcp_status(answer.json()["access_token"]) == 200
        other = await oauth.http.get(
            "/authorize",
            params={
                "response_type": "code",
                "client_id": url,
                "redirect_uri": "http://127.0.0.1:9/callback2",
                "code_challenge": challenge,
            },
        )
        assert other.status_code == 400
