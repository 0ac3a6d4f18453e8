"""URL imports answered before the client gives up, finished in the background, never run twice.

Cooked may take over a minute to import a page, longer than many clients wait for a tool
call (the TypeScript SDK gives up after 60 s). A client that gave up and retried would make
Cooked save the page twice. So a call waits at most the answer deadline; past it the call
answers "still running" and the import goes on, bounded, in a task of its own. Every import
is remembered by its URL while it runs and for a few minutes after it succeeds, and a new
call for that URL reports it instead of starting another. A failed import is forgotten at
once, so trying again really tries again.

A caller that cancels its call before the deadline cancels its import, as before, unless
another call has meanwhile been told that it goes on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from cooked_mcp_generated.models import SaveRecipeOutput
from cooked_mcp_runtime.results import ToolError, ToolResult

from ..config import DEFAULT_IMPORT_ANSWER_SECONDS
from .formatting import tool_call

logger = logging.getLogger("cooked_mcp.handlers")

ImportRun = Callable[[str], Awaitable[ToolResult[SaveRecipeOutput]]]

#: An import still unanswered after this long is cancelled. Each Cooked exchange already ends by its
#: own deadline (cooked.wire.Timeouts: 100 s for the import, 40 s for a login or the draft read), so
#: this bounds only their sum, when logins and retries pile up.
BACKGROUND_LIMIT_SECONDS = 300.0
#: How long a finished import answers a new call for the same URL instead of a new import.
REMEMBER_SECONDS = 300.0
#: Imports running at once (waited on or in the background); one more is refused.
MAX_RUNNING = 8
#: Finished imports remembered at once; the oldest are forgotten first.
MAX_REMEMBERED = 100


@dataclass
class _Import:
    task: asyncio.Task[ToolResult[SaveRecipeOutput]]
    started: float
    finished: float | None = None
    promised: bool = False  # some call was told the import goes on, so a cancel must not stop it


class UrlImports:
    """The imports of one server process, by URL."""

    def __init__(
        self,
        run: ImportRun,
        *,
        answer_seconds: float = DEFAULT_IMPORT_ANSWER_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._run = run
        self._answer_seconds = answer_seconds
        self._clock = clock
        self._imports: dict[str, _Import] = {}

    async def start_or_report(self, url: str) -> ToolResult[SaveRecipeOutput]:
        """The import's result if it ends within the deadline; else (or if one runs) "still running"."""
        self._forget_expired()
        known = self._imports.get(url)
        if known is not None:
            return self._report(known)
        running = sum(1 for entry in self._imports.values() if entry.finished is None)
        if running >= MAX_RUNNING:
            raise ToolError(
                f"Nothing was sent to Cooked: {running} URL imports are still running, the most this server "
                "runs at once. Wait a minute for them to finish (read target=recipes shows "
                "what they saved), then import this page."
            )
        entry = _Import(asyncio.create_task(self._bounded(url)), started=self._clock())
        self._imports[url] = entry
        entry.task.add_done_callback(lambda task: self._finished(url, entry))
        try:
            await asyncio.wait({entry.task}, timeout=self._answer_seconds)
        except asyncio.CancelledError:
            if not entry.promised:
                entry.task.cancel()
            raise
        if entry.task.done():
            return entry.task.result()
        entry.promised = True
        return _still_running(None)

    async def _bounded(self, url: str) -> ToolResult[SaveRecipeOutput]:
        async with asyncio.timeout(BACKGROUND_LIMIT_SECONDS):
            return await self._run(url)

    def _finished(self, url: str, entry: _Import) -> None:
        """Keep a success to report; forget a failure, so the next call imports again."""
        if entry.task.cancelled() or entry.task.exception() is not None:
            if self._imports.get(url) is entry:
                del self._imports[url]
            if not entry.task.cancelled():
                logger.info("a URL import failed: %s", entry.task.exception())
            return
        entry.finished = self._clock()

    def _report(self, entry: _Import) -> ToolResult[SaveRecipeOutput]:
        age = self._clock() - entry.started
        if entry.finished is None:
            entry.promised = True
            return _still_running(age)
        earlier = entry.task.result()
        note = (
            f"This page was already imported {age:.0f} s ago by an earlier save_recipe call, so it was not "
            "imported again; that import's result follows."
        )
        notice = f"{note}\n{earlier.output.notice}" if earlier.output.notice else note
        return replace(
            earlier,
            text=f"{note}\n{earlier.text}",
            output=earlier.output.model_copy(update={"notice": notice}),
        )

    def _forget_expired(self) -> None:
        now = self._clock()
        finished = sorted(
            (entry.finished, url) for url, entry in self._imports.items() if entry.finished is not None
        )
        for number, (when, url) in enumerate(finished):
            if now - when > REMEMBER_SECONDS or len(finished) - number > MAX_REMEMBERED:
                del self._imports[url]


def _still_running(age: float | None) -> ToolResult[SaveRecipeOutput]:
    """``age`` is how long ago an earlier call started the import; None for this call's own."""
    started = (
        "Cooked is importing the page"
        if age is None
        else f"An earlier save_recipe call started importing this page {age:.0f} s ago"
    )
    notice = (
        f"{started} and has not finished yet; the import goes on in the background and may still save "
        "the recipe. Do NOT retry it or import the page again."
    )
    next_step = (
        f"In a minute, look for the recipe with {tool_call('read', target='recipes')} (newest first). "
        "Calling save_recipe with this same URL within a few minutes starts no second import: it reports "
        "this one's outcome (the saved recipe, or the draft to review)."
    )
    output = SaveRecipeOutput(
        source="url", saved=False, import_running=True, notice=notice, next_step=next_step
    )
    return ToolResult(f"{notice} {next_step}", output)
