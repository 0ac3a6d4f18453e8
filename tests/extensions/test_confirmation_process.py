"""Confirmation through the real cooked-mcp process over stdio, with the SDK's own client, in both
protocol eras: the person accepts (the change reaches Cooked exactly once), declines or cancels
(nothing reaches Cooked), or the client cannot ask (exactly as without confirmation)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from confirm_support import ERAS, LOSSES, Loss, Person
from mcp import Client, StdioServerParameters
from servers import COOKED_MCP, http_client, http_server, server_env
from sessions import text_of

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("era", ERAS)]
LOSS_CASES = [pytest.param(loss, id=loss.label) for loss in LOSSES]


def process(fake: FakeCooked, home: Path, era: str, person: Person | None, **env: str) -> Client:
    environment = server_env(home, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD, **env)
    return Client(
        StdioServerParameters(command=COOKED_MCP, env=environment),
        mode=era,
        read_timeout_seconds=30,
        elicitation_callback=person,
    )


async def call(client: Client, loss: Loss) -> tuple[bool, str]:
    with anyio.fail_after(30):
        result = await client.call_tool(loss.tool, loss.arguments)
    return bool(result.is_error), text_of(result)


@pytest.mark.req(
    "extensions.CONFIRMATION.1",
    "extensions.CONFIRMATION.3",
    "extensions.CONFIRMATION.5",
    "extensions.CONFIRMATION.7",
    "extensions.CONFIRMATION.8",
    "extensions.CONFIRMATION.10",
)
@pytest.mark.parametrize("answer", ["decline", "cancel"])
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_a_declined_or_cancelled_change_sends_nothing_to_cooked(
    fake: FakeCooked, tmp_path: Path, era: str, answer: str, loss: Loss
) -> None:
    person = Person(answer)  # type: ignore[arg-type]
    async with process(fake, tmp_path, era, person) as client:
        fake.clear_requests()
        is_error, text = await call(client, loss)
    assert loss.sent(fake) == 0
    assert (
        is_error and text.startswith("Nothing was sent to Cooked: ") and "unless the person asks" in text
    ), text
    assert "COOKED_MCP_CONFIRM_CHANGES=false" in text
    assert ("without answering" in text) == (answer == "cancel")
    [question] = person.questions
    assert all(word in question for word in loss.named), question


@pytest.mark.req(
    "extensions.CONFIRMATION.1",
    "extensions.CONFIRMATION.6",
    "extensions.CONFIRMATION.7",
    "extensions.CONFIRMATION.8",
)
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_an_accepted_change_reaches_cooked_exactly_once(
    fake: FakeCooked, tmp_path: Path, era: str, loss: Loss
) -> None:
    person = Person("accept")
    async with process(fake, tmp_path, era, person) as client:
        fake.clear_requests()
        is_error, text = await call(client, loss)
    assert not is_error, text
    assert loss.sent(fake) == 1
    assert len(person.questions) == 1


@pytest.mark.req("extensions.CONFIRMATION.9", "recipes.DELETE.1", "shopping-list.CLEAR.1")
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_a_client_without_elicitation_is_not_asked_and_sends_what_it_always_sent(
    fake: FakeCooked, tmp_path: Path, era: str, loss: Loss
) -> None:
    async with process(fake, tmp_path, era, None) as client:
        await client.call_tool("read", {"target": "recipes"})  # the login, out of the way
        fake.clear_requests()
        is_error, _ = await call(client, loss)
    assert not is_error
    assert [(r.method, r.path) for r in fake.api_requests(renewals=False)] == [(loss.method, loss.path)]


@pytest.mark.req("extensions.CONFIRMATION.10")
@pytest.mark.parametrize("loss", LOSS_CASES)
async def test_the_setting_turns_the_questions_off(
    fake: FakeCooked, tmp_path: Path, era: str, loss: Loss
) -> None:
    person = Person("decline")
    async with process(fake, tmp_path, era, person, COOKED_MCP_CONFIRM_CHANGES="false") as client:
        fake.clear_requests()
        is_error, text = await call(client, loss)
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
    fake: FakeCooked, tmp_path: Path, era: str
) -> None:
    """Over HTTP a tool call of a client that declared elicitation is answered as a stream, so the
    question can reach the person (transports/private_reaches.py)."""
    token = "confirm-token-5c1e9a0b7d"
    env = server_env(
        tmp_path, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD, COOKED_MCP_HTTP_TOKEN=token
    )
    delete = LOSSES[0]
    with http_server(env) as server:
        for answer, sent in (("decline", 0), ("cancel", 0), ("accept", 1)):
            fake.reset()
            client = http_client(server.url, token)
            client.elicitation_callback, client.mode = Person(answer), era  # type: ignore[assignment]
            async with client:
                is_error, _ = await call(client, delete)
            assert is_error == (answer != "accept") and delete.sent(fake) == sent, answer
        fake.reset()
        client = http_client(server.url, token)
        client.mode = era
        async with client:
            is_error, _ = await call(client, delete)
        assert not is_error and delete.sent(fake) == 1
