"""Big answers have a memory bound: 20 concurrent reads of a 7 MiB recipe over HTTP.

Before the answer budget (``mcp.limits.answers_in_flight_mib``) every read held its 7 MiB from
Cooked, the result made of it (text and structured content) and the JSON written out, all at
once: the process grew by ~450 MiB. Now at most 16 MiB of Cooked's answers are held at a time,
each until its call's response is written, so the other reads wait. SECURITY.md states the two
figures asserted here: the peak (VmHWM) grows by at most ``MAX_PEAK_GROWTH_MIB`` over the start,
and once every client has closed its session, resident memory comes back to within
``MAX_LEFT_MIB`` of the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hardening_support import FIGURES
from servers import HttpServer, http_server, open_session, open_session_async, server_env, write_limits

from cooked_fake import FakeCooked
from cooked_mcp.config.limits import Limits
from cooked_mcp_runtime.results import (
    CURRENT_CALL,
    HANDED_OVER,
    AnswerBudget,
    HandedOver,
    ToolCall,
    ToolError,
)

RECIPE_BYTES = 7 * 1024 * 1024
READERS = 20
MAX_PEAK_GROWTH_MIB = 256
MAX_LEFT_MIB = 64
#: So that no read of the burst is refused on a busy machine: this test is about memory.
WAIT_SECONDS = 20  # the most it may be: part of the read's own 40 s deadline


def memory_mib(pid: int) -> dict[str, int]:
    """VmRSS (resident now) and VmHWM (its peak so far) of process ``pid``, in MiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {key: int(fields[key].split()[0]) // 1024 for key in ("VmRSS", "VmHWM")}


@pytest.fixture
def big_recipe(fake: FakeCooked) -> str:
    steps = "## Steps\n" + "1. Stir the pot slowly. " * (RECIPE_BYTES // 24)
    return fake.state.add_recipe("Big Pot", steps, 2).id


@contextlib.contextmanager
def serve(fake: FakeCooked, home: Path, **limits: float) -> Iterator[HttpServer]:
    env = server_env(home, fake.base_url)
    write_limits(env, **limits)
    with http_server(env) as running:
        yield running


def read_call(recipe_id: str) -> dict[str, Any]:
    arguments = {"target": "recipe", "recipe_id": recipe_id}
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "read", "arguments": arguments},
    }


async def read_over_http(url: str, recipe_id: str) -> dict[str, Any]:
    """One client's session: initialize, read the recipe, end the session (DELETE); the tool result.

    Plain httpx, not the SDK client: that one refuses a server-sent event over 1 MiB, and the
    server may answer in either JSON or SSE."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=300)) as http:
        headers = await open_session_async(http, url)
        answer = await http.post(url, headers=headers, json=read_call(recipe_id))
        await http.delete(url, headers=headers)
    body = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
        body = next(chunk for chunk in data if '"result"' in chunk or '"error"' in chunk)
    return dict(json.loads(body)["result"])


@pytest.mark.req("extensions.MEMORY.1", "extensions.MEMORY.3")
def test_a_burst_of_big_reads_stays_under_the_bound_and_gives_the_memory_back(
    fake: FakeCooked, big_recipe: str, tmp_path: Path
) -> None:
    with serve(fake, tmp_path, answers_wait_seconds=WAIT_SECONDS) as server:
        start = memory_mib(server.process.pid)["VmRSS"]

        async def burst() -> list[dict[str, Any]]:
            return await asyncio.gather(*(read_over_http(server.url, big_recipe) for _ in range(READERS)))

        results = asyncio.run(burst())
        peak = memory_mib(server.process.pid)["VmHWM"]
        left = memory_mib(server.process.pid)["VmRSS"]
        deadline = time.monotonic() + 10
        while left > start + MAX_LEFT_MIB and time.monotonic() < deadline:
            time.sleep(0.2)
            left = memory_mib(server.process.pid)["VmRSS"]

    FIGURES.note("answer_memory_mib", {"start": start, "peak": peak, "left": left, "readers": READERS})
    markdown = fake.state.recipe(big_recipe).description
    assert all(not result.get("isError") for result in results), results[0]["content"][0]["text"][:300]
    assert all(result["structuredContent"]["recipe"]["markdown"] == markdown for result in results)
    figures = f"start {start} MiB, peak {peak} MiB, left {left} MiB"
    assert peak - start <= MAX_PEAK_GROWTH_MIB, figures
    assert left - start <= MAX_LEFT_MIB, figures


@pytest.mark.req("extensions.MEMORY.1", "extensions.MEMORY.2")
def test_a_read_finding_no_room_while_a_client_leaves_its_answer_unread_is_refused_in_time(
    fake: FakeCooked, big_recipe: str, tmp_path: Path
) -> None:
    """The first client never reads its answer, so its 7 MiB stay held (over HTTP until written)."""
    with serve(fake, tmp_path, answers_in_flight_mib=8, answers_wait_seconds=0.5) as server:
        headers = open_session(server.url)
        body = json.dumps(read_call(big_recipe)).encode()
        request = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: {len(body)}\r\n"
        request += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        # A receive buffer this small before connecting, or the kernel (up to 32 MiB of window on
        # Linux) takes the whole answer off the server's hands at once.
        with socket.socket() as stalled:
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
            stalled.connect(("127.0.0.1", server.port))
            stalled.sendall(request.encode() + b"\r\n" + body)
            assert stalled.recv(12) == b"HTTP/1.1 200"  # its answer is made and on its way: room is held
            began = time.monotonic()
            second = asyncio.run(read_over_http(server.url, big_recipe))
            waited = time.monotonic() - began
        text = second["content"][0]["text"]
        assert second.get("isError"), text[:200]
        assert text.startswith(
            "Nothing was changed: Cooked's answer (7.0 MiB) did not fit within 0.5 s in the 8 MiB"
        )
        assert "mcp.limits.answers_in_flight_mib" in text and "Try again in a moment" in text
        assert 0.5 <= waited < 10, waited

        # Once the first client has gone, its answer's room is free: the same read fits again.
        assert not asyncio.run(read_over_http(server.url, big_recipe)).get("isError")


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    """A tool call's progress reporter, for a call made by hand."""


@pytest.mark.anyio
@pytest.mark.req("extensions.MEMORY.1", "extensions.MEMORY.2")
async def test_a_call_holds_what_it_read_until_handed_over_and_a_task_it_leaves_behind_holds_nothing() -> (
    None
):
    """The budget's own rules, in this process: a charge is trued up to the bytes read, one that
    cannot fit is refused after the wait, and handing the answer over frees everything; a write
    the call left running in the background (same context) then reads without holding room."""
    mib = 1024 * 1024
    budget = AnswerBudget()
    budget.configure(8, 0.1, 64 * 1024)
    call = ToolCall(tool="read", report_progress=_no_progress)
    token = CURRENT_CALL.set(call)
    try:
        budget.keep(await budget.hold(5 * mib), 3 * mib)  # declared 5 MiB, 3 MiB came
        assert budget.held == 3 * mib
        with pytest.raises(
            ToolError, match=r"^Nothing was changed: Cooked's answer \(6\.0 MiB\) did not fit"
        ):
            await budget.hold(6 * mib)
        assert budget.held == 3 * mib
        started = await budget.hold(2 * mib)  # a background write's answer, begun before the call's own
        budget.hand_over(call, None)  # stdio: no HTTP response to wait for
        assert budget.held == 0
        budget.keep(started, mib)  # ... and ended after it
        budget.keep(await budget.hold(8 * mib), mib)  # the next one holds nothing either
        assert budget.held == 0
    finally:
        CURRENT_CALL.reset(token)


@pytest.mark.anyio
@pytest.mark.req("extensions.MEMORY.1")
async def test_over_http_only_an_answer_of_64_kib_or_more_stays_held_until_its_response_is_written() -> None:
    """A smaller one is freed when handed to the SDK, as over stdio: holding it until written
    cost every HTTP call an extra write of its response, for a few KiB at most per call."""
    budget = AnswerBudget()
    budget.configure(8, 0.1, Limits.SMALL_ANSWER_BYTES)
    handed = HandedOver()
    scope = {"type": "http", HANDED_OVER: handed}
    small, big = (ToolCall(tool="read", report_progress=_no_progress) for _ in range(2))
    for call, size in ((small, Limits.SMALL_ANSWER_BYTES - 1), (big, Limits.SMALL_ANSWER_BYTES)):
        token = CURRENT_CALL.set(call)
        try:
            await budget.hold(size)
        finally:
            CURRENT_CALL.reset(token)
        budget.hand_over(call, scope)
    assert handed.calls == [big]
    assert budget.held == Limits.SMALL_ANSWER_BYTES


@pytest.mark.req("extensions.MEMORY.1", "extensions.MEMORY.2")
def test_a_call_whose_client_went_away_mid_read_gives_its_room_back(
    fake: FakeCooked, big_recipe: str, tmp_path: Path
) -> None:
    """The client drops its connection while Cooked's 7 MiB answer trickles in: the call is
    cancelled after its HTTP response has ended, and what it held must not stay held for ever
    (it did: every later big read was refused). The next read waits for that room, up to 5 s."""
    with serve(fake, tmp_path, answers_in_flight_mib=8, answers_wait_seconds=5) as server:
        headers = open_session(server.url)
        fake.fail_with("trickle", path=f"/api/saved/{big_recipe}", seconds=0.05)
        body = json.dumps(read_call(big_recipe)).encode()
        request = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: {len(body)}\r\n"
        request += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        with socket.socket() as leaving:
            leaving.connect(("127.0.0.1", server.port))
            leaving.sendall(request.encode() + b"\r\n" + body)
            fake.wait_for_request("GET", f"/api/saved/{big_recipe}")
            time.sleep(0.5)  # the answer's head is in, its room held, its body trickling
        fake.clear_faults()
        again = asyncio.run(read_over_http(server.url, big_recipe))
    assert not again.get("isError"), again["content"][0]["text"][:300]
