"""The person confirms, in their own client, each change that loses data, before it is sent.

Exactly four changes are asked about: delete_recipe, change_shopping_list remove and clear, and
save_recipe source=existing (it replaces a recipe's content). Nothing else is. The question names
what would be lost as the person knows it (the recipe's title and ID, the entries' names, "all 14
entries on the shopping list"), read from Cooked just before asking; a change that would lose
nothing (no listed entry, an empty list) is not asked about. A client that does not declare
elicitation, or a server with the setting off, is never asked and behaves as without this module.
Runs inside writes.Writes.run, before a change starts, so an accepted change is still made once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from cooked_mcp_runtime.results import ToolCall, ToolError

from ..text import one_line

#: Names spelled out in one question; the rest are counted ("and 5 more").
MAX_NAMED = 10
#: Characters of one title or entry name in a question.
MAX_NAME_CHARS = 80


@dataclass(frozen=True)
class Question:
    """What the person is asked, and what stays as it is when they say no."""

    text: str
    unchanged: str


Confirm = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Confirmation:
    """``turn_off`` is how the person turns the questions off, named wherever one was declined; the
    entry point words it from the settings, which the handlers never read."""

    enabled: bool
    turn_off: str

    # implements: extensions.CONFIRMATION.1, extensions.CONFIRMATION.10, extensions.CONFIRMATION.11, extensions.CONFIRMATION.12
    def before(self, call: ToolCall, question: Callable[[], Awaitable[Question | None]]) -> Confirm | None:
        """What writes.Writes.run awaits before the change: None when nobody is to be asked (the
        setting is off, or the client cannot ask). Only the four changes call this, so read-only
        mode, which serves none of them, is as before; a question of None means nothing is lost."""
        if not (self.enabled and call.asker.can_ask):
            return None

        async def confirm() -> None:
            asked = await question()
            if asked is None:
                return
            answer = await call.asker.ask(asked.text)
            if answer != "accept":
                raise ToolError(self.declined(call.tool, asked.unchanged, cancelled=answer == "cancel"))

        return confirm

    # implements: extensions.CONFIRMATION.5, extensions.CONFIRMATION.8
    def declined(self, tool: str, unchanged: str, *, cancelled: bool) -> str:
        """Opens, like every write's error, by saying nothing was sent (for clients that drop isError)."""
        how = (
            "the person closed the question in their client without answering"
            if cancelled
            else "the person said no when their client asked them to confirm"
        )
        return (
            f"Nothing was sent to Cooked: {how}, so {unchanged}. Do not call {tool} for this again unless the "
            f"person asks for it again. (If their client answers no without showing a question, the person can "
            f"turn these questions off with {self.turn_off}.)"
        )


def named(text: str | None, fallback: str) -> str:
    """A Cooked name inside a question: one bounded line, quoted."""
    return f'"{one_line(text, fallback, MAX_NAME_CHARS)}"' if text is not None else fallback


def names(values: Sequence[str | None]) -> str:
    shown = ", ".join(named(value, "(no name)") for value in values[:MAX_NAMED])
    more = len(values) - MAX_NAMED
    return shown if more <= 0 else f"{shown} and {more} more"


def entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"
