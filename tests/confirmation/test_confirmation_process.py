"""Confirmation through the real cooked-mcp process over stdio, with the SDK's own client, in both
protocol eras: the person accepts (the change reaches Cooked exactly once), declines or cancels
(nothing reaches Cooked), or the client cannot ask (exactly as without confirmation).

Each kind of client (one that asks the person, one that cannot ask, one talking to a server with
the questions turned off) is one real process, shared by its cases: asking in the legacy era (the
question is a request from the server crossing the pipes), the other two in 2026-07-28, so each
era meets the real process. The kind's cases in the other era run the same cases on the same
settings in this process (``IN_MEMORY``); over HTTP both eras ask through the real process. A
case resets the fake, lets the server log in again with a read (never asked about), then makes
the one change."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path

import mcp_types as types
import pytest
from confirm_support import ANSWERS, ERAS, LOSSES, Loss, Person
from mcp import Client
from servers import HTTP_TOKEN, HttpServer, era_client, http_client, server_env
from sessions import text_of

from cooked_fake import FakeCooked

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("era", ERAS)]
LOSS_CASES = [pytest.param(loss, id=loss.label) for loss in LOSSES]
#: The three servers per era: the person is asked, the client cannot ask, the setting is off.
ASKS, CANNOT_ASK, SETTING_OFF = "asks", "cannot ask", "setting off"
Processes = dict[tuple[str, str], tuple[Client, Person]]
#: The (era, kind) served in this process, by the application the process would build from the
#: same environment: a per-era variant of what the real process shows in the other era.
IN_MEMORY = {("2026-07-28", ASKS), ("legacy", CANNOT_ASK), ("legacy", SETTING_OFF)}


async def process(
    stack: AsyncExitStack, fake: FakeCooked, home: Path, era: str, kind: str, person: Person | None
) -> Client:
    """A connected client of a real process of the kind (or, for ``IN_MEMORY``, of the application
    the process would build from the same environment, in this process)."""
    env = {"COOKED_MCP_CONFIRM_CHANGES": "false"} if kind == SETTING_OFF else {}
    environment = server_env(home, fake.base_url, **env)
    in_memory = (era, kind) in IN_MEMORY
    return await era_client(stack, environment, era, in_memory=in_memory, elicitation_callback=person)


@pytest.fixture(scope="module")
async def processes(
    running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Processes]:
    """(era, kind) -> a connected process and the person it asks (a kind that cannot ask keeps one
    unused, so its cases can check nobody was asked)."""
    home = tmp_path_factory.mktemp("confirm")
    async with AsyncExitStack() as stack:
        served: Processes = {}
        for era in ERAS:
            for kind in (ASKS, CANNOT_ASK, SETTING_OFF):
                person = Person("decline")
                asked = None if kind == CANNOT_ASK else person
                client = await process(stack, running_fake, home, era, kind, asked)
                served[era, kind] = (client, person)
        yield served


async def ready(processes: Processes, fake: FakeCooked, era: str, kind: str) -> tuple[Client, Person]:
    """The shared process logged in on the freshly reset fake, its person's questions forgotten."""
    client, person = processes[era, kind]
    await client.call_tool("read", {"target": "recipes"})  # the login, out of the way
    person.questions.clear()
    fake.clear_requests()
    return client, person


def outcome(result: types.CallToolResult) -> tuple[bool, str]:
    """Whether the call failed, and the text the agent sees."""
    return bool(result.is_error), text_of(result)


@pytest.mark.req(
    "extensions.CONFIRMATION.1",
    "extensions.CONFIRMATION.3",
    "extensions.CONFIRMATION.5",
    "extensions.CONFIRMATION.7",
    "extensions.CONFIRMATION.8",
    "extensions.CONFIRMATION.10",
    "extensions.CONFIRMATION.14",
)
@pytest.mark.parametrize("answer", ["decline", "cancel"])
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_a_declined_or_cancelled_change_sends_nothing_to_cooked(
    processes: Processes,
    fake: FakeCooked,
    era: str,
    answer: str,
    loss: Loss,
) -> None:
    client, person = await ready(processes, fake, era, ASKS)
    person.action = answer  # type: ignore[assignment]
    is_error, text = outcome(await loss.call(client))
    assert loss.sent(fake) == 0
    why = "You said no" if answer == "decline" else "You cancelled the question"
    # One sentence for the person, then the agent's instruction; this client answers at once, so
    # the way to turn the questions off follows, as one sentence without a stray bracket.
    assert is_error and text.startswith(
        f"{why}, so {loss.unchanged}; nothing was sent to Cooked. Do not call "
    ), text
    assert "unless the person asks for it again. The answer came too fast for a person" in text
    assert text.endswith(
        "COOKED_MCP_CONFIRM_CHANGES=false (or mcp.confirm_changes = false in the config file)."
    ), text
    [question] = person.questions
    assert all(words in question for words in loss.named), question
    assert question.endswith(f" {ANSWERS}"), question


@pytest.mark.req(
    "extensions.CONFIRMATION.1",
    "extensions.CONFIRMATION.6",
    "extensions.CONFIRMATION.7",
    "extensions.CONFIRMATION.8",
)
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_an_accepted_change_reaches_cooked_exactly_once(
    processes: Processes,
    fake: FakeCooked,
    era: str,
    loss: Loss,
) -> None:
    client, person = await ready(processes, fake, era, ASKS)
    person.action = "accept"
    is_error, text = outcome(await loss.call(client))
    assert not is_error, text
    assert loss.sent(fake) == 1
    assert len(person.questions) == 1


@pytest.mark.req("extensions.CONFIRMATION.9", "recipes.DELETE.1", "shopping-list.CLEAR.1")
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_a_client_without_elicitation_is_not_asked_and_sends_what_it_always_sent(
    processes: Processes,
    fake: FakeCooked,
    era: str,
    loss: Loss,
) -> None:
    client, person = await ready(processes, fake, era, CANNOT_ASK)
    is_error, _ = outcome(await loss.call(client))
    assert not is_error
    assert [(r.method, r.path) for r in fake.api_requests(renewals=False)] == [(loss.method, loss.path)]
    assert person.questions == []


@pytest.mark.req("extensions.CONFIRMATION.10")
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_the_setting_turns_the_questions_off(
    processes: Processes,
    fake: FakeCooked,
    era: str,
    loss: Loss,
) -> None:
    client, person = await ready(processes, fake, era, SETTING_OFF)
    is_error, text = outcome(await loss.call(client))
    assert not is_error, text
    assert person.questions == [] and loss.sent(fake) == 1


@pytest.mark.req(
    "extensions.CONFIRMATION.5",
    "extensions.CONFIRMATION.6",
    "extensions.CONFIRMATION.7",
    "extensions.CONFIRMATION.8",
    "extensions.CONFIRMATION.9",
)
async def test_over_http_declined_sends_nothing_accepted_once_and_no_capability_as_before(
    server: HttpServer, fake: FakeCooked, era: str
) -> None:
    """Over HTTP a tool call of a client that declared elicitation is answered as a stream, so the
    question can reach the person (transports/private_reaches.py)."""
    delete = LOSSES[0]
    for answer, sent in (("decline", 0), ("cancel", 0), ("accept", 1)):
        fake.reset()
        client = http_client(server.url, HTTP_TOKEN)
        client.elicitation_callback, client.mode = Person(answer), era  # type: ignore[assignment]
        async with client:
            is_error, _ = outcome(await delete.call(client))
        assert is_error == (answer != "accept") and delete.sent(fake) == sent, answer
    fake.reset()
    client = http_client(server.url, HTTP_TOKEN)
    client.mode = era
    async with client:
        is_error, _ = outcome(await delete.call(client))
    assert not is_error and delete.sent(fake) == 1
