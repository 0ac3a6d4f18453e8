"""Confirmation in detail, on the in-memory wiring against the fake Cooked: what is asked and what
never is, the sealed 2026-07-28 round, changes that lose nothing, read-only mode, and an accepted
change made once when two identical calls are asked at the same time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from confirm_support import ANSWERS, ERAS, HARMLESS, LOSSES, Person
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from sessions import client_for, text_of
from writes_support import RECIPE_CHANGES

from cooked_fake import FOREIGN_RECIPE_ID, UNTITLED_RECIPE_ID, FakeCooked
from cooked_mcp.app import build_server
from cooked_mcp.config.limits import Limits
from cooked_mcp.handlers import confirmation

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def connected(
    fake: FakeCooked, person: Any, *, mode: str = "legacy", **options: Any
) -> AsyncIterator[Client]:
    cooked = client_for(fake)
    async with (
        cooked,
        Client(build_server(cooked, **options), mode=mode, elicitation_callback=person) as client,
    ):
        yield client


@pytest.mark.req("extensions.CONFIRMATION.1", "extensions.CONFIRMATION.2", "extensions.CONFIRMATION.4")
async def test_only_the_four_changes_that_lose_data_are_asked_about(fake: FakeCooked) -> None:
    person = Person("accept")
    async with connected(fake, person) as client:
        for tool, arguments in HARMLESS:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, arguments, text_of(result))
        assert person.questions == []
        for loss in LOSSES:
            fake.reset()
            assert not (await client.call_tool(loss.tool, loss.arguments)).is_error
    assert len(person.questions) == len(LOSSES)
    # One yes/no answer: nothing to fill in, accepting is yes.
    assert person.schemas == [{"type": "object", "properties": {}}] * len(LOSSES)


@pytest.mark.req("extensions.CONFIRMATION.7", "extensions.CONFIRMATION.5")
async def test_the_2026_round_carries_a_sealed_state_and_an_answer_counts_only_with_it(
    fake: FakeCooked,
) -> None:
    delete = LOSSES[0]
    async with connected(fake, Person("accept"), mode="2026-07-28") as client:
        session = client.session
        first = await session.call_tool(delete.tool, delete.arguments, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert first.input_requests is not None and list(first.input_requests) == ["confirm"]
        state = first.request_state
        assert state is not None and state.startswith("v1.") and "question" not in state  # sealed, opaque
        yes = {"confirm": types.ElicitResult(action="accept", content={})}
        # An answer without the state it belongs to is no answer: asked again, nothing sent.
        again = await session.call_tool(
            delete.tool, delete.arguments, input_responses=yes, allow_input_required=True
        )
        assert isinstance(again, types.InputRequiredResult)
        # A state the server did not seal is refused before any handler runs.
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await session.call_tool(
                delete.tool,
                delete.arguments,
                input_responses=yes,
                request_state="v1.forged",
                allow_input_required=True,
            )
        assert delete.sent(fake) == 0
        no = {"confirm": types.ElicitResult(action="decline")}
        declined = await session.call_tool(
            delete.tool, delete.arguments, input_responses=no, request_state=state, allow_input_required=True
        )
        assert isinstance(declined, types.CallToolResult) and declined.is_error
        assert delete.sent(fake) == 0
        done = await session.call_tool(
            delete.tool, delete.arguments, input_responses=yes, request_state=state, allow_input_required=True
        )
        assert isinstance(done, types.CallToolResult) and not done.is_error, text_of(done)  # type: ignore[arg-type]
    assert delete.sent(fake) == 1


@pytest.mark.req("extensions.CONFIRMATION.12")
async def test_a_change_that_loses_nothing_is_not_asked_about(fake: FakeCooked) -> None:
    person = Person("decline")
    async with connected(fake, person) as client:
        gone = await client.call_tool(
            "change_shopping_list", {"action": "remove", "product_group_ids": ["pg-99"]}
        )
        assert not gone.is_error and "Not on the list" in text_of(gone)
        foreign = await client.call_tool("delete_recipe", {"recipe_id": FOREIGN_RECIPE_ID})
        assert foreign.is_error and "does not own" in text_of(foreign)
        await client.call_tool("change_shopping_list", {"action": "clear"})  # six entries: asked
    assert len(person.questions) == 1 and "all 6 entries" in person.questions[0]
    fake.reset()
    person = Person("decline")
    async with connected(fake, Person("accept")) as client:
        await client.call_tool("change_shopping_list", {"action": "clear"})
    async with connected(fake, person) as client:
        empty = await client.call_tool("change_shopping_list", {"action": "clear"})
    assert not empty.is_error and person.questions == []


@pytest.mark.req("extensions.CONFIRMATION.11", "tools.SURFACE.1")
async def test_read_only_mode_is_unaffected(fake: FakeCooked) -> None:
    person = Person("decline")
    async with connected(fake, person, read_only_from="COOKED_MCP_READ_ONLY") as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["read", "preview_recipe_text"]
        for tool, arguments in HARMLESS[:5]:
            assert not (await client.call_tool(tool, arguments)).is_error
        with pytest.raises(MCPError, match="read-only"):
            await client.call_tool("delete_recipe", {"recipe_id": "r-0001"})
    assert person.questions == []


@pytest.mark.req("extensions.CONFIRMATION.6", "recipes.DELETE.1")
async def test_two_identical_calls_asked_at_once_and_both_accepted_delete_once(fake: FakeCooked) -> None:
    """The second call's question was answered while the first call's change ran: it joins that
    change (writes.py) instead of sending a second DELETE."""
    asked = anyio.Event()
    release = anyio.Event()
    waiting = 0

    async def slow_yes(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        nonlocal waiting
        waiting += 1
        if waiting == 2:
            asked.set()
        await release.wait()
        return types.ElicitResult(action="accept", content={})

    delete = LOSSES[0]
    results: list[types.CallToolResult] = []
    async with connected(fake, slow_yes) as client:

        async def one() -> None:
            results.append(await client.call_tool(delete.tool, delete.arguments))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(one)
                group.start_soon(one)
                await asked.wait()
                release.set()
    assert [r.is_error for r in results] == [False, False], [text_of(r) for r in results]
    assert delete.sent(fake) == 1
    assert any("nothing was sent to Cooked again" in text_of(r) for r in results)


@pytest.mark.req("extensions.CONFIRMATION.3", "extensions.CONFIRMATION.14", "recipes.DELETE.1")
async def test_an_untitled_recipe_is_named_by_its_id_and_first_words_and_a_deletion_names_the_recipe(
    fake: FakeCooked,
) -> None:
    person = Person("accept")
    async with connected(fake, person) as client:
        untitled = await client.call_tool("delete_recipe", {"recipe_id": UNTITLED_RECIPE_ID})
        titled = await client.call_tool("delete_recipe", {"recipe_id": "r-0001"})
    name = f'the untitled recipe {UNTITLED_RECIPE_ID} (it begins "2 slices bread, 1 tbsp butter, Toast…")'
    assert person.questions[0] == f"Delete {name} from Cooked? This cannot be undone. {ANSWERS}"
    assert text_of(untitled) == f"Deleted {name} from Cooked. This cannot be undone."
    assert text_of(titled) == 'Deleted the recipe "Shakshuka" (r-0001) from Cooked. This cannot be undone.'


@pytest.mark.req("extensions.CONFIRMATION.10", "extensions.CONFIRMATION.14", "extensions.CONFIRMATION.7")
@pytest.mark.parametrize("era", ERAS)
async def test_the_way_to_turn_questions_off_is_named_only_after_an_answer_too_fast_for_a_person(
    fake: FakeCooked, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """A person who read the question and said no is not told how to stop being asked."""
    monkeypatch.setattr(confirmation, "UNSHOWN_SECONDS", 0.2)

    async def reads_then_says_no(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        await anyio.sleep(0.3)
        return types.ElicitResult(action="decline")

    async with connected(fake, reads_then_says_no, mode=era) as client:
        read = await client.call_tool("delete_recipe", {"recipe_id": "r-0001"})
    async with connected(fake, Person("decline"), mode=era) as client:
        unread = await client.call_tool("delete_recipe", {"recipe_id": "r-0001"})
    said_no = 'You said no, so the recipe "Shakshuka" (r-0001) was not deleted; nothing was sent to Cooked.'
    assert text_of(read).startswith(said_no) and "CONFIRM_CHANGES" not in text_of(read), text_of(read)
    assert text_of(unread).startswith(said_no) and "COOKED_MCP_CONFIRM_CHANGES=false" in text_of(unread)
    assert LOSSES[0].sent(fake) == 0


@pytest.mark.req("extensions.CONFIRMATION.13", "extensions.CONFIRMATION.7")
async def test_in_2026_an_answer_coming_back_after_the_time_given_is_not_confirmed(fake: FakeCooked) -> None:
    """The 2026-07-28 question waits in the client, not here: its sealed state says when it was
    asked, so a late accept confirms nothing (the legacy era: test_confirmation_ends)."""

    async def yes_too_late(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        await anyio.sleep(0.3)
        return types.ElicitResult(action="accept", content={})

    async with connected(
        fake, yes_too_late, mode="2026-07-28", limits=Limits(confirm_answer_seconds=0.2)
    ) as client:
        late = await client.call_tool("delete_recipe", {"recipe_id": "r-0001"})
    assert late.is_error and text_of(late).startswith(
        'The question had no answer within 0.2 seconds, so the recipe "Shakshuka" (r-0001) was not deleted; '
        "not confirmed: nothing was sent to Cooked."
    ), text_of(late)
    assert LOSSES[0].sent(fake) == 0


@pytest.mark.req("extensions.CONFIRMATION.13", "extensions.CONFIRMATION.7")
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the malformed answers, sent as built
async def test_in_2026_a_malformed_answer_is_not_confirmed_as_in_the_older_era(fake: FakeCooked) -> None:
    """Before: the SDK refused the whole call ("Invalid request parameters"); the legacy era's
    malformed answers: test_confirmation_ends."""
    delete = LOSSES[0]
    malformed = (
        types.ElicitResult.model_construct(action="yes"),
        types.ElicitResult.model_construct(action="accept", content=[]),
        types.ElicitResult.model_construct(action="accept", content={"confirm": [1, 2]}),
    )
    async with connected(fake, Person("accept"), mode="2026-07-28") as client:
        session = client.session
        first = await session.call_tool(delete.tool, delete.arguments, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        for answer in malformed:
            result = await session.call_tool(
                delete.tool,
                delete.arguments,
                input_responses={"confirm": answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
            assert isinstance(result, types.CallToolResult) and result.is_error, result
            assert text_of(result).startswith(
                'Your client\'s answer to the question could not be read, so the recipe "Shakshuka" (r-0001) '
                "was not deleted; not confirmed: nothing was sent to Cooked."
            ), text_of(result)
    assert delete.sent(fake) == 0


@pytest.mark.req("extensions.CONFIRMATION.1", "tools.RESPONSES.6")
async def test_a_change_the_server_cannot_start_is_refused_before_the_person_is_asked(
    fake: FakeCooked,
) -> None:
    """At the kept-outcomes bound (1 here: a save whose answer was lost, kept under its promise) a
    new change is refused; the person was asked first and said yes to a deletion never made."""
    lost = RECIPE_CHANGES["prepared"]
    fake.fail_with("answer_lost", lost.method, lost.path, seconds=0)
    person, delete = Person("accept"), LOSSES[0]
    async with connected(fake, person, limits=Limits(kept_outcomes=1)) as client:
        await lost.call(client)
        refused = await client.call_tool(delete.tool, delete.arguments)
    assert refused.is_error and text_of(refused).startswith("Nothing was sent to Cooked:")
    assert "kept_outcomes = 1" in text_of(refused)
    assert person.questions == [] and delete.sent(fake) == 0
