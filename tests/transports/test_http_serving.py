"""One real ``cooked-mcp --transport http`` process with a bearer token, shared by the module
(the ``server`` fixture, tests/conftest.py).

MCP traffic goes through the mcp SDK's Streamable HTTP client; the refusals are raw HTTP
so that status codes and headers can be asserted exactly.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from functools import partial

import anyio
import httpx
import pytest
from servers import HTTP_TOKEN as TOKEN
from servers import INITIALIZE, MCP_HEADERS, HttpServer, bearer, http_client, open_session_async
from sessions import text_of

from cooked_fake import FakeCooked
from cooked_mcp.config.limits import Limits

pytestmark = pytest.mark.anyio


def post(
    server: HttpServer, headers: dict[str, str], *, path: str = "/mcp", body: object = INITIALIZE
) -> httpx.Response:
    return httpx.post(server.origin + path, headers=headers, content=json.dumps(body), timeout=10)


def wait_for_log(server: HttpServer, text: str, after: int = 0, timeout: float = 10) -> None:
    """Until the server's stderr holds ``text`` past its first ``after`` characters: its own word
    that something happened."""
    deadline = time.monotonic() + timeout
    while text not in server.stderr()[after:]:
        assert time.monotonic() < deadline, f"no {text!r} in the log within {timeout} s"
        time.sleep(0.02)


@pytest.mark.req(
    "server.TRANSPORT.2",
    "server.TRANSPORT.2-2",
    "server.TRANSPORT.5",
    "server.SECURITY.3",
    "server.SECURITY.6",
    "server.SECURITY.7",
    "server.IDENTITY.1",
)
async def test_tools_work_over_streamable_http_with_the_right_token(
    server: HttpServer, fake: FakeCooked
) -> None:
    async with http_client(server.url, TOKEN) as client:
        assert client.server_info is not None and client.server_info.name == "Cooked"
        tools = (await client.list_tools()).tools
        result = await client.call_tool("read", {"target": "shopping_list"})
    assert [tool.name for tool in tools] == [
        "read",
        "preview_recipe_text",
        "save_recipe",
        "delete_recipe",
        "change_shopping_list",
    ]
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert any(r.method == "GET" and r.path.endswith("/shopping-list") for r in fake.requests)


@pytest.mark.req("server.TRANSPORT.5", "server.SINGLE_USER.1")
async def test_http_clients_share_one_cooked_session(server: HttpServer, fake: FakeCooked) -> None:
    async with http_client(server.url, TOKEN) as first:
        await first.call_tool("read", {"target": "shopping_list"})  # a session exists from here on
        logins = fake.login_count
        async with http_client(server.url, TOKEN) as second:
            results = [
                await client.call_tool("read", {"target": "shopping_list"}) for client in (first, second)
            ]
    assert not any(result.is_error for result in results)
    assert fake.login_count == logins, "a second HTTP client logged in to Cooked again"


@pytest.mark.req("server.SECURITY.3", "server.SECURITY.6", "server.SECURITY.7")
@pytest.mark.parametrize(
    ("authorization", "invalid_token"),
    [
        (None, False),
        (f"Bearer wrong-{TOKEN}", True),
        (f"Bearer {TOKEN[:-1]}X", True),  # differs only in its last character
        (f"Bearer {TOKEN[:-1]}", True),  # a prefix
        (f"Bearer {TOKEN}{TOKEN}", True),
        ("Bearer", False),
        (f"Basic {TOKEN}", False),
        (f"Token {TOKEN}", False),
        (TOKEN, False),
    ],
    ids=[
        "missing",
        "wrong",
        "last-char",
        "prefix",
        "doubled",
        "scheme-only",
        "basic",
        "token-scheme",
        "no-scheme",
    ],
)
def test_requests_without_the_bearer_token_get_401(
    server: HttpServer, authorization: str | None, invalid_token: bool
) -> None:
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    response = post(server, headers)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    # RFC 6750 for a static token (issue 15 item 8): the client is told the token is bad, not to start OAuth.
    assert 'error="invalid_token"' in challenge
    assert response.json()["error"] == "invalid_token"
    description = response.json()["error_description"]
    assert f'error_description="{description}"' in challenge
    assert ("token is wrong" if invalid_token else "No bearer token") in description
    assert "nothing to log in to" in description and "COOKED_MCP_HTTP_TOKEN" in description
    assert TOKEN[:8] not in response.text and "mcp-session-id" not in response.headers


@pytest.mark.req("server.SECURITY.7")
@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_every_mcp_method_needs_the_token(server: HttpServer, method: str) -> None:
    response = httpx.request(method, server.url, headers={"Accept": "text/event-stream"}, timeout=10)
    assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.req("server.SECURITY.7")
def test_two_authorization_headers_are_refused(server: HttpServer) -> None:
    headers = [*MCP_HEADERS.items(), ("Authorization", f"Bearer {TOKEN}"), ("Authorization", "Bearer x")]
    response = httpx.post(server.url, headers=headers, content=json.dumps(INITIALIZE), timeout=10)
    assert response.status_code == 401


@pytest.mark.req("server.SECURITY.6")
def test_the_bearer_scheme_name_is_case_insensitive(server: HttpServer) -> None:
    response = post(server, {**MCP_HEADERS, "Authorization": f"bearer {TOKEN}"})
    assert response.status_code == 200 and response.headers.get("mcp-session-id")


@pytest.mark.req("server.TRANSPORT.5")
@pytest.mark.parametrize("path", ["/", "/mcp/", "/mcp/extra", "/sse", "/messages/", "/MCP"])
def test_only_mcp_is_served(server: HttpServer, path: str) -> None:
    assert post(server, bearer(), path=path).status_code == 404
    # Without the token nothing is revealed, not even whether a path exists.
    assert post(server, MCP_HEADERS, path=path).status_code == 401


@pytest.mark.req("server.TRANSPORT.2-2")
@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1.evil.example:80", "null"])
def test_a_foreign_origin_is_refused(server: HttpServer, origin: str) -> None:
    response = post(server, {**bearer(), "Origin": origin})
    assert response.status_code == 403 and "mcp-session-id" not in response.headers


@pytest.mark.req("server.TRANSPORT.2-2")
@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8123", "0.0.0.0:8123", "127.0.0.1.evil.example"]
)
def test_a_foreign_host_is_refused(server: HttpServer, host: str) -> None:
    response = post(server, {**bearer(), "Host": host})
    assert response.status_code == 421 and "mcp-session-id" not in response.headers


@pytest.mark.req("server.TRANSPORT.2-2")
@pytest.mark.parametrize(
    "origin", ["http://127.0.0.1:{port}", "http://localhost:{port}", "http://[::1]:{port}"]
)
def test_local_origins_are_served(server: HttpServer, origin: str) -> None:
    response = post(server, {**bearer(), "Origin": origin.format(port=server.port)})
    assert response.status_code == 200 and response.headers.get("mcp-session-id")


@pytest.mark.req("server.TRANSPORT.5", "server.TRANSPORT.2-2")
@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_call_bigger_than_an_initialize_may_be_is_served_in_either_protocol_era(
    server: HttpServer, era: str
) -> None:
    """A 2026-07-28 request carries no session, as an ``initialize`` does not. Before, each one
    over 16 KiB was refused as "initialize request larger than 16384 bytes"."""
    client = http_client(server.url, TOKEN)
    client.mode = era  # type: ignore[assignment]
    async with client:
        result = await client.call_tool("preview_recipe_text", {"title": "Soup", "text": "1. Stir. " * 4000})
    assert not result.is_error, text_of(result)


TOO_LARGE = (
    f"Request body larger than {Limits.MAX_MESSAGE_BYTES} bytes; it was not read and nothing was sent "
    "to Cooked: send a message of at most 4 MiB"
)


@pytest.mark.req("server.TRANSPORT.5")
def test_an_oversized_body_is_refused_with_413(server: HttpServer) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * (5 * 1024 * 1024) + b'"}}'
    response = httpx.post(server.url, headers=bearer(), content=body, timeout=10)
    assert response.status_code == 413
    assert response.text == TOO_LARGE, response.text  # names the bound and what to do, as over stdio


@pytest.mark.req("server.TRANSPORT.5")
def test_an_oversized_chunked_body_is_refused_with_413(server: HttpServer) -> None:
    # No Content-Length: the bytes are counted as they arrive and reading stops at 4 MiB.
    def chunks() -> Iterator[bytes]:
        yield b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
        for _ in range(80):
            yield b"x" * 65536
        yield b'"}}'

    response = httpx.post(server.url, headers=bearer(), content=chunks(), timeout=10)
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.text == TOO_LARGE, response.text


@pytest.mark.req("server.SECURITY.7")
def test_an_unauthenticated_oversized_body_gets_401_not_413(server: HttpServer) -> None:
    response = httpx.post(server.url, headers=MCP_HEADERS, content=b"x" * (5 * 1024 * 1024), timeout=10)
    assert response.status_code == 401


@pytest.mark.req("server.SECURITY.2")
async def test_the_token_never_appears_in_the_log_even_at_debug(server: HttpServer) -> None:
    wrong = "CANARY-wrong-token-71c3"
    async with http_client(server.url, TOKEN) as client:
        await client.list_tools()
        await client.call_tool("read", {"target": "shopping_list"})
    attempts = [
        MCP_HEADERS,
        bearer(wrong),
        bearer(TOKEN[:-1] + "X"),
        {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN} {wrong}"},
        {**MCP_HEADERS, "Authorization": f"Basic {TOKEN}"},
    ]
    for headers in attempts:
        assert post(server, headers).status_code == 401
    # A confused client putting the token into the query or path: refused, and still not logged.
    assert post(server, MCP_HEADERS, path=f"/mcp?token={TOKEN}").status_code == 401
    assert post(server, MCP_HEADERS, path=f"/{TOKEN}").status_code == 401
    assert post(server, bearer(), path=f"/{TOKEN}").status_code == 404
    log = server.stderr()
    assert "DEBUG" in log and "refused POST /mcp" in log, "debug logging was not on: the test proves nothing"
    assert TOKEN[:-1] not in log and wrong not in log


# --- How answers are framed: an event stream per request, each request answered once (transports/http_guard.py) ---

IMPORT_URL = "https://example.org/recipes/slow-braise-over-http"
_PAGES = itertools.count(1)


def new_import_url() -> str:
    """A page no earlier test imported: the server reports a recent import of a URL instead of
    importing it again (handlers/writes.py), and this module shares one server."""
    return f"{IMPORT_URL}-{next(_PAGES)}"


class RawSession:
    """An MCP session spoken in raw HTTP, so the framing of each answer can be asserted."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self._ids = iter(range(2, 1_000_000))

    @classmethod
    async def open(cls, http: httpx.AsyncClient, url: str) -> RawSession:
        http.headers.update(await open_session_async(http, url, bearer()))
        return cls(http, url)

    def call(
        self, tool: str, arguments: dict[str, object], *, progress_token: str | None = None
    ) -> dict[str, object]:
        params: dict[str, object] = {"name": tool, "arguments": arguments}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        return {"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/call", "params": params}

    async def post(self, message: dict[str, object]) -> httpx.Response:
        return await self.http.post(self.url, json=message)


def sse_messages(response: httpx.Response) -> list[dict[str, object]]:
    """The JSON-RPC messages of an SSE answer, in order."""
    return [
        json.loads(line[5:])
        for line in response.text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


def last_message(response: httpx.Response) -> dict[str, object]:
    """The answer carried by an event stream (its last message) or by a JSON body."""
    if response.headers["content-type"].startswith("text/event-stream"):
        return sse_messages(response)[-1]
    answer: dict[str, object] = response.json()
    return answer


def tool_result(answer: dict[str, object], request: dict[str, object]) -> dict[str, object]:
    assert answer["id"] == request["id"], answer
    result = answer["result"]
    assert isinstance(result, dict) and result["isError"] is False, answer
    return result


@pytest.fixture
async def session(server: HttpServer, fake: FakeCooked) -> AsyncIterator[RawSession]:
    async with httpx.AsyncClient(headers=MCP_HEADERS, timeout=10) as http:
        yield await RawSession.open(http, server.url)
    fake.clear_faults()


@pytest.mark.req("server.TRANSPORT.5", "recipes.SAVE.3")
async def test_a_call_with_a_progress_token_streams_progress_then_its_answer(
    session: RawSession, fake: FakeCooked
) -> None:
    url = new_import_url()
    fake.set_import_result(url, "saved")
    fake.fail_with("slow", "POST", "/api/new", seconds=0.5)
    request = session.call("save_recipe", {"source": "url", "url": url}, progress_token="import-1")

    answer = await session.post(request)

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    *progress, last = sse_messages(answer)
    assert progress and all(m["method"] == "notifications/progress" for m in progress)
    assert all(m["params"]["progressToken"] == "import-1" for m in progress)  # type: ignore[index]
    assert tool_result(last, request)["structuredContent"]["saved"] is True  # type: ignore[index]


@pytest.mark.req("server.TRANSPORT.5", "recipes.SAVE.3")
async def test_quick_answers_and_a_progress_stream_share_a_session_without_crossing(
    session: RawSession, fake: FakeCooked
) -> None:
    """While an import streams its progress, quick calls on the same session get their own answers."""
    url = new_import_url()
    fake.set_import_result(url, "saved")
    fake.fail_with("slow", "POST", "/api/new", seconds=1.0)
    slow = session.call("save_recipe", {"source": "url", "url": url}, progress_token="import-2")
    quick = [session.call("read", {"target": "shopping_list"}) for _ in range(3)]
    answers: dict[object, httpx.Response] = {}
    finished: list[object] = []

    async def post(request: dict[str, object]) -> None:
        answers[request["id"]] = await session.post(request)
        finished.append(request["id"])

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(post, slow)
        await anyio.to_thread.run_sync(fake.wait_for_request, "POST", "/api/new")  # the import runs
        for request in quick:
            tasks.start_soon(post, request)

    assert finished[-1] == slow["id"], "the quick calls waited for the import"
    for request in quick:
        assert [m["id"] for m in sse_messages(answers[request["id"]])] == [request["id"]]
        tool_result(last_message(answers[request["id"]]), request)
    *progress, last = sse_messages(answers[slow["id"]])
    assert progress and all(m["params"]["progressToken"] == "import-2" for m in progress)  # type: ignore[index]
    tool_result(last, slow)


async def answer_to_an_import_interrupted_by(
    session: RawSession,
    fake: FakeCooked,
    interrupt: Callable[[dict[str, object]], Awaitable[None]],
    *,
    progress_token: str | None = None,
) -> tuple[dict[str, object], httpx.Response]:
    """A URL import (asking for progress only with ``progress_token``) that ``interrupt`` cuts into
    while Cooked is still working on it, and the HTTP answer the import then got."""
    fake.fail_with("slow", "POST", "/api/new", seconds=5)
    request = session.call(
        "save_recipe", {"source": "url", "url": new_import_url()}, progress_token=progress_token
    )
    answers: list[httpx.Response] = []

    async def post() -> None:
        answers.append(await session.post(request))

    with anyio.fail_after(3):  # well before the import would have answered
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(post)
            await anyio.to_thread.run_sync(fake.wait_for_request, "POST", "/api/new")  # the import runs
            await interrupt(request)
    [answer] = answers
    return request, answer


async def cancel(session: RawSession, request: dict[str, object]) -> None:
    notification = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request["id"]},
    }
    assert (await session.post(notification)).status_code == 202


@pytest.mark.req("server.TRANSPORT.5", "recipes.SAVE.3")
async def test_a_cancelled_call_ends_its_stream_without_an_answer(
    session: RawSession, fake: FakeCooked
) -> None:
    """The MCP spec: a cancelled request is not answered (issue 15 item 7: the TypeScript client
    reported the SDK's "Request cancelled" as a response for an unknown message ID)."""
    _, answer = await answer_to_an_import_interrupted_by(
        session, fake, partial(cancel, session), progress_token="cancel-me"
    )
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert [m for m in sse_messages(answer) if "id" in m] == []


@pytest.mark.req("server.TRANSPORT.5")
@pytest.mark.parametrize(("session_id", "status"), [(None, 400), ("no-such-session", 404)])
async def test_a_call_outside_an_open_session_is_refused_before_reaching_cooked(
    server: HttpServer, fake: FakeCooked, session_id: str | None, status: int
) -> None:
    fake.clear_requests()
    headers = {**bearer(), **({"mcp-session-id": session_id} if session_id else {})}
    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "read", "arguments": {"target": "shopping_list"}},
    }

    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(server.url, headers=headers, json=request)

    assert answer.status_code == status
    assert "session" in answer.text.lower()
    assert fake.requests == []


@pytest.mark.req("server.TRANSPORT.5")
async def test_a_client_gone_mid_upload_leaves_no_error_and_the_session_working(
    server: HttpServer, session: RawSession
) -> None:
    body = json.dumps(session.call("read", {"target": "shopping_list"})).encode()
    headers = "".join(f"{name}: {value}\r\n" for name, value in session.http.headers.items())
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{headers}Content-Length: {len(body)}\r\n\r\n"
    )
    log_before = server.stderr()

    async with await anyio.connect_tcp("127.0.0.1", server.port) as stream:
        await stream.send(head.encode() + body[: len(body) // 2])
    # The server says it saw the disconnect (it logs at debug level).
    gone = "went away before its request body was complete"
    await anyio.to_thread.run_sync(wait_for_log, server, gone, len(log_before))

    request = session.call("read", {"target": "shopping_list"})
    assert "Shopping list" in json.dumps(tool_result(last_message(await session.post(request)), request))
    new_log = server.stderr()[len(log_before) :]
    assert "Traceback" not in new_log and "ERROR" not in new_log, new_log


@pytest.mark.req("server.TRANSPORT.5")
async def test_a_call_cut_off_by_the_end_of_its_session_gets_a_json_rpc_error(
    session: RawSession, fake: FakeCooked
) -> None:
    async def end_the_session(request: dict[str, object]) -> None:
        assert (await session.http.delete(session.url)).status_code == 200

    request, answer = await answer_to_an_import_interrupted_by(session, fake, end_the_session)

    [message] = [m for m in sse_messages(answer) if "id" in m]
    assert message["id"] == request["id"]
    assert message["error"] == {"code": -32603, "message": "Session terminated before the request completed"}


# --- JSON-RPC that the SDK left unanswered (issue 17 item 8), and what a refusal names (issue 15 item 10) ---


@pytest.mark.req("server.TRANSPORT.5")
@pytest.mark.parametrize("bad_id", [1.5, None, True, {}, [1]])
async def test_a_request_with_an_id_that_is_no_id_gets_invalid_request(
    session: RawSession, fake: FakeCooked, bad_id: object
) -> None:
    fake.clear_requests()
    request = {**session.call("read", {"target": "shopping_list"}), "id": bad_id}

    answer = await session.post(request)

    assert answer.status_code == 400
    assert answer.json()["id"] is None  # JSON-RPC 2.0 section 5: null when the id cannot be read
    assert answer.json()["error"]["code"] == -32600
    assert fake.requests == []


@pytest.mark.req("server.TRANSPORT.5")
@pytest.mark.parametrize(
    ("body", "code", "answer_id"),
    [
        (b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call"', -32700, 4),  # cut off: its id is readable
        (b'{"jsonrpc": "2.0", "id": \n', -32700, None),
        (b'[{"jsonrpc": "2.0", "id": 4, "method": "ping"}]', -32600, None),
        (b'"ping"', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 4, "method": 12}', -32600, 4),
    ],
)
async def test_what_is_not_a_json_rpc_message_gets_the_spec_error(
    session: RawSession, body: bytes, code: int, answer_id: object
) -> None:
    answer = await session.http.post(session.url, content=body)

    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == code
    assert answer.json()["id"] == answer_id


@pytest.mark.req("server.TRANSPORT.5")
async def test_a_message_that_is_not_utf8_is_a_parse_error_as_over_stdio(
    session: RawSession, fake: FakeCooked
) -> None:
    """The same bytes as tests/transports/test_stdio_transport.py::NOT_UTF8: not JSON, so -32700 with
    its readable id on both transports, and nothing reaches Cooked."""
    fake.clear_requests()
    body = (
        b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "read", "arguments": '
        b'{"target": "recipes", "query": "caf\xe9"}}}'
    )

    answer = await session.http.post(session.url, content=body)

    assert answer.status_code == 400
    assert (answer.json()["error"]["code"], answer.json()["id"]) == (-32700, 9)
    assert fake.requests == []


_NESTED = b'{"a": ' * 100_000 + b"1" + b"}" * 100_000


@pytest.mark.req("server.TRANSPORT.5")
@pytest.mark.parametrize(
    ("request_id", "body"),
    [
        (11, b'{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {"q": "\\ud800"}}'),
        (9, b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": ' + _NESTED + b"}"),
        ("n", b'{"jsonrpc": "2.0", "method": "tools/call", "params": ' + _NESTED + b', "id": "n"}'),
    ],
    ids=["lone-surrogate", "deep", "deep-id-last"],
)
async def test_a_message_the_parser_refuses_is_a_parse_error_carrying_its_id(
    session: RawSession, fake: FakeCooked, request_id: object, body: bytes
) -> None:
    """Valid JSON that the JSON parser refuses (issue 41 item 6), as over stdio
    (tests/transports/test_stdio_transport.py::UNPARSED). Before: -32700 with a null id."""
    fake.clear_requests()
    answer = await session.http.post(session.url, content=body)
    assert answer.status_code == 400
    assert (answer.json()["error"]["code"], answer.json()["id"]) == (-32700, request_id)
    assert fake.requests == []


@pytest.mark.req("server.TRANSPORT.5")
async def test_looking_for_the_id_of_a_message_the_parser_refuses_takes_bounded_time(
    session: RawSession,
) -> None:
    """Its last 64 KiB are searched for a top-level ``"id":``, each try parsing up to the end of
    the message: a tail of 6,000 ``"id": 1`` members, cut off, held the one event loop (every
    client's calls) for about 3 s per message. Now only the last few are tried."""
    tail = b', "id": 1' * 6_000  # and no closing brace: no try can succeed
    body = b'{"jsonrpc": "2.0", "method": "ping", "params": {"pad": "' + b"x" * 100_000 + b'"}' + tail
    began = time.monotonic()
    answer = await session.http.post(session.url, content=body)
    took = time.monotonic() - began
    assert (answer.json()["error"]["code"], answer.json()["id"]) == (-32700, None)
    assert took < 1.0, f"{took:.2f} s"


@pytest.mark.req("server.TRANSPORT.5")
async def test_a_second_request_with_the_id_of_one_in_flight_is_refused_and_the_first_answered(
    session: RawSession, fake: FakeCooked
) -> None:
    fake.set_import_result(IMPORT_URL, "saved")
    fake.fail_with("slow", "POST", "/api/new", seconds=1.0)
    first = session.call("save_recipe", {"source": "url", "url": IMPORT_URL})
    second = {**session.call("read", {"target": "shopping_list"}), "id": first["id"]}
    answers: dict[str, httpx.Response] = {}

    async def post(name: str, request: dict[str, object]) -> None:
        answers[name] = await session.post(request)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(post, "first", first)
            await anyio.to_thread.run_sync(fake.wait_for_request, "POST", "/api/new")  # the import runs
            await post("second", second)

    assert answers["second"].status_code == 400
    assert answers["second"].json()["id"] == first["id"]
    assert answers["second"].json()["error"]["code"] == -32600
    # Worded as over stdio (tests/transports/test_stdio_transport.py): one rule, protocol_guard.duplicate.
    assert "is still running; use a new id" in answers["second"].json()["error"]["message"]
    assert tool_result(last_message(answers["first"]), first)["structuredContent"]["saved"] is True  # type: ignore[index]


@pytest.mark.req("server.TRANSPORT.5")
@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        (MCP_HEADERS, b"{not json", 400),
        ({**MCP_HEADERS, "Accept": "text/html"}, json.dumps(INITIALIZE).encode(), 406),
        (MCP_HEADERS, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode(), 400),
    ],
)
async def test_a_refused_opening_request_names_no_session(
    server: HttpServer, headers: dict[str, str], body: bytes, status: int
) -> None:
    async with httpx.AsyncClient(headers={**bearer(), **headers}, timeout=10) as http:
        answer = await http.post(server.url, content=body)

    assert answer.status_code == status
    assert "mcp-session-id" not in answer.headers
