"""The write-once checks every change tool shares (handlers/writes.py): a cancelled call whose
change goes on and answers the identical call, and a lost answer that leaves the outcome unknown.

Each waits on the fake's request log, never on a guessed sleep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from sessions import call, text_of, until

from cooked_fake import DRAFT_ID, SEED_USERNAME, FakeCooked

USER = f"/api/user/{SEED_USERNAME}"


@dataclass(frozen=True)
class Change:
    """One tool call that changes the account, and the request to Cooked that makes the change."""

    label: str
    tool: str
    arguments: dict[str, Any]
    method: str
    path: str
    #: The read that shows whether the change was made (what an unknown outcome tells the agent).
    look: dict[str, Any]

    def sent(self, fake: FakeCooked) -> int:
        return sum(
            1 for r in fake.api_requests(renewals=False) if (r.method, r.path) == (self.method, self.path)
        )

    def carried_out(self, fake: FakeCooked) -> int:
        """Change requests the fake has chosen an answer for (so carried out, or refused)."""
        return sum(
            1
            for r in fake.api_requests(renewals=False)
            if (r.method, r.path) == (self.method, self.path) and r.status
        )

    async def until_carried_out(self, fake: FakeCooked, count: int = 1) -> None:
        await until(fake, lambda _: self.carried_out(fake) >= count)

    async def call(self, client: Client) -> types.CallToolResult:
        return await call(client, self.tool, self.arguments)


NEWEST = {"target": "recipes"}
R1 = {"target": "recipe", "recipe_id": "r-0001"}
RECIPE_CHANGES = {
    "raw_text": Change(
        "raw_text",
        "save_recipe",
        {"source": "raw_text", "title": "Stew", "text": "2 carrots\n1 onion\nSimmer."},
        "POST",
        "/api/recipes",
        NEWEST,
    ),
    "prepared": Change(
        "prepared",
        "save_recipe",
        {"source": "prepared", "title": "Stew", "markdown": "## Ingredients\n- 2 carrots", "portions": 2},
        "POST",
        "/api/recipes",
        NEWEST,
    ),
    "draft": Change(
        "draft",
        "save_recipe",
        {"source": "draft", "draft_id": DRAFT_ID, "markdown": "## Ingredients\n- 1 egg", "portions": None},
        "POST",
        f"/api/extract/{DRAFT_ID}/save",
        NEWEST,
    ),
    "existing": Change(
        "existing",
        "save_recipe",
        {"source": "existing", "recipe_id": "r-0001", "markdown": "## Ingredients\n- 5 eggs", "portions": 3},
        "PUT",
        "/api/saved/r-0001",
        R1,
    ),
    "delete": Change("delete", "delete_recipe", {"recipe_id": "r-0001"}, "DELETE", "/api/saved/r-0001", R1),
}
LIST = {"target": "shopping_list"}
LIST_CHANGES = {
    "add": Change(
        "add",
        "change_shopping_list",
        {"action": "add", "ingredients": "2 onions\n1 lemon"},
        "POST",
        f"{USER}/shopping-list/ingredients",
        LIST,
    ),
    "remove": Change(
        "remove",
        "change_shopping_list",
        {"action": "remove", "product_group_ids": ["pg-01"]},
        "POST",
        f"{USER}/shopping-list/remove",
        LIST,
    ),
    "clear": Change(
        "clear", "change_shopping_list", {"action": "clear"}, "DELETE", f"{USER}/shopping-list", LIST
    ),
}


async def cancelled_then_repeated(fake: FakeCooked, client: Client, change: Change) -> types.CallToolResult:
    """The caller cancels while Cooked works; the identical call gets the change's kept outcome,
    saying nothing was sent again; the same call once more (that outcome now received) is a
    deliberate repeat and reaches Cooked. Returns the kept-outcome answer."""
    fake.fail_with("slow", change.method, change.path, seconds=0.6)
    with anyio.move_on_after(0.2) as scope:
        await change.call(client)
    assert scope.cancelled_caught
    await change.until_carried_out(fake)
    replay, deliberate = await change.call(client), await change.call(client)

    assert not replay.is_error, text_of(replay)
    kept_outcome_note(replay, change.tool)
    assert change.sent(fake) == 2  # the cancelled call's, then the deliberate repeat
    assert "nothing was sent to cooked again" not in text_of(deliberate).lower()
    return replay


async def lost_then_looked_at(fake: FakeCooked, client: Client, change: Change) -> None:
    """Cooked makes the change and the answer is lost: unknown, said by the call and by the identical
    call, which sends nothing; after the read the agent is pointed at, the identical call is sent."""
    fake.fail_with("answer_lost", change.method, change.path, seconds=0)
    first = await change.call(client)
    repeat = await change.call(client)
    sent_before_the_look = change.sent(fake)
    await client.call_tool("read", change.look)  # a deleted recipe's read is an error: still a look
    after_look = await change.call(client)

    unknown_outcome(first, change, repeat=False)
    unknown_outcome(repeat, change, repeat=True)
    assert sent_before_the_look == 1 and change.sent(fake) == 2
    assert "nothing was sent to cooked again" not in text_of(after_look).lower()


async def lost_then_a_failed_look(fake: FakeCooked, client: Client, change: Change) -> None:
    """A read that Cooked refuses shows the agent nothing, so it lifts no unknown outcome: the
    identical call after it still sends nothing; after a read that works, it is sent."""
    fake.fail_with("answer_lost", change.method, change.path, seconds=0)
    await change.call(client)
    fake.fail("GET", status=500, times=None)
    try:
        failed_look = await client.call_tool("read", change.look)
    finally:
        fake.clear_faults()
    after_failed_look = await change.call(client)
    sent_before_the_look = change.sent(fake)
    await client.call_tool("read", change.look)
    after_look = await change.call(client)

    assert failed_look.is_error, text_of(failed_look)
    unknown_outcome(after_failed_look, change, repeat=True)
    assert sent_before_the_look == 1 and change.sent(fake) == 2
    assert "nothing was sent to cooked again" not in text_of(after_look).lower()


def kept_outcome_note(result: types.CallToolResult, tool: str) -> str:
    """The text of an answer given from a kept outcome: it says nothing was sent again."""
    text = text_of(result)
    assert (
        f"an identical {tool} call made" in text.lower()
        and "nothing was sent to cooked again" in text.lower()
    ), text
    return text


def unknown_outcome(result: types.CallToolResult, change: Change, *, repeat: bool) -> str:
    """An answer saying the change may have been made, where to look, and how to repeat it on purpose."""
    text = text_of(result)
    assert result.is_error, text
    assert "may have made the change" in text or "may or may not" in text, text
    assert "after that read: it is then carried out again" in text, text
    assert f"read target={change.look['target']}" in text, text
    assert ("nothing was sent to cooked again" in text.lower()) is repeat, text
    # One next step, the look: not the connection error's generic "retry later" as well.
    assert "retry later" not in text and text.count("Next step") == 1, text
    return text
