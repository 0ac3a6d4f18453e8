"""What a call still running gets when the HTTP server is stopped (issue 17 item 9).

Before: uvicorn cancelled it after the grace period and answered a plain-text 500,
although Cooked may already have applied the change. No requirement speaks of shutdown;
these cite the /mcp endpoint.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from servers import (
    MCP_HEADERS,
    HttpServer,
    http_server,
    open_session,
    open_session_async,
    server_env,
    write_limits,
)

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio

#: The shutdown graces these tests run with (``[mcp.limits]``), not the real 3 s: short, so waiting
#: it out takes a second; long, so that ending well before it proves what ended the wait.
SHORT_GRACE = 1.0
LONG_GRACE = 60.0

IMPORT_URL = "https://example.org/recipes/cut-off-by-shutdown"


def last_message(response: httpx.Response) -> Any:
    """The last JSON-RPC message of an event-stream answer: the request's answer."""
    assert response.headers["content-type"].startswith("text/event-stream"), response.text
    return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")][-1]


@pytest.mark.req("server.TRANSPORT.5", "recipes.SAVE.3")
@pytest.mark.parametrize("progress", [False, True], ids=["plain", "with-progress"])
async def test_a_write_cut_off_by_shutdown_is_told_its_change_may_have_been_made(
    fake: FakeCooked, tmp_path: Path, progress: bool
) -> None:
    fake.set_import_result(IMPORT_URL, "saved")
    fake.fail_with("slow", "POST", "/api/new", seconds=60)
    env = server_env(tmp_path, fake.base_url)
    write_limits(env, stop_grace_seconds=SHORT_GRACE)
    params: dict[str, object] = {"name": "save_recipe", "arguments": {"source": "url", "url": IMPORT_URL}}
    if progress:
        params["_meta"] = {"progressToken": "p"}
    request = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}
    with http_server(env) as server:
        answer, _ = await _answer_to_a_call_cut_off(
            server, fake, request, ("POST", "/api/new"), [signal.SIGTERM]
        )

    assert answer.status_code == 200
    last = last_message(answer)
    assert last["id"] == 5
    assert "may or may not have been made" in last["error"]["message"]
    assert "Traceback" not in server.stderr()


@pytest.mark.req("server.TRANSPORT.5", "recipes.SAVE.3")
def test_sigterm_lets_a_background_import_finish_within_the_grace(fake: FakeCooked, tmp_path: Path) -> None:
    """An import answered "still running" goes on in the background; SIGTERM waits for it within
    the shutdown grace instead of breaking it off (before: cooked-mcp's request to Cooked was cut)."""
    fake.fail_with("slow", "POST", "/api/new", seconds=0.5)
    env = server_env(
        tmp_path,
        fake.base_url,
        COOKED_MCP_IMPORT_ANSWER_SECONDS="0.3",
        COOKED_MCP_LOG_LEVEL="info",
    )
    write_limits(env, stop_grace_seconds=LONG_GRACE)  # the stop waits for the import, not the grace
    arguments = {"source": "url", "url": "https://example.org/recipes/background-stew"}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "save_recipe", "arguments": arguments},
    }
    with http_server(env) as server, httpx.Client(headers=MCP_HEADERS, timeout=10) as http:
        http.headers.update(open_session(server.url, http=http))
        answer = last_message(http.post(server.url, json=call))
        assert server.stop(signal.SIGTERM, timeout=LONG_GRACE / 3) == 0

    assert answer["result"]["structuredContent"]["import_running"] is True
    assert "every change sent to Cooked has ended" in server.stderr(), server.stderr()
    assert "ended with an error" not in server.stderr()
    assert [r.status for r in fake.api_requests() if r.path == "/api/new"] == [200]


async def _answer_to_a_call_cut_off(
    server: HttpServer,
    fake: FakeCooked,
    request: dict[str, object],
    at_cooked: tuple[str, str],
    signals: list[signal.Signals],
) -> tuple[httpx.Response, float]:
    """Post ``request`` in a session, send ``signals`` once it reached Cooked (``at_cooked``:
    method and path); its answer, and the seconds from the first signal to the exit (0)."""
    async with httpx.AsyncClient(headers=MCP_HEADERS, timeout=30) as http:
        http.headers.update(await open_session_async(http, server.url))
        answers: list[httpx.Response] = []

        async def post() -> None:
            answers.append(await http.post(server.url, json=request))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(post)
                await anyio.to_thread.run_sync(fake.wait_for_request, *at_cooked)
                started = time.monotonic()
                for sig in signals:
                    server.process.send_signal(sig)
                    await anyio.sleep(0.1)  # two signals, not one coalesced pending one
    assert await anyio.to_thread.run_sync(server.stop) == 0
    [answer] = answers
    return answer, time.monotonic() - started


@pytest.mark.req("server.TRANSPORT.5")
async def test_a_double_sigint_answers_the_call_in_flight_at_once_with_the_json_rpc_error(
    fake: FakeCooked, tmp_path: Path
) -> None:
    """Issue 30 item 3. Before: the client got a plain-text 500 and stderr three tracebacks."""
    fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=60)
    env = server_env(tmp_path, fake.base_url)
    write_limits(env, stop_grace_seconds=LONG_GRACE)
    request = {
        "jsonrpc": "2.0",
        "id": 42,
        "method": "tools/call",
        "params": {"name": "read", "arguments": {"target": "recipe", "recipe_id": "r-0001"}},
    }
    with http_server(env) as server:
        answer, stopped_after = await _answer_to_a_call_cut_off(
            server, fake, request, ("GET", "/api/saved/r-0001"), [signal.SIGINT, signal.SIGINT]
        )

    assert answer.status_code == 200
    assert last_message(answer)["id"] == 42
    assert "may or may not have been made" in last_message(answer)["error"]["message"]
    assert stopped_after < LONG_GRACE / 3, "the second SIGINT did not cut the grace short"
    assert "Traceback" not in server.stderr()


#: What an idle connection may be doing when SIGTERM arrives: nothing since connecting, waiting
#: after an answer (keep-alive), half-way through a request head, half-way through a body.
IDLE = {
    "silent": b"",
    "keep-alive": b"GET /nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "half a head": b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",
    "half a body": b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{",
}
#: SIGTERM to exit with only idle connections open (issue 30 item 3): well within the shutdown
#: grace the test runs with (LONG_GRACE), which a connection held open would wait out.
IDLE_STOP_SECONDS = 5.0


@pytest.mark.req("server.TRANSPORT.5")
def test_sigterm_with_idle_connections_open_exits_without_waiting_out_the_grace(
    fake: FakeCooked, tmp_path: Path
) -> None:
    """Before: 5.6 s, uvicorn waiting for a half-sent body until its graceful-shutdown timeout
    ("Cancel 0 running task(s)"); idle connections now close at once, calls in flight keep their
    grace (test_a_write_cut_off_by_shutdown_is_told_its_change_may_have_been_made)."""
    env = server_env(tmp_path, fake.base_url)
    write_limits(env, stop_grace_seconds=LONG_GRACE)
    with http_server(env) as server, contextlib.ExitStack() as sockets:
        for kind, sent in IDLE.items():
            for _ in range(10):
                sock = sockets.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=5))
                sock.sendall(sent)
                if kind == "keep-alive":
                    assert sock.recv(65536).startswith(b"HTTP/1.1 404")
        started = time.monotonic()
        assert server.stop(signal.SIGTERM) == 0
        stopped_after = time.monotonic() - started
    assert stopped_after < IDLE_STOP_SECONDS, f"stopping took {stopped_after:.2f} s"
    assert "Traceback" not in server.stderr() and "graceful shutdown exceeded" not in server.stderr()
