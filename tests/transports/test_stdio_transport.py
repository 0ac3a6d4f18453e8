"""The stdio transport of the real cooked-mcp process, spoken to line by line.

cooked-mcp serves pipes from its event loop (transports/stdio.py) and anything else
through the SDK's transport; these tests hold both to the same contract: one JSON-RPC
message per line each way, nothing else on stdout, bad lines answered or skipped without
ending the session, big messages whole, and exit 0 once stdin ends.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from servers import COOKED_MCP, INITIALIZE, server_env

from cooked_fake import FakeCooked
from cooked_mcp.config.limits import Limits

pytestmark = pytest.mark.req("server.TRANSPORT.1")

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


SLOW_READ = _call(3, "read", {"target": "recipe", "recipe_id": "r-0001"})


class LineClient:
    """A cooked-mcp process on pipes; every stdout line must be one JSON-RPC message."""

    def __init__(self, process: subprocess.Popen[bytes], stderr_path: Path | None = None) -> None:
        self.process = process
        self.stderr_path = stderr_path
        assert process.stdin is not None and process.stdout is not None
        self.stdin: IO[bytes] = process.stdin
        self.stdout: IO[bytes] = process.stdout

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def receive(self) -> dict[str, Any]:
        line = self.stdout.readline()
        assert line.endswith(b"\n"), f"stdout ended or broke off mid-message: {line[:200]!r}"
        message: dict[str, Any] = json.loads(line)
        assert message.get("jsonrpc") == "2.0", message
        return message

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(_line(message))
        answer = self.receive()
        assert answer.get("id") == message["id"], answer
        return answer

    def initialize(self) -> None:
        assert "result" in self.request(INITIALIZE)
        self.send(_line(INITIALIZED))

    def finish(self) -> str:
        """Close stdin; the process must exit 0 with nothing more on stdout. Returns its stderr."""
        self.stdin.close()
        assert self.process.wait(timeout=15) == 0
        assert self.stdout.read() == b""
        return self.stderr()

    def stderr(self) -> str:
        """What the process wrote to stderr: so far (from its file), or all of it once it exited."""
        if self.stderr_path is not None:
            return self.stderr_path.read_text("utf-8", "replace")
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")


def _start(
    process_env: dict[str, str],
    stdin: int | IO[bytes] = subprocess.PIPE,
    stdout: int | IO[bytes] = subprocess.PIPE,
) -> subprocess.Popen[bytes]:
    return subprocess.Popen([COOKED_MCP], env=process_env, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)


@pytest.fixture
def client(process_env: dict[str, str]) -> Iterator[LineClient]:
    """A process of the case's own, for the cases that end the session."""
    process = _start(process_env)
    try:
        yield LineClient(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def serving(running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LineClient]:
    """One initialized process for every case that must leave it serving: each such case is then
    also followed by the next case's calls on the same pipes, and the process must still exit 0
    with nothing more on stdout once stdin ends. Its stderr goes to a file, read as it grows."""
    home = tmp_path_factory.mktemp("stdio-serving")
    stderr_path = home / "stderr.txt"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [COOKED_MCP],
            env=server_env(home, running_fake.base_url),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    try:
        client = LineClient(process, stderr_path)
        client.initialize()
        yield client
        client.finish()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _oversized(request_id: int, *, id_last: bool = False) -> bytes:
    """A tools/call over the limit, its id first (as the Python SDK writes it) or last (TypeScript SDK)."""
    call = _call(
        request_id, "save_recipe", {"source": "raw_text", "text": "x" * (Limits.MAX_MESSAGE_BYTES + 1024)}
    )
    if id_last:
        call = {key: call[key] for key in ("method", "params", "jsonrpc", "id")}
    return _line(call)


@pytest.mark.parametrize("id_last", [False, True], ids=["id-first", "id-last"])
def test_a_message_over_the_limit_is_answered_with_an_error_carrying_its_id_and_serving_goes_on(
    serving: LineClient, fake: FakeCooked, id_last: bool
) -> None:
    client = serving
    fake.clear_requests()
    ignored_before = client.stderr().count("ignored a message longer than")
    client.send(_oversized(7, id_last=id_last))
    error = client.receive()
    assert error["id"] == 7  # issue 15 item 9: an id of null left the client waiting for ever
    assert error["error"]["code"] == -32600
    assert f"longer than {Limits.MAX_MESSAGE_BYTES} bytes" in error["error"]["message"]
    assert "nothing was sent to Cooked" in error["error"]["message"]
    # The next message is read from its own first byte: nothing of the long one is left over.
    answer = client.request(_call(8, "read", {"target": "recipe", "recipe_id": "r-0001"}))
    assert answer["result"]["structuredContent"]["recipe"]["id"] == "r-0001"
    assert [(m, p) for m, p, _ in fake.api_calls(renewals=False)] == [("GET", "/api/saved/r-0001")]
    assert client.stderr().count("ignored a message longer than") == ignored_before + 1


def test_a_message_over_the_limit_without_a_readable_id_ends_the_session_saying_why(
    client: LineClient, fake: FakeCooked
) -> None:
    client.initialize()
    fake.clear_requests()
    client.send(
        _line({"jsonrpc": "2.0", "method": "x", "params": {"text": "x" * (Limits.MAX_MESSAGE_BYTES + 1024)}})
    )
    error = client.receive()
    assert error["id"] is None and error["error"]["code"] == -32600
    assert client.process.wait(timeout=15) == 0
    assert client.stdout.read() == b""
    assert client.process.stderr is not None
    stderr = client.process.stderr.read().decode()
    assert "its id could not be read" in stderr and "ending the session" in stderr
    assert fake.requests == []


BAD_LINES = [
    (b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]', -32600, None),
    (b'"ping"', -32600, None),
    (b"42", -32600, None),
    *(
        (json.dumps({"jsonrpc": "2.0", "id": bad, "method": "ping"}).encode(), -32600, None)
        for bad in [1.5, None, True, {}, [1]]
    ),
    (b'{"jsonrpc": "2.0", "id": 5, "method": 12}', -32600, 5),
    (b'{"jsonrpc": "1.0", "id": "six", "method": "ping"}', -32600, "six"),
]


def test_lines_that_are_not_json_rpc_are_answered_with_the_spec_error_and_serving_goes_on(
    serving: LineClient,
) -> None:
    """Issue 17 item 8: none of these was answered, and the client of each waited for ever."""
    client = serving
    client.send(b'\n   \n\xff\xfe not json \xc3\n{"jsonrpc": "2.0", "id": \n')  # blank lines are skipped
    assert [(m["error"]["code"], m["id"]) for m in (client.receive(), client.receive())] == [
        (-32700, None)
    ] * 2
    for line, code, answer_id in BAD_LINES:
        client.send(line + b"\n")
        error = client.receive()
        assert (error["error"]["code"], error["id"]) == (code, answer_id), (line, error)
    answer = client.request({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert answer["result"] == {}


#: A valid JSON-RPC request but for one byte that is not UTF-8 inside a string (issue 30 item 5).
NOT_UTF8 = (
    b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "read", "arguments": '
    b'{"target": "recipes", "query": "caf\xe9"}}}'
)


def test_a_message_that_is_not_utf8_is_a_parse_error_as_over_http(
    serving: LineClient, fake: FakeCooked
) -> None:
    """JSON text is UTF-8 (RFC 8259 section 8.1), so this is not JSON: -32700, with the id it
    carries (it can be read), as tests/transports/test_http_serving.py holds HTTP to. Before: stdio
    read the byte as U+FFFD and ran the call."""
    client = serving
    fake.clear_requests()
    client.send(NOT_UTF8 + b"\n")
    error = client.receive()
    assert (error["error"]["code"], error["id"]) == (-32700, 9)
    assert fake.requests == []
    assert client.request({"jsonrpc": "2.0", "id": 2, "method": "ping"})["result"] == {}


_NESTED = b'{"a": ' * 100_000 + b"1" + b"}" * 100_000
#: Valid JSON that the JSON parser refuses, and the id each carries (issue 41 item 6): a lone
#: surrogate, nesting 100,000 deep with the id first (the Python SDK) or last (the TypeScript SDK).
UNPARSED = {
    "lone-surrogate": (11, b'{"jsonrpc": "2.0", "id": 11, "method": "ping", "params": {"q": "\\ud800"}}'),
    "deep": (9, b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": ' + _NESTED + b"}"),
    "deep-id-last": (
        "n",
        b'{"jsonrpc": "2.0", "method": "tools/call", "params": ' + _NESTED + b', "id": "n"}',
    ),
}


@pytest.mark.parametrize("name", list(UNPARSED))
def test_a_message_the_parser_refuses_is_a_parse_error_carrying_its_id(
    serving: LineClient, fake: FakeCooked, name: str
) -> None:
    """Before: -32700 with a null id, so the client waiting on its request was never answered."""
    request_id, line = UNPARSED[name]
    fake.clear_requests()
    serving.send(line + b"\n")
    error = serving.receive()
    assert (error["error"]["code"], error["id"]) == (-32700, request_id)
    assert fake.requests == []


#: Before ``initialize`` (issue 42 item 14): a line that is not JSON, then a request.
BEFORE_INITIALIZE = b'{not json\n{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}\n'


def _before_initialize(answers: list[dict[str, Any]]) -> None:
    not_json, too_early = answers
    assert (not_json["error"]["code"], not_json["id"]) == (-32700, None)
    assert too_early["id"] == 5 and too_early["error"]["code"] == -32602
    assert "send initialize first" in too_early["error"]["message"]


def test_before_initialize_a_bad_line_is_a_parse_error_and_a_request_is_told_to_initialize(
    client: LineClient,
) -> None:
    client.send(BEFORE_INITIALIZE)
    _before_initialize([client.receive(), client.receive()])
    client.initialize()
    assert client.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]
    client.finish()


def test_before_initialize_from_a_file_too(process_env: dict[str, str], tmp_path: Path) -> None:
    """From a regular file (once read by the SDK's transport) the line that is not JSON got no
    answer; the answers written to a regular file are all there when the process has ended."""
    requests, answered = tmp_path / "requests.jsonl", tmp_path / "answers.jsonl"
    requests.write_bytes(BEFORE_INITIALIZE + _line(INITIALIZE))
    with requests.open("rb") as stdin, answered.open("wb") as stdout:
        process = _start(process_env, stdin, stdout)
        _, err = process.communicate(timeout=15)
    assert process.returncode == 0, err.decode(errors="replace")
    *answers, initialized = [json.loads(line) for line in answered.read_bytes().splitlines()]
    _before_initialize(answers)
    assert initialized["id"] == INITIALIZE["id"] and "protocolVersion" in initialized["result"]


def test_a_request_reusing_the_id_of_one_still_running_is_refused_and_the_first_answered(
    serving: LineClient, fake: FakeCooked
) -> None:
    client = serving
    fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=1)
    client.send(_line(SLOW_READ) + _line({"jsonrpc": "2.0", "id": SLOW_READ["id"], "method": "ping"}))
    refusal, answer = client.receive(), client.receive()
    assert refusal["id"] == SLOW_READ["id"] and refusal["error"]["code"] == -32600
    assert "still running" in refusal["error"]["message"]
    assert answer["id"] == SLOW_READ["id"]
    assert answer["result"]["structuredContent"]["recipe"]["id"] == "r-0001"


def test_a_large_request_and_answer_cross_the_pipes_whole(serving: LineClient, fake: FakeCooked) -> None:
    """Both far above a pipe's 64 KiB buffer, so both sides must wait for the other to read."""
    client = serving
    markdown = "".join(f"- step {n}: stir {'ü' * 40}\n" for n in range(1600))
    assert len(markdown) < 100_000 < len(markdown.encode())
    saved = client.request(
        _call(2, "save_recipe", {"source": "prepared", "title": "Long", "markdown": markdown, "portions": 2})
    )
    recipe_id = saved["result"]["structuredContent"]["recipe_id"]
    answer = client.request(_call(3, "read", {"target": "recipe", "recipe_id": recipe_id}))
    assert markdown.strip() in answer["result"]["structuredContent"]["recipe"]["markdown"]


def test_stdin_from_a_file_is_served_too(
    process_env: dict[str, str], tmp_path: Path, fake: FakeCooked
) -> None:
    """A regular file, which the event loop cannot watch, is served too. Its end comes long before
    the slow last call is done, and that call is answered all the same; a request reusing its id
    meanwhile is refused, as from a pipe."""
    fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=0.5)
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        _line(INITIALIZE)
        + _line(INITIALIZED)
        + _line({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        + _line(SLOW_READ)
        + _line(SLOW_READ)
    )
    with requests.open("rb") as stdin:
        process = _start(process_env, stdin)
        out, err = process.communicate(timeout=15)
    assert process.returncode == 0, err.decode(errors="replace")
    answers = [json.loads(line) for line in out.splitlines()]
    assert sorted(answer["id"] for answer in answers) == [INITIALIZE["id"], 2, 3, 3]
    by_id = {(answer["id"], "error" in answer): answer for answer in answers}
    assert by_id[2, False]["result"] == {}
    assert by_id[3, False]["result"]["structuredContent"]["recipe"]["id"] == "r-0001"
    assert "still running" in by_id[3, True]["error"]["message"]
    assert [r.path for r in fake.api_requests() if r.path == "/api/saved/r-0001"] == ["/api/saved/r-0001"]


def test_answers_the_copying_thread_cannot_write_are_reported_on_stderr(process_env: dict[str, str]) -> None:
    """A regular file or device on stdout is fed through a pipe by a thread: when writing to it
    fails (a full disk: /dev/full), the user is told on stderr; before, the answers were silently
    lost and nothing said why."""
    with open("/dev/full", "wb") as stdout:
        process = _start(process_env, subprocess.PIPE, stdout)
        _, err = process.communicate(_line(INITIALIZE) + _line(INITIALIZED), timeout=15)
    assert "could not write to stdout (No space left on device)" in err.decode(errors="replace"), err[-500:]


def test_a_call_still_running_when_stdin_ends_is_answered_before_exit(
    client: LineClient, fake: FakeCooked
) -> None:
    client.initialize()
    fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=0.5)

    client.send(_line(SLOW_READ))
    client.stdin.close()

    answer = client.receive()
    assert answer["id"] == 3
    assert answer["result"]["structuredContent"]["recipe"]["id"] == "r-0001"
    assert client.process.wait(timeout=15) == 0
    assert client.stdout.read() == b""


def test_a_call_the_client_cancelled_is_not_waited_for_when_stdin_ends(
    client: LineClient, fake: FakeCooked
) -> None:
    client.initialize()
    fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=30)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}

    client.send(_line(SLOW_READ) + _line(cancel))
    client.stdin.close()

    assert client.process.wait(timeout=10) == 0, "the server waited for a call that was cancelled"
    assert client.stdout.read() == b""


def test_stray_output_of_the_process_and_its_children_goes_to_stderr(
    process_env: dict[str, str], tmp_path: Path
) -> None:
    """As a chatty library would: print() and a child process writing to fd 1 during a tool call."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os, subprocess\n"
        "import cooked_mcp.cooked.client as client\n"
        "_get_recipe = client.CookedClient.get_recipe\n"
        "async def chatty(self, recipe_id):\n"
        "    print('stray print', flush=True)\n"
        "    os.write(1, b'stray write\\n')\n"
        "    subprocess.run(['echo', 'stray child'], check=True)\n"
        "    return await _get_recipe(self, recipe_id)\n"
        "client.CookedClient.get_recipe = chatty\n",
        encoding="utf-8",
    )
    process = _start({**process_env, "PYTHONPATH": str(site)})
    try:
        client = LineClient(process)
        client.initialize()
        answer = client.request(_call(2, "read", {"target": "recipe", "recipe_id": "r-0001"}))
        assert answer["result"].get("isError", False) is False
        stderr = client.finish()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    for stray in ("stray print", "stray write", "stray child"):
        assert stray in stderr
