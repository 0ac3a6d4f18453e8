"""Faults from Cooked, aimed at every request of every tool: each is ONE concise, recoverable tool error.

For each tool call (and, when a call makes several requests, each request that can fail)
and each way a real Cooked or a proxy in front of it misbehaves, the call must:

- come back as one MCP tool error (``isError``), not a protocol error, crash or hang;
- say what happened (status, Cooked's code and message when Cooked gave them) and what to
  do next, in at most MAX_ERROR_CHARS characters, whatever the size of Cooked's answer;
- leave the server able to serve the same call again.

A 200 with unknown fields everywhere must simply succeed. The 10 MB error body is checked
for memory too: the call must never hold it whole. A redirect to another host must not be
followed, so neither the session cookie nor the password ever goes there: nothing may even
connect to 127.0.0.2, where a listener waits to catch it.
"""

from __future__ import annotations

import contextlib
import re
import socket
import tracemalloc
from collections.abc import AsyncIterator, Iterator

import pytest
from hardening_support import (
    FIGURES,
    LOGIN_PATH,
    MAX_ERROR_CHARS,
    OPERATIONS,
    Guard,
    Operation,
    recoverable_error,
    session,
    succeeded,
)
from mcp import Client
from servers import free_port
from sessions import call, until

import cooked_mcp.handlers.writes as writes
from cooked_fake import FakeCooked

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("one_session_cookie")]

#: The faults of the task, by the name the figures use. "connection_refused" and "slow" are not
#: fake fault kinds: they need a stopped server and a small client timeout respectively.
FAULTS = (
    "status_500_json",
    "html_502",
    "empty_503",
    "huge_error",
    "cut_off",
    "malformed_json",
    "wrong_shape",
    "extra_fields",
    "rate_limited",
    "rate_limited_no_retry_after",
    "slow",
    "redirect_other_host",
)
#: The client timeout for the "slow" fault, and how long the fake sleeps before answering.
SMALL_TIMEOUT = 0.2
SLOW_SECONDS = 0.4
#: Peak Python allocations allowed while a 10 MiB error body arrives.
MEMORY_CEILING = 4 * 1024 * 1024  # typically ~0.4 MiB; reading the body whole would cost over 10 MiB


@pytest.fixture(autouse=True)
def outcomes_forgotten_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case resets the fake and makes the same change again; the server would otherwise
    answer it with the earlier case's kept outcome (an import, or a change whose answer was
    lost: handlers/writes.py) instead of reaching the fault."""
    monkeypatch.setattr(writes, "KEEP_SECONDS", -1.0)


@pytest.fixture(scope="module")
async def impatient_client(running_fake: FakeCooked) -> AsyncIterator[Client]:
    """A session whose client gives up on Cooked after SMALL_TIMEOUT, for the "slow" fault."""
    async with session(
        running_fake, read_timeout=SMALL_TIMEOUT, import_read_timeout=SMALL_TIMEOUT
    ) as connected:
        yield connected


#: What each fault's cases prove: every fault but extra_fields is a recoverable error (ERRORS.1 and .5,
#: tools.RESPONSES.6); the rest is what that fault's error must carry.
RECOVERABLE = ("api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6")
PROVES: dict[str, tuple[str, ...]] = {
    "status_500_json": (*RECOVERABLE, "api-client.ERRORS.2", "api-client.ERRORS.3", "api-client.ERRORS.4"),
    "html_502": (*RECOVERABLE, "api-client.ERRORS.2"),
    "empty_503": (*RECOVERABLE, "api-client.ERRORS.2"),
    "huge_error": (*RECOVERABLE, "api-client.ERRORS.2", "api-client.LIMITS.1"),
    "cut_off": RECOVERABLE,
    "malformed_json": (*RECOVERABLE, "api-client.RESPONSES.3"),
    "wrong_shape": (*RECOVERABLE, "api-client.RESPONSES.3"),
    "extra_fields": ("api-client.RESPONSES.2",),
    "rate_limited": (*RECOVERABLE, "api-client.ERRORS.2", "api-client.ERRORS.3"),
    "rate_limited_no_retry_after": (*RECOVERABLE, "api-client.ERRORS.2", "api-client.ERRORS.3"),
    "slow": RECOVERABLE,
    "redirect_other_host": (*RECOVERABLE, "api-client.ERRORS.2", "api-client.ERRORS.6"),
}
CASES = [
    pytest.param(op, fault, id=f"{op.label}-{fault}", marks=pytest.mark.req(*PROVES[fault]))
    for op in OPERATIONS
    for fault in FAULTS
]


@contextlib.contextmanager
def catcher_on_127_0_0_2(port: int) -> Iterator[socket.socket]:
    """A listener where the redirect points: any connection that arrives there is a leak."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.2", port))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def caught_connection(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def inject(fake: FakeCooked, op: Operation, fault: str) -> None:
    if fault == "status_500_json":
        body = {"code": "INTERNAL_ERROR", "message": "Database on fire"}
        fake.fail(status=500, body=body, **op.aim())
    elif fault == "slow":
        fake.fail_with("slow", seconds=SLOW_SECONDS, **op.aim())
    else:
        fake.fail_with(fault, **op.aim())


def check_error_names_the_fault(text: str, fault: str) -> None:
    """What the agent needs from each fault to choose its next move."""
    expected: dict[str, tuple[str, ...]] = {
        "status_500_json": ("500", "INTERNAL_ERROR", "Database on fire", "retry later"),
        "html_502": ("502", "retry later"),
        "empty_503": ("503", "retry later"),
        "huge_error": ("500", "retry later"),
        "cut_off": ("broke off the connection", "retry"),
        "malformed_json": ("not valid JSON", "retry once"),
        "wrong_shape": ("not a JSON object", "retry once"),
        "rate_limited": ("429", "RATE_LIMITED", "wait 7 seconds"),
        "rate_limited_no_retry_after": ("429", "RATE_LIMITED", "wait a little"),
        "slow": ("did not answer in time", "retry"),
        "redirect_other_host": ("302", "redirected", "127.0.0.2", "COOKED_BASE_URL"),
        "connection_refused": ("could not be reached", "retry later"),
    }
    for fragment in expected[fault]:
        assert fragment in text, f"{fault}: {fragment!r} missing from: {text}"
    assert_says_it_failed(text)


#: How an error result opens, so an agent whose client drops isError (the OpenAI Agents SDK,
#: LangChain) still reads, in the first words, that the call failed.
FAILURE_OPENINGS = re.compile(
    r"^(Invalid arguments for \w+:|Cooked (rejected|failed)|The [\w ]+ request failed:|Nothing was (sent|changed)|"
    r"\w+ failed inside cooked-mcp|cooked-mcp could not)"
)


def assert_says_it_failed(text: str) -> None:
    assert FAILURE_OPENINGS.match(text), f"the error does not open by saying the call failed: {text[:120]}"


@pytest.mark.req("api-client.VERIFICATION.1")
@pytest.mark.parametrize(("op", "fault"), CASES)
async def test_a_cooked_fault_is_one_concise_recoverable_tool_error(
    fake: FakeCooked,
    network_guard: Guard,
    client: Client,
    impatient_client: Client,
    op: Operation,
    fault: str,
) -> None:
    if fault == "slow":
        client = impatient_client
    with contextlib.ExitStack() as stack:
        catcher = (
            stack.enter_context(catcher_on_127_0_0_2(fake.port)) if fault == "redirect_other_host" else None
        )
        refused_before = len(network_guard.refused)
        inject(fake, op, fault)

        if fault == "huge_error":
            tracemalloc.start()
            try:
                result = await call(client, op.tool, op.arguments)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < MEMORY_CEILING, f"{peak} bytes allocated at peak while a 10 MiB error arrived"
        else:
            result = await call(client, op.tool, op.arguments)

        aimed = [r for r in fake.requests if r.method == op.method and (op.path is None or r.path == op.path)]
        assert aimed, f"the fault was never reached: {[(r.method, r.path) for r in fake.requests]}"
        if fault == "extra_fields":
            succeeded(result)
        else:
            text = recoverable_error(result)
            check_error_names_the_fault(text, fault)
            if fault in ("slow", "cut_off") and op.changes:
                # The answer was lost, not the request: repeating it blindly could save a recipe twice.
                assert "may have made the change" in text or "may still finish" in text, text
            # One error, one request: the failed request was not silently repeated.
            assert len(aimed) == 1
        if catcher is not None:
            assert not caught_connection(catcher), "a request followed the redirect to 127.0.0.2"
            assert len(network_guard.refused) == refused_before

        if fault == "slow":  # the fake answers late; let it finish before the state is reset
            await until(fake, lambda requests: all(r.status for r in requests), seconds=5)
        fake.reset()
        succeeded(await call(client, op.tool, op.arguments))
    FIGURES.add("faults", f"kind:{fault}")
    FIGURES.add("faults", "cases_survived")


CONNECTION_CASES = [pytest.param(op, id=op.label) for op in OPERATIONS]


@pytest.fixture(scope="module")
def restartable_fake() -> Iterator[FakeCooked]:
    """A fake on a fixed port, so it can be stopped (connection refused) and started again there."""
    fake = FakeCooked(port=free_port())
    with fake:
        yield fake


@pytest.mark.req(
    "api-client.ERRORS.1", "api-client.ERRORS.5", "tools.RESPONSES.6", "api-client.VERIFICATION.1"
)
@pytest.mark.parametrize("op", CONNECTION_CASES)
async def test_a_refused_connection_is_a_recoverable_error_and_the_next_call_works(
    restartable_fake: FakeCooked, op: Operation
) -> None:
    fake = restartable_fake
    fake.reset()
    async with session(fake) as client:
        if op.path != LOGIN_PATH:
            # Logged in and working; then Cooked goes away mid-session.
            succeeded(await call(client, "read", {"target": "shopping_list"}))
        base_url = fake.base_url
        fake.stop()
        try:
            text = recoverable_error(await call(client, op.tool, op.arguments))
            check_error_names_the_fault(text, "connection_refused")
            assert base_url in text  # the agent (or user) can see where the server was looking
        finally:
            fake.start()
        succeeded(await call(client, op.tool, op.arguments))
    FIGURES.add("faults", "kind:connection_refused")
    FIGURES.add("faults", "cases_survived")


@pytest.mark.req(
    "authentication.SESSION.6",
    "authentication.LOGIN.4",
    "authentication.SECRETS.3",
    "tools.RESPONSES.6",
    "authentication.VERIFICATION.1",
)
@pytest.mark.parametrize("op", [pytest.param(op, id=op.label) for op in OPERATIONS if op.path != LOGIN_PATH])
async def test_a_401_that_survives_the_one_re_login_is_an_auth_error_not_a_loop(
    fake: FakeCooked, op: Operation
) -> None:
    fake.reject_sessions = True
    async with session(fake) as client:  # a fresh session: exactly one first login, then one re-login
        text = recoverable_error(await call(client, op.tool, op.arguments))
        assert fake.login_count == 2
        assert "401" in text and "login" in text
        assert len(text) <= MAX_ERROR_CHARS
        fake.reject_sessions = False
        succeeded(await call(client, op.tool, op.arguments))
    FIGURES.add("faults", "kind:persistent_401")
    FIGURES.add("faults", "cases_survived")
