"""The person confirms, in their own client, each change that loses data, before it is sent: the
question names what would be lost as Cooked has it now and says what each answer does. No usable
answer ends not confirmed, like a no; a client without elicitation, or the setting off, is never
asked. Runs inside writes.Writes.run, before a change starts, so an accepted change is made once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from cooked_mcp_runtime.confirmation import Reply
from cooked_mcp_runtime.results import ToolCall, ToolError

from ..text import one_line

#: Names spelled out in one question; the rest are counted ("and 5 more").
MAX_NAMED = 10
#: Characters of one title or entry name in a question.
MAX_NAME_CHARS = 80
#: How every question ends: clients label the buttons (Submit, Decline, Cancel), not the server.
ANSWERS = "Accepting makes this change; declining keeps everything as it is."
#: An answer faster than this was not a person reading the question: their client answered alone.
UNSHOWN_SECONDS = 1.0


@dataclass(frozen=True)
class Question:
    """What the person is asked (``ANSWERS`` follows it), and, after "so", what stays as it is
    when they say no (``the recipe "Soup" (r-1) was not deleted``)."""

    text: str
    unchanged: str


@dataclass(frozen=True)
class Confirmation:
    """``turn_off`` is how the person turns the questions off; the entry point words it from the
    settings, which the handlers never read. ``answer_seconds`` is how long a question waits."""

    enabled: bool
    turn_off: str
    answer_seconds: float

    # implements: extensions.CONFIRMATION.1, extensions.CONFIRMATION.11, extensions.CONFIRMATION.12, extensions.CONFIRMATION.13, extensions.CONFIRMATION.14
    async def confirm(self, call: ToolCall, question: Callable[[], Awaitable[Question | None]]) -> None:
        """Raises unless the person accepts; asks nobody when the setting is off or the client cannot
        ask, or when the question is None (nothing is lost). Only the four changes call this, so
        read-only mode, which serves none of them, is as before."""
        if not (self.enabled and call.asker.can_ask):
            return
        asked = await question()
        if asked is None:
            return
        reply = await call.asker.ask(f"{asked.text} {ANSWERS}", self.answer_seconds)
        if reply.answer != "accept":
            raise ToolError(self.refused(call.tool, asked.unchanged, reply))

    # implements: extensions.CONFIRMATION.5, extensions.CONFIRMATION.10, extensions.CONFIRMATION.13, extensions.CONFIRMATION.14
    def refused(self, tool: str, unchanged: str, reply: Reply) -> str:
        """One sentence the person can read, then what the agent does; the way to turn questions
        off only when the answer came too fast for the question to have been shown."""
        person = reply.answer in ("decline", "cancel")
        wait = self.answer_seconds
        within = f"{wait / 60:g} minutes" if wait >= 120 else f"{wait:g} seconds"
        why = {
            "decline": "You said no",
            "cancel": "You cancelled the question",
            "unanswered": f"The question had no answer within {within}",
            "unreadable": "Your client's answer to the question could not be read",
            "gone": "The session ended before the question was answered",
        }[reply.answer]
        text = (
            f"{why}, so {unchanged}; {'' if person else 'not confirmed: '}nothing was sent to Cooked. "
            f"Do not call {tool} for this again unless the person asks for it again."
        )
        if person and reply.seconds < UNSHOWN_SECONDS:
            text += (
                " The answer came too fast for a person, so their client may answer without showing "
                f"the question; if so, they can turn these questions off with {self.turn_off}."
            )
        return text


def names(values: Sequence[str]) -> str:
    """Cooked names inside a question: each one bounded line, quoted; the rest counted."""
    shown = ", ".join(f'"{one_line(value, "(no name)", MAX_NAME_CHARS)}"' for value in values[:MAX_NAMED])
    more = len(values) - MAX_NAMED
    return shown if more <= 0 else f"{shown} and {more} more"
