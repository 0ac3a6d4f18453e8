"""A question without a usable answer, through the real cooked-mcp process on raw pipes (the SDK's
client would neither leave a question unanswered nor send a malformed answer): none in time (the
setting shortened), a malformed answer, and stdin ending with questions pending. Each ends "not
confirmed" and sends nothing to Cooked, never a failure inviting a retry, and never holds the
process for the end of input's grace."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from servers import COOKED_MCP, write_limits

from cooked_fake import FakeCooked

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
NOT_CONFIRMED = "; not confirmed: nothing was sent to Cooked. Do not call delete_recipe for this again"


class Pipes:
    """A cooked-mcp process whose client asks the person, spoken to line by line."""

    def __init__(self, env: dict[str, str], stderr: Path) -> None:
        self.stderr = stderr
        with stderr.open("wb") as errors:
            self.process = subprocess.Popen(
                [COOKED_MCP], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors
            )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        """The next line, within 15 s: a call whose question is never answered must fail, not hang."""
        line = self.lines.get(timeout=15)
        assert line.endswith(b"\n"), f"no message: {line!r}"
        message: dict[str, Any] = json.loads(line)
        return message

    def initialize(self) -> None:
        self.send(INITIALIZE)
        assert "result" in self.receive()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def delete(self, request_id: int, recipe_id: str = "r-0001") -> dict[str, Any]:
        """Call delete_recipe; returns the question the server asks."""
        arguments = {"recipe_id": recipe_id}
        self.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": "delete_recipe", "arguments": arguments},
            }
        )
        question = self.receive()
        assert question.get("method") == "elicitation/create", question
        return question

    def result_text(self, request_id: int) -> str:
        """The call's answer, after any notice that a question is withdrawn."""
        answer = self.receive()
        while answer.get("method") == "notifications/cancelled":
            answer = self.receive()
        assert answer.get("id") == request_id, answer
        result = answer["result"]
        assert result["isError"] is True, result
        text: str = result["content"][0]["text"]
        return text


@pytest.fixture
def started(process_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[float], Pipes]]:
    """Starts an initialized process whose questions wait the given seconds (the setting)."""
    processes: list[Pipes] = []

    def start(seconds: float) -> Pipes:
        write_limits(process_env, confirm_answer_seconds=seconds)
        served = Pipes(process_env, tmp_path / "stderr")
        processes.append(served)
        served.initialize()
        return served

    yield start
    for served in processes:
        if served.process.poll() is None:
            served.process.kill()
        served.process.wait()
        assert "Traceback" not in served.stderr.read_text()


@pytest.fixture
def pipes(started: Callable[[float], Pipes]) -> Pipes:
    return started(0.5)


def deletes(fake: FakeCooked) -> int:
    return sum(1 for r in fake.api_requests(renewals=False) if r.method == "DELETE")


@pytest.mark.req("extensions.CONFIRMATION.13", "extensions.CONFIRMATION.8")
def test_a_question_unanswered_in_time_ends_not_confirmed(pipes: Pipes, fake: FakeCooked) -> None:
    """Before: the call waited for an answer for ever."""
    pipes.delete(1)
    text = pipes.result_text(1)  # no answer sent: the setting's half second ends the question
    assert text.startswith(
        'The question had no answer within 0.5 seconds, so the recipe "Shakshuka" (r-0001) was not deleted'
        + NOT_CONFIRMED
    ), text
    assert "turn these questions off" not in text
    assert deletes(fake) == 0


MALFORMED: tuple[dict[str, Any], ...] = (
    {"result": {"action": "accept", "content": {"confirm": [1, 2]}}},
    {"result": {"action": "accept", "content": []}},
    {"result": {"action": "yes"}},
    {"error": {"code": -32603, "message": "the client broke"}},
)


@pytest.mark.req("extensions.CONFIRMATION.13", "extensions.CONFIRMATION.8")
def test_a_malformed_answer_ends_not_confirmed_never_as_a_failure(pipes: Pipes, fake: FakeCooked) -> None:
    """Before: "delete_recipe failed inside cooked-mcp ... Try again", inviting a retry of a
    deletion the person never confirmed."""
    for request_id, answer in enumerate(MALFORMED, start=101):
        question = pipes.delete(request_id)
        pipes.send({"jsonrpc": "2.0", "id": question["id"], **answer})
        text = pipes.result_text(request_id)
        assert text.startswith(
            'Your client\'s answer to the question could not be read, so the recipe "Shakshuka" (r-0001) '
            "was not deleted" + NOT_CONFIRMED
        ), (answer, text)
        assert "failed" not in text and "Try again" not in text
    assert deletes(fake) == 0


@pytest.mark.req("extensions.CONFIRMATION.13", "server.TRANSPORT.1")
def test_questions_pending_when_stdin_ends_end_at_once(
    started: Callable[[float], Pipes], fake: FakeCooked
) -> None:
    """Twenty calls wait for their questions' answers when stdin ends: each is answered not
    confirmed and the process exits at once. Before: it waited the whole end-of-input grace
    (120 s) with the questions unanswered. The question timeout here is far longer than the wait."""
    pipes = started(600)
    for request_id in range(1, 21):
        pipes.delete(request_id, f"r-{request_id:04d}")
    assert pipes.process.stdin is not None
    pipes.process.stdin.close()
    assert pipes.process.wait(timeout=15) == 0
    written = [json.loads(line) for line in iter(partial(pipes.lines.get, timeout=15), b"")]
    answers = [message for message in written if "id" in message]  # after each question's withdrawal
    assert sorted(answer["id"] for answer in answers) == list(range(1, 21))
    assert all(
        answer["result"]["content"][0]["text"].startswith(
            "The session ended before the question was answered"
        )
        and NOT_CONFIRMED in answer["result"]["content"][0]["text"]
        for answer in answers
    ), answers
    assert deletes(fake) == 0
