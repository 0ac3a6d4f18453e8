"""Recipe titles for completing a prompt's recipe argument (completion/complete).

A client asks again at every keystroke, so each distinct typed value costs one Cooked request
(a search, or the newest recipes for nothing typed), kept for ``CACHE_SECONDS``; at most
``MAX_CACHED`` typed values are kept, the oldest going first. Identical requests arriving together
share the one request. Titles are Cooked's (from web pages): they go to the client as values to
pick, on one bounded line each, never into our own text.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .exceptions import CookedError
from .text import one_line

if TYPE_CHECKING:
    from .cooked.client import CookedClient

#: Values one completion answers (the MCP spec's own limit; Cooked's search pages hold 20 too).
MAX_VALUES = 20
#: How long one typed value's titles are kept.
CACHE_SECONDS = 30.0
#: Typed values kept at once.
MAX_CACHED = 64
#: Characters of the typed value used; a longer one is cut (a title that long matches nothing new).
MAX_TYPED_CHARS = 200
#: Characters of one title offered.
MAX_TITLE_CHARS = 200


@dataclass
class _Entry:
    task: asyncio.Task[list[str]]
    at: float


class RecipeTitles:
    """The account's recipe titles matching what was typed, briefly cached."""

    def __init__(
        self, client: Callable[[], CookedClient], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._client = client
        self._clock = clock
        self._cache: OrderedDict[str, _Entry] = OrderedDict()

    # implements: extensions.COMPLETION.1, extensions.COMPLETION.2, extensions.COMPLETION.3, extensions.COMPLETION.4
    async def matching(self, typed: str) -> list[str]:
        """At most MAX_VALUES titles containing ``typed`` (case-insensitive), those starting with it
        first; none when Cooked fails."""
        key = " ".join(typed[:MAX_TYPED_CHARS].split()).casefold()
        now = self._clock()
        entry = self._cache.get(key)
        if entry is None or now - entry.at > CACHE_SECONDS or _failed(entry.task):
            entry = _Entry(asyncio.ensure_future(self._fetch(key)), now)
            self._cache[key] = entry
            self._cache.move_to_end(key)
            while len(self._cache) > MAX_CACHED:
                self._cache.popitem(last=False)
        try:
            return await asyncio.shield(entry.task)
        except CookedError:
            return []  # a completion is a courtesy: the person can still type the title

    async def _fetch(self, key: str) -> list[str]:
        client = self._client()
        items = await (client.search_recipes(key, 1) if key else client.list_recipes(1, MAX_VALUES))
        titles = (one_line(item.title, "", MAX_TITLE_CHARS) for item in items)
        found = _unique([title for title in titles if title and key in title.casefold()])
        return sorted(found, key=lambda title: _rank(title, key))[:MAX_VALUES]


def _rank(title: str, key: str) -> int:
    """Titles starting with what was typed first, then those with a word starting with it."""
    folded = title.casefold()
    if folded.startswith(key):
        return 0
    return 1 if any(word.startswith(key) for word in folded.split()) else 2


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _failed(task: asyncio.Task[list[str]]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)
