"""Signals and Ctrl-C (issue 17 item 9, issue 16 item 1), against the real process.

No requirement speaks of signals; these cite the transport each one stops. Terminal
behaviour is driven through a pseudo-terminal, as a user at a shell would meet it.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from servers import COOKED_MCP, INITIALIZE, free_port, patched, server_env, write_limits

from cooked_fake import SEED_LOGIN, FakeCooked
from cooked_mcp.config.limits import Limits

SLOW_READ = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "read", "arguments": {"target": "recipe", "recipe_id": "r-0001"}},
}


@pytest.fixture
def process(process_env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    started = subprocess.Popen(
        [COOKED_MCP], env=process_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        yield started
    finally:
        if started.poll() is None:
            started.kill()
        started.wait()


def send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def receive(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.endswith(b"\n"), f"no answer: {line!r}"
    answer: dict[str, Any] = json.loads(line)
    return answer


def initialize(process: subprocess.Popen[bytes]) -> None:
    send(process, INITIALIZE)
    assert "result" in receive(process)
    send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def stderr_of(process: subprocess.Popen[bytes]) -> str:
    assert process.stderr is not None
    return process.stderr.read().decode(errors="replace")


@pytest.mark.req("server.TRANSPORT.1")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_lets_a_call_in_flight_finish_then_exits_128_plus_the_signal(
    process: subprocess.Popen[bytes], fake: FakeCooked, sig: signal.Signals
) -> None:
    """Before: SIGTERM killed the process with the call unanswered; SIGINT printed a 60-line traceback."""
    initialize(process)
    fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=1)
    send(process, SLOW_READ)
    fake.wait_for_request("GET", "/api/saved/r-0001")

    process.send_signal(sig)

    answer = receive(process)
    assert answer["id"] == 3 and answer["result"]["structuredContent"]["recipe"]["id"] == "r-0001"
    assert process.wait(timeout=15) == 128 + sig
    assert "Traceback" not in stderr_of(process)


@pytest.mark.req("server.TRANSPORT.1")
def test_a_stop_ends_serving_a_client_that_stopped_reading(
    process_env: dict[str, str], fake: FakeCooked
) -> None:
    """The client reads no answer, so its pipe fills with big ones. Before: the process waited
    for it to read for ever, SIGTERM or not; now it exits after the stop's grace and
    ``Limits.FLUSH_SECONDS`` (5 s, cut to 0.5 s here) for the answers left to be taken (twice:
    those being sent, then those buffered)."""
    assert Limits.FLUSH_SECONDS == 5.0  # the bound SECURITY.md names
    write_limits(process_env, stop_grace_seconds=0.5)
    recipe = fake.state.add_recipe("Big Pot", "1. Stir the pot slowly. " * 80_000, 2).id
    stuck = subprocess.Popen(
        patched("from cooked_mcp.config.limits import Limits; Limits.FLUSH_SECONDS = 0.5"),
        env=process_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        initialize(stuck)
        for request_id in range(10, 14):
            read = {"target": "recipe", "recipe_id": recipe}
            send(stuck, {**SLOW_READ, "id": request_id, "params": {"name": "read", "arguments": read}})
        fake.wait_for_request("GET", f"/api/saved/{recipe}")
        stuck.send_signal(signal.SIGTERM)
        assert stuck.wait(timeout=20) == 128 + signal.SIGTERM
        assert "Traceback" not in stderr_of(stuck)
    finally:
        if stuck.poll() is None:
            stuck.kill()
        stuck.wait()


@pytest.mark.req("server.TRANSPORT.1")
def test_a_signals_grace_is_the_stop_grace_whatever_the_end_of_input_grace(
    process_env: dict[str, str], fake: FakeCooked
) -> None:
    """A signal gives calls in flight ``stop_grace_seconds``, as over HTTP; the end-of-input grace,
    shorter here, does not cut it (before: the shorter of the two)."""
    write_limits(process_env, stop_grace_seconds=60, input_end_grace_seconds=0.2)
    process = subprocess.Popen(
        [COOKED_MCP], env=process_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        initialize(process)
        fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=1.5)
        send(process, SLOW_READ)
        fake.wait_for_request("GET", "/api/saved/r-0001")
        process.send_signal(signal.SIGTERM)
        answer = receive(process)
        assert process.wait(timeout=20) == 128 + signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert answer["id"] == 3 and "result" in answer, answer
    assert "Traceback" not in stderr_of(process)


#: The graces the cut-off test runs with (``[mcp.limits]``), not the real 3 s and 120 s: short, so
#: waiting them out takes a second; long, so that ending before it proves a second SIGINT cut it.
SHORT_GRACE = 1.0
LONG_GRACE = 60.0


def _stop(process: subprocess.Popen[bytes], how: str) -> None:
    if how == "end of input":
        assert process.stdin is not None
        process.stdin.close()
        return
    for sig in {"SIGTERM": [signal.SIGTERM], "SIGINT": [signal.SIGINT], "double SIGINT": [signal.SIGINT] * 2}[
        how
    ]:
        process.send_signal(sig)
        time.sleep(0.1)  # two signals, not one coalesced pending one


@pytest.mark.req("server.TRANSPORT.1")
@pytest.mark.parametrize(
    ("how", "status"),
    [
        ("SIGTERM", 128 + signal.SIGTERM),
        ("SIGINT", 128 + signal.SIGINT),
        ("double SIGINT", 128 + signal.SIGINT),
        ("end of input", 0),
    ],
)
def test_a_call_cut_off_by_a_stop_gets_exactly_one_answer_saying_its_change_may_have_been_made(
    process_env: dict[str, str], fake: FakeCooked, how: str, status: int
) -> None:
    """Issue 30 item 1. Before: id 42 was answered twice, -32603 "The server shut down..." then
    -32000 "Connection closed" (the SDK's answer as it cancelled the call); at the end of input
    only "Connection closed", which says nothing of the change. A second SIGINT cuts the grace short."""
    grace = LONG_GRACE if how == "double SIGINT" else SHORT_GRACE
    write_limits(process_env, stop_grace_seconds=grace, input_end_grace_seconds=grace)
    process = subprocess.Popen(
        [COOKED_MCP], env=process_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        initialize(process)
        fake.fail_with("slow", "GET", "/api/saved/r-0001", seconds=60)
        send(process, {**SLOW_READ, "id": 42})
        fake.wait_for_request("GET", "/api/saved/r-0001")

        started = time.monotonic()
        _stop(process, how)
        assert process.wait(timeout=SHORT_GRACE + 20) == status
        stopped_after = time.monotonic() - started
        assert process.stdout is not None
        answers = [json.loads(line) for line in process.stdout.read().splitlines()]
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()

    assert [answer["id"] for answer in answers] == [42], answers
    assert answers[0]["error"]["code"] == -32603
    assert "may or may not have been made" in answers[0]["error"]["message"]
    if how == "double SIGINT":
        assert stopped_after < LONG_GRACE / 3, "the second SIGINT did not cut the grace short"
    assert "Traceback" not in stderr_of(process)


class Terminal:
    """cooked-mcp on a pseudo-terminal as its controlling terminal, as at a shell prompt."""

    def __init__(self, process_env: dict[str, str], *args: str) -> None:
        self.pid, self.master = pty.fork()
        if self.pid == 0:  # the child
            # A shell gives what it starts Ctrl-C's default action, even when the test run itself
            # was started with SIGINT ignored (a background job in a script).
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execve(COOKED_MCP, [COOKED_MCP, *args], process_env)  # noqa: S606 - the real command, no shell
        self.output = b""

    def read_until(self, text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.output:
            assert time.monotonic() < deadline, f"no {text!r} within {timeout} s: {self.output!r}"
            if select.select([self.master], [], [], 0.5)[0]:
                try:
                    self.output += os.read(self.master, 4096)
                except OSError:  # the child has gone and closed the terminal
                    break
        return self.output.decode(errors="replace")

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def exit_status(self, timeout: float) -> int:
        """The exit status within ``timeout`` seconds (output read meanwhile), else kill and fail."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.2)[0]:
                with contextlib.suppress(OSError):
                    self.output += os.read(self.master, 4096)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"still running {timeout} s after Ctrl-C: {self.output!r}")

    def close(self) -> None:
        os.close(self.master)
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)


@pytest.mark.req("server.TRANSPORT.1", "server.IDENTITY.2")
def test_in_a_terminal_it_says_what_it_waits_for_and_one_ctrl_c_ends_it_quietly(
    process_env: dict[str, str], fake: FakeCooked
) -> None:
    """Before: nothing was printed; the first Ctrl-C did nothing, the second printed a traceback."""
    terminal = Terminal(process_env)
    try:
        banner = terminal.read_until("Ctrl-C")
        assert "waiting for an MCP client on stdin" in banner
        assert SEED_LOGIN in banner and fake.base_url in banner
        terminal.ctrl_c()
        status = terminal.exit_status(timeout=10)
    finally:
        terminal.close()
    assert status in (130, 0)
    assert b"Traceback" not in terminal.output and b"KeyboardInterrupt" not in terminal.output


@pytest.mark.req("server.TRANSPORT.2-2", "server.TRANSPORT.3")
def test_over_http_in_a_terminal_it_prints_its_url_and_one_ctrl_c_ends_it_quietly(
    process_env: dict[str, str], fake: FakeCooked
) -> None:
    """The banner a person reads names the account itself, as the stdio banner does (stderr is
    a terminal here; tests/transports/test_http_startup.py reads it from a file)."""
    port = free_port()
    terminal = Terminal(process_env, "--transport", "http", "--http-addr", f"127.0.0.1:{port}")
    try:
        banner = terminal.read_until("Press Ctrl-C to stop.")
        assert f"http://127.0.0.1:{port}/mcp" in banner
        assert f"(Cooked account {SEED_LOGIN} at {fake.base_url});" in banner
        terminal.ctrl_c()
        status = terminal.exit_status(timeout=10)
    finally:
        terminal.close()
    assert status in (130, 0)
    assert b"Traceback" not in terminal.output and b"KeyboardInterrupt" not in terminal.output


@pytest.mark.req("server.TRANSPORT.1", "recipes.SAVE.3")
@pytest.mark.parametrize(("how", "status"), [("end of input", 0), ("SIGTERM", 128 + signal.SIGTERM)])
def test_a_stop_lets_a_background_import_finish_within_its_grace(
    tmp_path: Path, fake: FakeCooked, how: str, status: int
) -> None:
    """An import answered "still running" goes on in the background: a stop (end of stdin, a signal)
    waits for it within the same grace as for calls, instead of breaking it off. Before: the process
    exited at once and cooked-mcp's own request to Cooked was cut off."""
    process_env = server_env(
        tmp_path / "home",
        fake.base_url,
        COOKED_MCP_IMPORT_ANSWER_SECONDS="0.3",
        COOKED_MCP_LOG_LEVEL="info",
    )
    # The grace is long and the import short: the stop waits for the import, not for the grace.
    write_limits(process_env, stop_grace_seconds=LONG_GRACE, input_end_grace_seconds=LONG_GRACE)
    fake.fail_with("slow", "POST", "/api/new", seconds=0.5)
    url = "https://example.org/recipes/background-stew"
    started = subprocess.Popen(
        [COOKED_MCP], env=process_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        initialize(started)
        send(
            started,
            {**SLOW_READ, "params": {"name": "save_recipe", "arguments": {"source": "url", "url": url}}},
        )
        running = receive(started)["result"]["structuredContent"]
        assert running["import_running"] is True
        assert "while this server process runs" in running["next_step"]  # what the stop keeps
        assert "If the server is stopped or restarted meanwhile" in running["next_step"]

        _stop(started, how)

        assert started.wait(timeout=LONG_GRACE / 3) == status
        log = stderr_of(started)
    finally:
        if started.poll() is None:
            started.kill()
        started.wait()
    assert "every change sent to Cooked has ended" in log, log
    assert "ended with an error" not in log and "Traceback" not in log, log
    assert [r.status for r in fake.api_requests() if r.path == "/api/new"] == [200]
