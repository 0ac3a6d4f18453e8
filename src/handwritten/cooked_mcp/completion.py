"""Recipe titles completing a prompt's recipe argument. A client asks at every keystroke: answers
are kept, identical requests share one search, and Cooked requests are capped by a token bucket."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import mcp_types as types

from .cooked.client import CookedClient
from .cooked.endpoints import SEARCH_PAGE_SIZE
from .cooked.models import CookedRecipeSummary
from .exceptions import CookedError
from .text import one_line

#: Values one completion answers (the MCP spec's own limit; Cooked's search pages hold 20 too).
MAX_VALUES = 20
CACHE_SECONDS = 30.0
MAX_CACHED = 64
#: Characters of the typed value used; a longer one is cut (a title that long matches nothing new).
MAX_TYPED_CHARS = 200
MAX_TITLE_CHARS = 200
#: Cooked requests completion may send at once, then per second (a token bucket): a client sending
#: a completion per keystroke, or one sending hundreds, costs Cooked no more than this.
SEARCH_BURST = 10
SEARCH_PER_SECOND = 2.0


@dataclass(frozen=True)
class _Found:
    #: Distinct titles containing the typed value, in Cooked's order.
    titles: list[str]
    #: Cooked's results ended: these are every match.
    complete: bool


@dataclass
class _Entry:
    task: asyncio.Task[_Found]
    at: float


class RecipeTitles:
    def __init__(self, client: CookedClient, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._clock = clock
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        self._tokens, self._filled = float(SEARCH_BURST), clock()

    # implements: extensions.COMPLETION.1, extensions.COMPLETION.2, extensions.COMPLETION.3, extensions.COMPLETION.4, extensions.COMPLETION.5, extensions.COMPLETION.6, extensions.COMPLETION.7
    async def matching(self, typed: str) -> types.Completion:
        """At most MAX_VALUES titles containing ``typed`` (case-insensitive); none when Cooked fails."""
        key = " ".join(typed[:MAX_TYPED_CHARS].split()).casefold()
        entry = self._cache.get(key)
        if entry is None or not self._fresh(entry, done=False):
            kept = self._kept_for(key)
            if kept is not None and (kept.complete or not self._take()):
                return _answer(kept, key)
            if kept is None and not self._take():
                return _NONE  # over the rate, and nothing kept to answer from
            entry = _Entry(asyncio.ensure_future(self._fetch(key)), self._clock())
            self._cache[key] = entry
            self._cache.move_to_end(key)
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        try:
            return _answer(await asyncio.shield(entry.task), key)
        except CookedError:  # a completion is a courtesy: the person can still type the title
            return _NONE

    def _fresh(self, entry: _Entry, *, done: bool) -> bool:
        """Kept for less than CACHE_SECONDS and not failed (and, with ``done``, answered)."""
        task = entry.task
        if self._clock() - entry.at > CACHE_SECONDS or (
            task.done() and (task.cancelled() or task.exception())
        ):
            return False
        return task.done() or not done

    def _kept_for(self, key: str) -> _Found | None:
        """The kept answer for the longest typed value inside ``key``, preferring one holding every match
        (the newest recipes, kept for nothing typed, are a list: never every match of a search)."""
        kept = [
            (bool(typed) and entry.task.result().complete, len(typed), entry.task.result().titles)
            for typed, entry in self._cache.items()
            if typed in key and self._fresh(entry, done=True)
        ]
        if not kept:
            return None
        complete, _, titles = max(kept, key=lambda one: one[:2])
        return _Found(titles, complete)

    def _take(self) -> bool:
        """One Cooked request from the token bucket, if there is one."""
        now = self._clock()
        self._tokens = min(SEARCH_BURST, self._tokens + (now - self._filled) * SEARCH_PER_SECOND)
        self._filled = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    async def _fetch(self, key: str) -> _Found:
        client = self._client
        if not key:
            items = await client.list_recipes(1, MAX_VALUES + 1)
            return _Found(_titles(items, key), complete=len(items) <= MAX_VALUES)
        items = await client.search_recipes(key, 1)
        complete = len(items) < SEARCH_PAGE_SIZE
        if not complete and self._take():
            more = await client.search_recipes(key, 2)
            items, complete = [*items, *more], len(more) < SEARCH_PAGE_SIZE
        return _Found(_titles(items, key), complete)


def _titles(items: list[CookedRecipeSummary], key: str) -> list[str]:
    titles = (one_line(item.title, "", MAX_TITLE_CHARS) for item in items)
    return list(dict.fromkeys(title for title in titles if title and key in title.casefold()))


#: No titles, and maybe some match: the person can still type the title.
_NONE = types.Completion(values=[], has_more=True)


def _answer(found: _Found, key: str) -> types.Completion:
    """Titles starting with what was typed first, then those with a word starting with it."""
    matches = sorted(
        (title for title in found.titles if key in title.casefold()),
        key=lambda t: (
            not t.casefold().startswith(key),
            not any(w.startswith(key) for w in t.casefold().split()),
        ),
    )
    more = len(matches) > MAX_VALUES or not found.complete
    total = len(matches) if found.complete else None
    return types.Completion(values=matches[:MAX_VALUES], has_more=more, total=total)
