"""Following a list's or a search's continuation visits every result exactly once.

A client that reads only the structured output calls ``read`` again with ``page=next_page``
and the same ``query`` and ``limit`` until ``next_page`` is absent. For any number of
results, any starting page and any limit, that walk must return exactly the results from the
starting position on, in order, each once; the text must name the same next call; and no
call may make more Cooked requests than the Cooked pages its window spans.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from recipe_support import ok

from cooked_fake import SEED_USERNAME, FakeCooked, Recipe

pytestmark = pytest.mark.anyio

PAGING = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
SEARCH_PAGE = 20  # Cooked's fixed search page size (cooked-api.md)
NEEDLE = "quokka"


def fill(fake: FakeCooked, matching: int, others: int) -> list[tuple[str, str]]:
    """``matching`` recipes whose titles hold NEEDLE, interleaved with ``others`` that do not;
    returns every (ID, title) newest first (the order Cooked lists and searches in)."""
    fake.reset()
    titles = [f"Quokka pie {n}" for n in range(matching)] + [f"Plain stew {n}" for n in range(others)]
    titles.sort(key=lambda t: int(t.rsplit(" ", 1)[1]) * 2 + t.startswith("Plain"))
    with fake.state.lock:
        fake.state.recipes = {
            f"p-{n}": Recipe(f"p-{n}", title, "## Steps\n1. Cook", 2, SEED_USERNAME)
            for n, title in enumerate(titles, 1)
        }
        return [(r.id, r.title or "") for r in fake.state.newest_first()]


def continuation_in_text(text: str) -> dict[str, str] | None:
    """The read call the text proposes for the next page, as parameter=value pairs."""
    match = re.search(r"^More may exist on the next page: (read .*?)(?: \(keep .*)?\.$", text, re.M)
    if match is None:
        return None
    return dict(re.findall(r'(\w+)=("[^"]*"|\S+)', match.group(1)))


async def walk(
    client: Client, fake: FakeCooked, query: str | None, page: int, limit: int, results: int
) -> list[str]:
    seen: list[str] = []
    arguments: dict[str, Any] = {"target": "recipes", "page": page, "limit": limit}
    if query is not None:
        arguments["query"] = query
    for _ in range(math.ceil(results / limit) + 2):  # a bound, so a loop bug fails instead of hanging
        fake.clear_requests()
        text, out = ok(await client.call_tool("read", arguments), "read")
        window = ((arguments["page"] - 1) * limit, arguments["page"] * limit)
        cooked_pages = 1 if query is None else (window[1] - 1) // SEARCH_PAGE - window[0] // SEARCH_PAGE + 1
        assert len(fake.api_calls(renewals=False)) <= cooked_pages
        assert (out["page"], out["limit"], out.get("query")) == (arguments["page"], limit, query)
        seen += [recipe["id"] for recipe in out["recipes"]]
        assert out["more_available"] is ("next_page" in out)
        proposed = continuation_in_text(text)
        if "next_page" not in out:
            assert proposed is None and ("There are no further pages." in text or not out["recipes"])
            return seen
        assert out["next_page"] == arguments["page"] + 1
        expected = {"target": "recipes", "page": str(out["next_page"]), "limit": str(limit)}
        assert proposed == (expected if query is None else {**expected, "query": query})
        arguments["page"] = out["next_page"]
    raise AssertionError(f"next_page never ended: {seen}")


@pytest.mark.req(
    "recipes.PAGINATION.1",
    "recipes.PAGINATION.2",
    "recipes.PAGINATION.3",
    "recipes.PAGINATION.6",
    "recipes.READ.1",
    "recipes.READ.2",
    "api-client.LIMITS.3",
)
@PAGING
@given(
    matching=st.integers(0, 75),
    others=st.integers(0, 12),
    page=st.integers(1, 6),
    limit=st.integers(1, 30),
    search=st.booleans(),
)
async def test_following_next_page_visits_every_result_exactly_once(
    fake: FakeCooked, client: Client, matching: int, others: int, page: int, limit: int, search: bool
) -> None:
    newest_first = fill(fake, matching, others)
    hits = [rid for rid, title in newest_first if not search or NEEDLE in title.casefold()]

    seen = await walk(client, fake, NEEDLE if search else None, page, limit, len(hits))

    assert seen == hits[(page - 1) * limit :]
