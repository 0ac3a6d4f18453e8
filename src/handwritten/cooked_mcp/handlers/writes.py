"""Kept outcomes: a change sent to Cooked happens once, whatever the client's timeout,
cancellation or a lost answer does (the rules are in docs/usage.md, "Client timeouts, cancelled
calls and retries"). Each change runs in its own task, outside the call's cancel scope; its outcome
is kept by tool and normalised arguments (a digest: no argument text is kept) for identical calls.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from operator import itemgetter
from typing import Any, Literal, cast

from pydantic import BaseModel

from cooked_mcp_runtime.results import OutputT, ToolCall, ToolError, ToolResult

from ..config.limits import Limits
from .confirmation import Confirmation, Question
from .formatting import AnswerLost

logger = logging.getLogger("cooked_mcp.handlers")

#: The part of the account a change touches: a read of it is how an agent checks an unknown outcome.
Area = Literal["recipes", "shopping_list"]

#: How long an ended change's outcome answers identical calls (and a "still running" promise holds).
KEEP_SECONDS = 300.0
#: Changes running at once (waited on or in the background); one more is refused before Cooked.
MAX_RUNNING = 16
#: A change still unanswered after this long is cancelled and its outcome is unknown. Each Cooked
#: exchange already ends by its own deadline (cooked.sender.Timeouts); this bounds their sum,
#: when logins and retries pile up.
BACKGROUND_LIMIT_SECONDS = 300.0


@dataclass(frozen=True)
class Write:
    """One change as the kept outcomes know it: which call asked for it and how to check it."""

    key: str
    tool: str
    area: Area
    #: The read call that shows whether the change was made, for an unknown outcome.
    look: str
    #: Recipes the arguments name (deleting one forgets this outcome).
    recipe_ids: frozenset[str] = frozenset()
    #: delete_recipe: the recipe it deletes; when it succeeds every other outcome naming it goes.
    deletes: str | None = None
    #: save_recipe source=draft: when it succeeds the import that made the draft is forgotten.
    saves_draft: str | None = None
    #: URL imports: a success keeps answering identical calls after a call received it.
    reported_again: bool = False

    @classmethod
    def of(cls, call: ToolCall, arguments: BaseModel, *, area: Area, look: str, **options: Any) -> Write:
        """Keyed by the tool and its validated arguments (defaults filled in, so spellings agree)."""
        digest = hashlib.sha256(arguments.model_dump_json().encode()).hexdigest()
        return cls(f"{call.tool}:{digest}", call.tool, area, look, **options)


@dataclass
class _Kept:
    write: Write
    task: asyncio.Task[ToolResult[Any]]
    started: float
    ended: float | None = None
    #: When (``Writes._events``) a call received the outcome's answer.
    told: int | None = None
    #: A "still running" answer promised that identical calls report this change.
    promised: bool = False
    names: set[str] = field(default_factory=set)
    #: Characters the outcome holds (its text and structured output, or its error).
    size: int = 0


class Writes:
    """The changes of one server process, by what they ask, and their outcomes."""

    def __init__(
        self,
        limits: Limits | None = None,
        confirmation: Confirmation | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        limits = limits or Limits()
        self._confirmation = confirmation
        self._keep, self._keep_chars = limits.kept_outcomes, limits.kept_outcome_chars
        self._clock = clock
        self._kept: dict[str, _Kept] = {}
        self._events = itertools.count(1)
        self._looked: dict[Area, int] = {}

    # implements: extensions.CONFIRMATION.6
    async def run(
        self,
        write: Write,
        call: ToolCall,
        change: Callable[[], Awaitable[ToolResult[OutputT]]],
        *,
        answer_seconds: float | None = None,
        still_running: Callable[[float | None], ToolResult[OutputT]] | None = None,
        question: Callable[[], Awaitable[Question | None]] | None = None,
    ) -> ToolResult[OutputT]:
        """The change's outcome, carried out only when no kept outcome answers this call. Past
        ``answer_seconds`` the answer is ``still_running(age)`` (None: this call's own). The person is
        asked ``question`` only before starting a change; a refusal sends nothing."""
        kept = self._binding_outcome(write)
        if kept is None and question is not None and self._confirmation is not None:
            self._refuse_if_full()  # before the person is asked: a yes must not meet a refusal
            await self._confirmation.confirm(call, question)
            kept = self._binding_outcome(write)
        own = kept is None
        if kept is None:
            self._refuse_if_full()
            kept = _Kept(write, asyncio.create_task(_bounded(change)), started=self._clock())
            self._kept[write.key] = kept
            kept.task.add_done_callback(partial(self._ended, kept))
        if not kept.task.done():
            await asyncio.wait({kept.task}, timeout=answer_seconds)
            if not kept.task.done():
                assert still_running is not None, "a change without an answer deadline is always waited for"
                kept.promised = True
                return still_running(None if own else self._clock() - kept.started)
        return cast(ToolResult[OutputT], self._answer(kept, call, own))

    def _binding_outcome(self, write: Write) -> _Kept | None:
        self._forget_ended()
        kept = self._kept.get(write.key)
        if kept is not None and not self._binding(kept):
            del self._kept[write.key]
            kept = None
        return kept

    async def finished(self) -> None:
        """Return once every change running now has ended: a stopping server waits for them (within
        its grace, ``transports.protocol_guard``), so that a change is not broken off half-way."""
        running = {kept.task for kept in self._kept.values() if kept.ended is None}
        if running:
            logger.info("stopping: waiting for %d change(s) sent to Cooked to end", len(running))
            await asyncio.wait(running)
            logger.info("stopping: every change sent to Cooked has ended")

    def looked(self, area: Area) -> None:
        """A read of ``area`` reached the agent: unknown outcomes it was told of may now be repeated."""
        self._looked[area] = next(self._events)

    def _refuse_if_full(self) -> None:
        """Raise when no new change may start: too many running, or the promises kept at a bound."""
        running = [kept for kept in self._kept.values() if kept.ended is None]
        if len(running) >= MAX_RUNNING:
            imports = sum(kept.write.reported_again for kept in running)
            among = f" ({imports} of them URL imports)" if imports else ""
            raise ToolError(
                f"Nothing was sent to Cooked: {len(running)} changes sent to it{among} are still unanswered, the "
                "most this server runs at once. Wait a minute for them to finish (read shows what they did), "
                "then try again."
            )
        promised = [kept for kept in self._kept.values() if kept.ended is not None and self._promising(kept)]
        held, chars = len(running) + len(promised), sum(kept.size for kept in promised)
        if held >= self._keep or chars >= self._keep_chars:
            bound = (
                f"{held} outcomes of changes that are running or that it promised to report, the most it "
                f"keeps ([mcp.limits] kept_outcomes = {self._keep})"
                if held >= self._keep
                else f"{chars} characters of outcomes it promised to report, the most it keeps "
                f"([mcp.limits] kept_outcome_chars = {self._keep_chars})"
            )
            raise ToolError(
                f"Nothing was sent to Cooked: this server holds {bound}, and drops none while its promise "
                f"that identical calls start nothing twice stands. Each promise ends {KEEP_SECONDS / 60:.0f} "
                "minutes after its change ended: try again then (read shows what the changes made meanwhile)."
            )

    def _ended(self, kept: _Kept, task: asyncio.Task[ToolResult[Any]]) -> None:
        kept.ended = self._clock()
        kept.names = set(kept.write.recipe_ids)
        failure = None if task.cancelled() else task.exception()
        kept.size = len(str(failure))
        if failure is None and not task.cancelled():
            result = task.result()
            kept.size = len(result.text) + len(result.output.model_dump_json())
            draft = getattr(result.output, "draft", None)
            named = (getattr(result.output, "recipe_id", None), getattr(draft, "draft_id", None))
            kept.names.update(name for name in named if isinstance(name, str))
            # A deleted recipe, or a saved draft, ends every known outcome naming it (reporting what is
            # gone helps no one); an unknown one stays: whether its change was made is still to look at.
            for gone in {kept.write.deletes, kept.write.saves_draft} - {None}:
                for key, other in list(self._kept.items()):
                    known = other.ended is not None and not _unknown(other.task)
                    if other is not kept and known and gone in other.names:
                        del self._kept[key]
        elif isinstance(failure, ToolError):
            logger.info("a %s change ended with an error: %s", kept.write.tool, failure)
        elif failure is not None and not isinstance(failure, TimeoutError):
            logger.error("a %s change failed inside cooked-mcp", kept.write.tool, exc_info=failure)

    def _binding(self, kept: _Kept) -> bool:
        """Whether ``kept`` still answers an identical call instead of a new change."""
        if kept.ended is None:
            return True
        if _unknown(kept.task):
            return kept.told is None or self._looked.get(kept.write.area, 0) < kept.told
        return kept.told is None or (kept.write.reported_again and kept.task.exception() is None)

    def _answer(self, kept: _Kept, call: ToolCall, own: bool) -> ToolResult[Any]:
        write, task = kept.write, kept.task
        age = self._clock() - kept.started
        call.when_answered(lambda: setattr(kept, "told", next(self._events)))
        if _unknown(task):
            raise ToolError(_unknown_text(write, task, None if own else age))
        if own:
            return task.result()  # or raises the error the change ended with
        failure = task.exception()
        if failure is not None:
            raise ToolError(
                f"Nothing was sent to Cooked again: an identical {write.tool} call made {age:.0f} s ago ended "
                f"with this error: {failure}"
            ) from None
        result = task.result()
        if write.reported_again:
            note = (
                f"This page was already imported {age:.0f} s ago by an earlier save_recipe call, so it was not "
                "imported again; that import's result follows."
            )
        else:
            again = (
                "The recipe is gone: there is nothing to delete again."
                if write.deletes is not None
                else f"To make the change once more on purpose, call {write.tool} again with the same arguments."
            )
            note = (
                f"An identical {write.tool} call made {age:.0f} s ago already made this change, so nothing was "
                f"sent to Cooked again (its answer may not have reached you); its result follows. {again}"
            )
        earlier = getattr(result.output, "notice", None)
        output = result.output.model_copy(update={"notice": f"{note}\n{earlier}" if earlier else note})
        return replace(result, text=f"{note}\n{result.text}", output=output)

    def _promising(self, kept: _Kept) -> bool:
        """An answer told the agent that identical calls send nothing (still running, or unknown), or
        no call received the outcome yet (a timed-out call's retry must get it, not make it again)."""
        return (kept.promised or kept.told is None or _unknown(kept.task)) and self._binding(kept)

    def _forget_ended(self) -> None:
        """Expired outcomes go; then, beyond a bound, the oldest kept under no promise."""
        now = self._clock()
        ended = sorted(
            ((kept.ended, kept) for kept in self._kept.values() if kept.ended is not None), key=itemgetter(0)
        )
        count, chars = len(ended), sum(kept.size for _, kept in ended)
        for ended_at, kept in ended:
            over = count > self._keep or chars > self._keep_chars
            if now - ended_at > KEEP_SECONDS or (over and not self._promising(kept)):
                del self._kept[kept.write.key]
                count, chars = count - 1, chars - kept.size


async def _bounded(change: Callable[[], Awaitable[ToolResult[Any]]]) -> ToolResult[Any]:
    async with asyncio.timeout(BACKGROUND_LIMIT_SECONDS):
        return await change()


def _unknown(task: asyncio.Task[ToolResult[Any]]) -> bool:
    """Cooked may or may not have made the change: its answer was lost, or never came in time."""
    if task.cancelled():
        return True
    failure = task.exception()
    return failure is not None and (isinstance(failure, AnswerLost) or not isinstance(failure, ToolError))


def _unknown_text(write: Write, task: asyncio.Task[ToolResult[Any]], age: float | None) -> str:
    """What an agent needs when nobody can know whether Cooked acted: look first, then repeat on purpose."""
    failure = None if task.cancelled() else task.exception()
    if isinstance(failure, AnswerLost):
        how = (
            f"{failure.summary} Cooked may have made the change before its answer was lost, or may not have."
        )
    elif failure is None or isinstance(failure, TimeoutError):
        how = (
            f"cooked-mcp could not tell whether Cooked made this {write.tool} change (it may or may not "
            f"have): it stopped waiting for Cooked's answer after {BACKGROUND_LIMIT_SECONDS:.0f} s."
        )
    else:
        how = (
            f"{write.tool} failed inside cooked-mcp after the change was sent (the server log has the "
            "details), so Cooked may or may not have made it."
        )
    if age is not None:
        how = (
            f"Nothing was sent to Cooked again: an identical {write.tool} call made {age:.0f} s ago ended "
            f"like this: {how}"
        )
    return (
        f"{how} Next step: look before you retry it: {write.look}. If the change is there, do not make it again. If "
        f"it is not, call {write.tool} again with the same arguments after that read: it is then carried out "
        f"again. Until such a read, identical calls send nothing and get this answer (for up to "
        f"{KEEP_SECONDS / 60:.0f} minutes)."
    )
