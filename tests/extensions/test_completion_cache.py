"""Recipe-title completion's bounds (SECURITY.md): at most 20 values, one Cooked request per
distinct typed value while cached, 30 s and 64 typed values kept, identical requests sharing one,
and a Cooked failure answering nothing rather than an error."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest
from sessions import client_for

from cooked_fake import FakeCooked
from cooked_mcp.completion import (
    CACHE_SECONDS,
    MAX_CACHED,
    MAX_TITLE_CHARS,
    MAX_TYPED_CHARS,
    MAX_VALUES,
    RecipeTitles,
)
from cooked_mcp.cooked.client import CookedClient

pytestmark = pytest.mark.anyio
SEARCH = "/api/user/recipes/search"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def cooked(fake: FakeCooked) -> AsyncIterator[CookedClient]:
    async with client_for(fake) as client:
        yield client


def searches(fake: FakeCooked) -> list[str]:
    return [r.query["query"][-1] for r in fake.api_requests(renewals=False) if r.path == SEARCH]


@pytest.mark.req("extensions.COMPLETION.3", "extensions.COMPLETION.4")
async def test_one_request_per_typed_value_while_cached_then_again_after_30_s(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    clock = Clock()
    titles = RecipeTitles(lambda: cooked, clock=clock)
    async with anyio.create_task_group() as group:  # arriving together, they share one request
        for _ in range(3):
            group.start_soon(titles.matching, "soup")
    assert await titles.matching("  SOUP ") == await titles.matching("soup")
    assert searches(fake) == ["soup"]
    clock.now += CACHE_SECONDS + 1
    await titles.matching("soup")
    assert searches(fake) == ["soup", "soup"]


@pytest.mark.req("extensions.COMPLETION.4")
async def test_at_most_64_typed_values_are_kept_the_oldest_going_first(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    titles = RecipeTitles(lambda: cooked)
    for n in range(MAX_CACHED + 1):
        await titles.matching(f"x{n}")
    await titles.matching(f"x{MAX_CACHED}")  # still kept
    await titles.matching("x0")  # dropped, so asked again
    assert searches(fake).count("x0") == 2
    assert searches(fake).count(f"x{MAX_CACHED}") == 1


@pytest.mark.req("extensions.COMPLETION.1", "extensions.COMPLETION.2")
async def test_at_most_20_titles_containing_what_was_typed_those_starting_with_it_first(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    titles = RecipeTitles(lambda: cooked)
    found = await titles.matching("so")
    assert found and all("so" in title.casefold() for title in found)
    starting = [title for title in found if title.casefold().startswith("so")]
    assert found[: len(starting)] == starting
    newest = await titles.matching("")
    assert len(newest) == MAX_VALUES


@pytest.mark.req("extensions.COMPLETION.1")
async def test_a_cooked_failure_completes_nothing_and_is_asked_again_next_time(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    titles = RecipeTitles(lambda: cooked)
    fake.fail("GET", SEARCH, status=404, times=None)
    assert await titles.matching("soup") == []
    fake.reset()
    assert await titles.matching("soup") != []


@pytest.mark.req("extensions.COMPLETION.1")
async def test_a_long_typed_value_and_a_long_title_are_cut(fake: FakeCooked, cooked: CookedClient) -> None:
    await cooked.save_recipe("Soup of " + "x" * 400 + "\nmore", "## Ingredients\n- water", None)
    titles = RecipeTitles(lambda: cooked)
    [long_title] = [title for title in await titles.matching("soup of") if title.startswith("Soup of x")]
    assert len(long_title) == MAX_TITLE_CHARS and long_title.endswith("…") and "\n" not in long_title
    await titles.matching("y" * 1000)
    assert searches(fake)[-1] == "y" * MAX_TYPED_CHARS
