"""The Cooked client honours the proxy environment variables, as any httpx.AsyncClient does.

The client is an ``httpx.AsyncClient(trust_env=True)`` (cooked/sender.py), built at the first
request: ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` and ``NO_PROXY`` are read then, once.
A recording forward proxy on 127.0.0.1 relays to the fake Cooked: a name that exists
nowhere (``cooked.test``) can only be reached through it.
"""

from __future__ import annotations

import http.client
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import SecretStr
from sessions import client_for

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.exceptions import CookedUnavailable

pytestmark = [pytest.mark.anyio, pytest.mark.req("api-client.VERIFICATION.1")]

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


class RecordingProxy(ThreadingHTTPServer):
    """Relays every absolute-form request to the fake Cooked and records its URL."""

    def __init__(self, fake: FakeCooked) -> None:
        self.fake = fake
        self.seen: list[str] = []
        super().__init__(("127.0.0.1", 0), _Relay)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Relay(BaseHTTPRequestHandler):
    server: RecordingProxy
    protocol_version = "HTTP/1.1"

    def _relay(self) -> None:
        self.server.seen.append(self.path)
        target = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.fake.port, timeout=10)
        try:
            path = target.path + (f"?{target.query}" if target.query else "")
            upstream.request(self.command, path, body=body or None, headers=dict(self.headers))
            answer = upstream.getresponse()
            data = answer.read()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            upstream.close()

    do_GET = do_POST = do_PUT = do_DELETE = _relay

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def proxy(fake: FakeCooked, monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingProxy]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    server = RecordingProxy(fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


async def test_http_proxy_from_the_environment_carries_every_request(
    proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    async with CookedClient("http://cooked.test", SEED_LOGIN, SecretStr(SEED_PASSWORD)) as client:
        shopping_list = await client.get_shopping_list()
        await client.get_shopping_list()
    assert shopping_list.aisles
    assert proxy.seen == [
        "http://cooked.test/api/public/login",
        "http://cooked.test/api/user/alice/shopping-list",
        "http://cooked.test/api/user/alice/shopping-list",  # the session cookie went through too
    ]


async def test_no_proxy_sends_the_host_directly(
    proxy: RecordingProxy, fake: FakeCooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALL_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "localhost,127.0.0.1")
    async with client_for(fake) as client:
        assert (await client.get_shopping_list()).aisles
    assert proxy.seen == []
    assert [request.path for request in fake.requests] == [
        "/api/public/login",
        "/api/user/alice/shopping-list",
    ]


async def test_the_proxy_is_chosen_and_the_trust_store_loaded_once_at_the_first_request(
    proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading the TLS trust store was the largest part of start-up that is cooked-mcp's own
    (bench/results.md): it waits for the first request, and so does the proxy choice (httpx
    makes both when the client is built); both are made once, not per request."""
    contexts: list[object] = []
    create_default_context = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        contexts.append(args or kwargs)
        return create_default_context(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    async with CookedClient("http://cooked.test", SEED_LOGIN, SecretStr(SEED_PASSWORD)) as client:
        assert contexts == []
        assert (await client.get_shopping_list()).aisles
        monkeypatch.delenv("HTTP_PROXY")
        await client.get_shopping_list()
    assert len(contexts) == 1
    assert proxy.seen[0] == "http://cooked.test/api/public/login"
    assert len(proxy.seen) == 3  # the second read too: the choice is not made again per request


@pytest.mark.req("api-client.ERRORS.5", "api-client.ERRORS.6")
async def test_a_proxy_setting_httpx_cannot_use_is_an_error_naming_the_variables_and_nothing_is_sent(
    proxy: RecordingProxy, fake: FakeCooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The variable is read at the first request, so that is where a bad one is reported: as a
    Cooked error an agent can pass on, never a crash, and without the proxy URL (it may hold a
    password)."""
    monkeypatch.setenv("HTTPS_PROXY", "ftp://user:proxy-secret@127.0.0.1:1")
    monkeypatch.setenv("HTTP_PROXY", "ftp://user:proxy-secret@127.0.0.1:1")
    async with client_for(fake) as client:
        for _ in range(2):  # the same error again, not a half-built client
            with pytest.raises(CookedUnavailable) as caught:
                await client.get_shopping_list()
            message = str(caught.value)
            assert "HTTPS_PROXY, HTTP_PROXY and ALL_PROXY" in message and "nothing was sent" in message
            assert "proxy-secret" not in message and "ftp://" not in message
    assert fake.requests == [] and proxy.seen == []


@pytest.mark.req("api-client.ERRORS.5", "api-client.ERRORS.6")
@pytest.mark.parametrize("bundle", ["missing", "not a certificate"])
async def test_ca_certificates_httpx_cannot_load_are_an_error_naming_the_variable_and_nothing_is_sent(
    fake: FakeCooked, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bundle: str
) -> None:
    """``SSL_CERT_FILE`` is read when the client is built, at the first request: a file that is
    not there or holds no certificate is a Cooked error an agent can pass on (it escaped as a
    FileNotFoundError traceback), again on the next call, and nothing reaches Cooked."""
    path = tmp_path / "ca.pem"
    if bundle != "missing":
        path.write_text("not a certificate\n")
    monkeypatch.setenv("SSL_CERT_FILE", str(path))
    async with client_for(fake) as client:
        for _ in range(2):
            with pytest.raises(CookedUnavailable) as caught:
                await client.get_shopping_list()
            message = str(caught.value)
            assert "SSL_CERT_FILE" in message and "nothing was sent" in message
            assert "point SSL_CERT_FILE at a readable PEM bundle or unset it" in message
            assert "the CA certificates SSL_CERT_FILE names" in message
    assert fake.requests == []


@pytest.mark.req("api-client.ERRORS.5")
async def test_a_ca_bundle_missing_with_no_variable_set_says_to_reinstall(
    fake: FakeCooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``SSL_CERT_*`` variable to point elsewhere: the bundle shipped with httpx is what is missing."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    def missing(*args: object, **kwargs: object) -> NoReturn:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(httpx, "create_ssl_context", missing)
    async with client_for(fake) as client:
        with pytest.raises(CookedUnavailable) as caught:
            await client.get_shopping_list()
    message = str(caught.value)
    assert "the CA certificates httpx uses (No such file or directory)" in message, message
    assert "reinstall cooked-mcp (its CA bundle is missing) or set SSL_CERT_FILE" in message, message
    assert fake.requests == []
