"""Every recipe change happens once (handlers/writes.py): a cancelled call's change goes on and its
outcome answers the identical call; a lost answer is said to be unknown until the agent has looked;
a session that goes away leaves its change to answer another session's identical call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest
from mcp import Client
from recipe_support import failed, ok
from sessions import client_for, text_of, until
from writes_support import (
    NEWEST,
    RECIPE_CHANGES,
    Change,
    cancelled_then_repeated,
    lost_then_a_failed_look,
    lost_then_looked_at,
)

from cooked_fake import FakeCooked
from cooked_mcp.app import build_server
from cooked_mcp.config.limits import Limits

pytestmark = pytest.mark.anyio

PROVES = {
    "raw_text": ("recipes.SAVE.1", "recipes.SAVE.11"),
    "prepared": ("recipes.SAVE.2",),
    "draft": ("recipes.SAVE.7",),
    "existing": ("recipes.SAVE.8",),
    "delete": ("recipes.DELETE.1", "recipes.DELETE.2"),
}
CASES = [
    pytest.param(change, id=label, marks=pytest.mark.req(*PROVES[label], "recipes.VERIFICATION.1"))
    for label, change in RECIPE_CHANGES.items()
]


@pytest.mark.parametrize("change", CASES)
async def test_a_cancelled_change_goes_on_and_answers_the_identical_call_once(
    fake: FakeCooked, client: Client, change: Change
) -> None:
    fake.clear_requests()
    replay = await cancelled_then_repeated(fake, client, change)
    if change.tool == "delete_recipe":  # a second delete only finds the recipe gone
        assert "nothing to delete again" in text_of(replay) and "call delete_recipe again" not in text_of(
            replay
        )
    else:
        assert f"call {change.tool} again with the same arguments" in text_of(replay)


@pytest.mark.parametrize(
    "scenario", [lost_then_looked_at, lost_then_a_failed_look], ids=["looked", "failed-look"]
)
@pytest.mark.parametrize("change", CASES)
async def test_a_lost_answer_is_unknown_until_the_agent_has_looked_then_a_repeat_is_carried_out(
    fake: FakeCooked, change: Change, scenario: Callable[[FakeCooked, Client, Change], Awaitable[None]]
) -> None:
    # A session of its own: an unknown outcome must not linger into the module's other tests.
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        await scenario(fake, client, change)


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "recipes.VERIFICATION.1")
async def test_a_session_that_goes_away_leaves_its_import_to_answer_another_sessions_identical_call(
    fake: FakeCooked,
) -> None:
    url = "https://example.org/recipes/abandoned-stew"
    change = Change("url", "save_recipe", {"source": "url", "url": url}, "POST", "/api/new", NEWEST)
    fake.fail_with("slow", "POST", "/api/new", seconds=1)
    cooked = client_for(fake)
    server = build_server(cooked)  # one server, as one process serves every HTTP session
    async with cooked:
        async with Client(server) as gone, anyio.create_task_group() as group:
            group.start_soon(change.call, gone)
            await until(fake, lambda _: change.sent(fake) > 0)
            group.cancel_scope.cancel()  # the client goes, its session with it
        async with Client(server) as other:
            answer = await change.call(other)

    text, out = ok(answer, "save_recipe")
    assert text.startswith("This page was already imported") and out["saved"] is True
    assert change.sent(fake) == 1 and out["recipe_id"] in fake.state.recipes


@pytest.mark.req("recipes.SAVE.3", "recipes.DELETE.1", "recipes.VERIFICATION.1")
async def test_deleting_a_recipe_forgets_every_kept_outcome_that_names_it_and_no_other(
    fake: FakeCooked,
) -> None:
    urls = ["https://example.org/recipes/kept-stew", "https://example.org/recipes/other-stew"]
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked)) as client:
        first = [
            ok(await client.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")[1]
            for url in urls
        ]
        deleted = await client.call_tool("delete_recipe", {"recipe_id": first[0]["recipe_id"]})
        again = [
            ok(await client.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")
            for url in urls
        ]
        deleted_again = await client.call_tool("delete_recipe", {"recipe_id": first[0]["recipe_id"]})

    ok(deleted, "delete_recipe")
    assert again[0][1]["recipe_id"] != first[0]["recipe_id"]  # imported anew
    assert again[1][1]["recipe_id"] == first[1]["recipe_id"]  # still reported
    assert again[1][0].startswith("This page was already imported")
    assert "no saved recipe has this ID" in failed(deleted_again)  # a received delete is a real repeat


@pytest.mark.req("recipes.SAVE.2", "tools.RESPONSES.6", "recipes.VERIFICATION.1")
async def test_an_unknown_outcome_the_agent_was_told_of_is_kept_at_the_bound_until_it_looks(
    fake: FakeCooked,
) -> None:
    """ "Until such a read, identical calls send nothing" is a promise too: at the bound (1 here) it
    is kept and a new change is refused; the read lifts it, and the new change is made."""
    lost = RECIPE_CHANGES["prepared"]
    other = {**lost.arguments, "title": "Another stew"}
    fake.fail_with("answer_lost", lost.method, lost.path, seconds=0)
    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked, limits=Limits(kept_outcomes=1))) as client:
        await lost.call(client)
        refused = await client.call_tool("save_recipe", other)
        repeat = await lost.call(client)
        await client.call_tool("read", NEWEST)
        made = await client.call_tool("save_recipe", other)

    assert failed(refused).startswith("Nothing was sent to Cooked:") and "kept_outcomes = 1" in text_of(
        refused
    )
    assert "nothing was sent to cooked again" in failed(repeat).lower()
    ok(made, "save_recipe")
    assert lost.sent(fake) == 2  # the lost save, then the other after the look
