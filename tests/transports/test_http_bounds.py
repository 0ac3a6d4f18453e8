"""Connection and session bounds of the HTTP transport, against the real process (issue 17 items 1, 2).

No requirement speaks of connection or memory bounds; these cite the closest ones: the
bearer token (an authorised client keeps its service) and the /mcp endpoint. Every socket
is on 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import select
import socket
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import anyio
import httpx
import pytest
from servers import INITIALIZE, MCP_HEADERS, HttpServer, http_client, http_server, server_env, write_limits

from cooked_fake import FakeCooked
from cooked_mcp.config.limits import Limits
from cooked_mcp.transports.connection_guard import connection_cap, rate_limited_accept_errors

TOKEN = "CANARY-bounds-Token_0123456789"
HEADERS = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
#: The (soft, hard) open-files limit the flood tests run the server under.
OPEN_FILES = (256, 256)
#: Resident memory a full house of the fattest sessions allowed may add (SECURITY.md).
SESSIONS_RSS_BOUND_MIB = 64


def bounded_server(
    fake: FakeCooked, home: Path, open_files: tuple[int, int] | None = None, **limits: float
) -> AbstractContextManager[HttpServer]:
    env = server_env(home, fake.base_url, COOKED_MCP_HTTP_TOKEN=TOKEN)
    write_limits(env, **limits)
    return http_server(env, open_files=open_files)


@pytest.fixture(scope="module")
def flood_server(running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server under the flood tests' open-files limit for both: each closes every socket it
    opened, so the next finds the server as the first did (and serving after the first's flood)."""
    with bounded_server(running_fake, tmp_path_factory.mktemp("flood"), open_files=OPEN_FILES) as server:
        yield server


def idle_sockets(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that send nothing (connected without waiting, as a flood would)."""
    held = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        held.append(sock)
    return held


def open_session(http: httpx.Client, url: str, body: bytes | None = None) -> httpx.Response:
    return http.post(url, headers=HEADERS, content=body if body is not None else json.dumps(INITIALIZE))


def session_when_room(http: httpx.Client, url: str, seconds: float = 30) -> httpx.Response:
    """A session opened once the server has room for it: on the shared flood server, the sockets
    the case before closed count until the server has seen each one go."""
    deadline = time.monotonic() + seconds
    while (opened := open_session(http, url)).status_code != 200:
        assert time.monotonic() < deadline, (
            f"no room {seconds} s after the connections closed: {opened.status_code}"
        )
        time.sleep(0.5)
    return opened


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def fat_initialize(size: int) -> bytes:
    """An initialize request of about ``size`` bytes, all of it empty experimental capabilities."""
    request = json.loads(json.dumps(INITIALIZE))
    keys = size // 16  # each '"k000000": {}, ' is 15 bytes
    while True:
        request["params"]["capabilities"] = {"experimental": {f"k{i:06}": {} for i in range(keys)}}
        body = json.dumps(request).encode()
        if len(body) <= size:
            return body
        keys -= (len(body) - size) // 15 + 1


@pytest.mark.anyio
@pytest.mark.req("server.SECURITY.7", "server.TRANSPORT.5")
async def test_an_authorised_client_is_served_through_more_idle_connections_than_the_cap(
    fake: FakeCooked, flood_server: HttpServer
) -> None:
    """Before the bound: under 256 open files, 300 silent sockets made the authorised client time
    out after 30 s, and asyncio logged ~2,800 accept tracebacks a second (50 MB in 40 s)."""
    flood = OPEN_FILES[0] + 44
    assert flood > connection_cap(OPEN_FILES[0])
    server = flood_server
    logged_before = server.stderr()
    held = idle_sockets(server.port, flood)
    try:
        await asyncio.sleep(1)  # the server has taken in the flood
        with anyio.fail_after(60):
            async with http_client(server.url, TOKEN) as client:
                result = await client.call_tool("read", {"target": "shopping_list"})
        assert not result.is_error, result
        log = server.stderr().removeprefix(logged_before)
        assert "Traceback" not in log, log[-2000:]
        assert log.count("cannot accept connections") <= 5, log[-2000:]
    finally:
        for sock in held:
            sock.close()


@pytest.mark.req("server.SECURITY.7", "server.TRANSPORT.5")
def test_silent_trickling_head_and_trickling_body_connections_are_closed(
    fake: FakeCooked, tmp_path: Path
) -> None:
    """With the bounds (``[mcp.limits]``) shortened to HEAD and BODY seconds, not the real 5 and 30."""
    with (
        bounded_server(fake, tmp_path, http_head_seconds=HEAD, http_body_seconds=BODY) as server,
        httpx.Client(timeout=10) as http,
    ):
        session_id = open_session(http, server.url).headers["mcp-session-id"]
        silent, slow_head, slow_body = (
            socket.create_connection(("127.0.0.1", server.port)) for _ in range(3)
        )
        slow_head.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow_body.sendall(
            (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
                f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                f"mcp-session-id: {session_id}\r\nContent-Length: 1000\r\n\r\n{{"
            ).encode()
        )
        started = time.monotonic()
        closed_after = wait_until_closed(
            {"silent": silent, "slow_head": slow_head, "slow_body": slow_body}, BODY + 30
        )
        for sock in (silent, slow_head, slow_body):
            sock.close()
    # Generous upper margins for a loaded machine; the order shows which bound closed which.
    assert closed_after["silent"] < HEAD + 5, closed_after
    assert closed_after["slow_head"] < HEAD + 5, closed_after
    assert closed_after["slow_body"] < BODY + 5, closed_after
    assert closed_after["slow_body"] > closed_after["silent"], closed_after
    assert time.monotonic() - started < BODY + 30


#: The head and body bounds that test runs the server with.
HEAD, BODY = 1.0, 3.0


def wait_until_closed(socks: dict[str, socket.socket], timeout: float) -> dict[str, float]:
    """Seconds until the server closed each socket (EOF or reset); fails after ``timeout``."""
    started = time.monotonic()
    open_ = dict(socks)
    closed: dict[str, float] = {}
    while open_:
        assert time.monotonic() - started < timeout, f"still open after {timeout} s: {sorted(open_)}"
        readable, _, _ = select.select(list(open_.values()), [], [], 1)
        for name, sock in list(open_.items()):
            if sock in readable:
                try:
                    data = sock.recv(4096)
                except ConnectionError:
                    data = b""
                if not data:
                    closed[name] = time.monotonic() - started
                    del open_[name]
    return closed


@pytest.mark.req("server.SECURITY.7", "server.TRANSPORT.5")
def test_a_connection_beyond_a_cap_of_busy_ones_gets_503(fake: FakeCooked, flood_server: HttpServer) -> None:
    cap = connection_cap(OPEN_FILES[0])
    server = flood_server
    with httpx.Client(timeout=10) as http:
        session_id = session_when_room(http, server.url).headers["mcp-session-id"]
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"mcp-session-id: {session_id}\r\nContent-Length: 1000\r\n\r\n{{"
        ).encode()
        busy = []
        try:
            for _ in range(cap):  # each sends its head and the start of its body: a request in progress
                sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
                sock.sendall(head)
                busy.append(sock)
            time.sleep(1)
            answer = httpx.post(server.url, headers=HEADERS, content=json.dumps(INITIALIZE), timeout=20)
            assert answer.status_code == 503
            assert answer.json()["error"]["message"] == "Too many connections"
        finally:
            for sock in busy:
                sock.close()
        session_when_room(http, server.url)  # room again once they are gone


@pytest.mark.req("server.SECURITY.7", "server.TRANSPORT.5")
def test_a_request_head_growing_past_the_bound_is_refused_with_400_and_closed(
    flood_server: HttpServer,
) -> None:
    """``Limits.MAX_HEAD_BYTES`` (uvicorn's ``h11_max_incomplete_event_size``): a head not yet
    complete past it is refused at once (not at the head deadline), so no more of it is kept."""
    pad = b"a" * (Limits.MAX_HEAD_BYTES + 1024)
    with socket.create_connection(("127.0.0.1", flood_server.port), timeout=4) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + pad)  # the head goes on
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]


@pytest.fixture(scope="module")
def raised_server(running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server started with a soft open-files limit below its hard one and the real time bounds,
    for the case that reads the limit it raised and the memory case (which opens one connection
    at a time and measures what its own sessions add, so neither case changes what the other sees)."""
    with bounded_server(running_fake, tmp_path_factory.mktemp("raised"), open_files=(256, 1024)) as server:
        yield server


@pytest.mark.req("server.TRANSPORT.5")
def test_the_soft_open_files_limit_is_raised_to_the_hard_one(raised_server: HttpServer) -> None:
    limits = Path(f"/proc/{raised_server.process.pid}/limits").read_text()
    [line] = [line for line in limits.splitlines() if line.startswith("Max open files")]
    assert line.split()[3:5] == ["1024", "1024"], line


@pytest.mark.req("server.TRANSPORT.5")
def test_accept_failures_are_logged_at_most_once_a_second(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.new_event_loop()
    try:
        rate_limited_accept_errors(loop)
        with caplog.at_level(logging.DEBUG):
            for _ in range(5000):
                loop.call_exception_handler(
                    {
                        "message": "socket.accept() out of system resource",
                        "exception": OSError(24, "Too many"),
                    }
                )
            loop.call_exception_handler({"message": "something else went wrong"})
    finally:
        loop.close()
    accept = [r for r in caplog.records if "cannot accept" in r.getMessage()]
    assert len(accept) == 1 and accept[0].exc_info is None
    assert any("something else went wrong" in r.getMessage() for r in caplog.records)


@pytest.mark.req("server.SINGLE_USER.1", "server.TRANSPORT.5")
def test_a_full_house_of_the_fattest_sessions_stays_within_the_memory_bound(
    fake: FakeCooked, raised_server: HttpServer
) -> None:
    """Before the bounds: ten 4 MB initialize requests (280,000 capability keys) took the server
    from 71 to 787 MiB, held for 30 minutes, and 10,000 sessions were allowed."""
    fattest = fat_initialize(Limits.MAX_INITIALIZE_BYTES)
    server = raised_server
    with httpx.Client(timeout=30) as http:
        first = open_session(http, server.url)
        assert first.status_code == 200
        time.sleep(0.5)
        before = rss_mib(server.process.pid)

        refused = open_session(http, server.url, fat_initialize(4_000_000))
        statuses = [
            open_session(http, server.url, fattest).status_code for _ in range(Limits.MAX_SESSIONS + 10)
        ]
        time.sleep(0.5)
        grown = rss_mib(server.process.pid) - before

        # The oldest idle session made room for the newer ones rather than any being refused.
        oldest = http.post(
            server.url,
            headers={**HEADERS, "mcp-session-id": first.headers["mcp-session-id"]},
            json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
        )
    assert refused.status_code == 413 and "initialize" in refused.json()["error"]["message"]
    assert statuses == [200] * (Limits.MAX_SESSIONS + 10)
    assert oldest.status_code == 404
    assert grown < SESSIONS_RSS_BOUND_MIB, f"RSS grew by {grown:.0f} MiB"
