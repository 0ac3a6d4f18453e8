"""Recipe-title completion's bounds (SECURITY.md): at most 20 values, at most two Cooked requests
per distinct typed value while cached, 30 s and 64 typed values kept, identical requests sharing
them, Cooked requests capped in rate, a Cooked failure answering nothing rather than an error; and
its truth: hasMore and total as Cooked's results are, longer typed values answered from a complete
answer. The real process shows the truth and the rate cap to a client."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from servers import server_env, stdio_client
from sessions import client_for

import cooked_mcp.completion as completion
from cooked_fake import FakeCooked
from cooked_mcp.completion import (
    CACHE_SECONDS,
    MAX_CACHED,
    MAX_TITLE_CHARS,
    MAX_TYPED_CHARS,
    MAX_VALUES,
    SEARCH_BURST,
    SEARCH_PER_SECOND,
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
    titles = RecipeTitles(cooked, clock=clock)
    async with anyio.create_task_group() as group:  # arriving together, they share one request
        for _ in range(3):
            group.start_soon(titles.matching, "soup")
    assert (await titles.matching("  SOUP ")).values == (await titles.matching("soup")).values != []
    assert searches(fake) == ["soup"]
    clock.now += CACHE_SECONDS + 1
    await titles.matching("soup")
    assert searches(fake) == ["soup", "soup"]


@pytest.mark.req("extensions.COMPLETION.4")
async def test_at_most_64_typed_values_are_kept_the_oldest_going_first(
    fake: FakeCooked, cooked: CookedClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(completion, "SEARCH_BURST", 1000)  # the rate cap is not what this case is about
    titles = RecipeTitles(cooked)
    for n in range(MAX_CACHED + 1):
        await titles.matching(f"x{n:02d}")  # none inside another: each is searched
    await titles.matching(f"x{MAX_CACHED}")  # still kept
    await titles.matching("x00")  # dropped, so asked again
    assert searches(fake).count("x00") == 2
    assert searches(fake).count(f"x{MAX_CACHED}") == 1


@pytest.mark.req("extensions.COMPLETION.1", "extensions.COMPLETION.2")
async def test_at_most_20_titles_containing_what_was_typed_those_starting_with_it_first(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    titles = RecipeTitles(cooked)
    found = (await titles.matching("so")).values
    assert found and all("so" in title.casefold() for title in found)
    starting = [title for title in found if title.casefold().startswith("so")]
    assert found[: len(starting)] == starting
    newest = await titles.matching("")
    assert len(newest.values) == MAX_VALUES and newest.has_more


@pytest.mark.req("extensions.COMPLETION.1")
async def test_a_cooked_failure_completes_nothing_and_is_asked_again_next_time(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    titles = RecipeTitles(cooked)
    fake.fail("GET", SEARCH, status=404, times=None)
    assert (await titles.matching("soup")).values == []
    fake.reset()
    assert (await titles.matching("soup")).values != []


@pytest.mark.req("extensions.COMPLETION.1")
async def test_a_long_typed_value_and_a_long_title_are_cut(fake: FakeCooked, cooked: CookedClient) -> None:
    await cooked.save_recipe("Soup of " + "x" * 400 + "\nmore", "## Ingredients\n- water", None)
    titles = RecipeTitles(cooked)
    [long_title] = [
        title for title in (await titles.matching("soup of")).values if title.startswith("Soup of x")
    ]
    assert len(long_title) == MAX_TITLE_CHARS and long_title.endswith("…") and "\n" not in long_title
    await titles.matching("y" * 1000)
    assert searches(fake)[-1] == "y" * MAX_TYPED_CHARS


def add_titled(fake: FakeCooked, title: str, count: int) -> None:
    for n in range(count):
        fake.state.add_recipe(f"{title} {n}", "## Ingredients\n- 1 egg", 2)


@pytest.mark.req("extensions.COMPLETION.3", "extensions.COMPLETION.5", "extensions.COMPLETION.7")
async def test_has_more_and_total_say_what_cooked_holds_and_a_complete_answer_serves_longer_values(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    """25 matches: 20 values, more, 25 in all (a full first page, so a second is read); exactly 20:
    no more; 45: more, total unknown. A longer value inside a complete answer costs no search; one
    inside an incomplete answer is searched."""
    add_titled(fake, "Qz stew", 25)
    add_titled(fake, "Wq pie", 20)
    add_titled(fake, "Jx bake", 45)
    titles = RecipeTitles(cooked)

    qz, wq, jx = [await titles.matching(typed) for typed in ("qz", "wq", "jx")]
    longer = await titles.matching("QZ stew 1")
    inside_incomplete = await titles.matching("jx bake 1")

    assert (len(qz.values), qz.has_more, qz.total) == (20, True, 25)
    assert (len(wq.values), wq.has_more, wq.total) == (20, False, 20)
    assert (len(jx.values), jx.has_more, jx.total) == (20, True, None)
    assert longer.values == [*(f"Qz stew {n}" for n in range(19, 9, -1)), "Qz stew 1"]  # newest first
    assert (longer.has_more, longer.total) == (False, 11)
    assert inside_incomplete.values and not inside_incomplete.has_more
    assert searches(fake) == ["qz", "qz", "wq", "wq", "jx", "jx", "jx bake 1"]


@pytest.mark.req("extensions.COMPLETION.6", "extensions.COMPLETION.1")
async def test_cooked_requests_are_capped_in_rate_and_over_it_the_kept_answers_answer(
    fake: FakeCooked, cooked: CookedClient
) -> None:
    add_titled(fake, "Jx bake", 45)
    clock = Clock()
    titles = RecipeTitles(cooked, clock=clock)

    jx = await titles.matching("jx")  # a full first page: two requests, and still incomplete
    for n in range(SEARCH_BURST - 2):
        await titles.matching(f"a{n:02d}")
    over = await titles.matching("b00")
    from_kept = await titles.matching("jx bake 4")
    assert len(searches(fake)) == SEARCH_BURST
    clock.now += 1 / SEARCH_PER_SECOND
    after = await titles.matching("b00")

    assert (over.values, over.has_more) == ([], True)
    assert from_kept.values == [title for title in jx.values if "jx bake 4" in title.casefold()] != []
    assert from_kept.has_more and from_kept.total is None
    assert searches(fake)[SEARCH_BURST:] == ["b00"] and not after.has_more


@pytest.fixture
async def process(fake: FakeCooked, tmp_path: Path) -> AsyncIterator[Client]:
    """The real cooked-mcp process over stdio, completing from ``fake``."""
    async with stdio_client(server_env(tmp_path, fake.base_url)) as client:
        yield client


SHOP = types.PromptReference(type="ref/prompt", name="shop_for_recipe")


@pytest.mark.req("extensions.COMPLETION.5", "extensions.COMPLETION.7")
async def test_the_process_tells_a_client_whether_more_titles_match_and_how_many(
    fake: FakeCooked, process: Client
) -> None:
    add_titled(fake, "Qz stew", 25)

    typed = await process.complete(SHOP, {"name": "recipe", "value": "qz"})
    longer = await process.complete(SHOP, {"name": "recipe", "value": "qz stew 2"})

    assert (len(typed.completion.values), typed.completion.has_more, typed.completion.total) == (20, True, 25)
    assert longer.completion.values == [*(f"Qz stew {n}" for n in range(24, 19, -1)), "Qz stew 2"]
    assert (longer.completion.has_more, longer.completion.total) == (False, 6)
    assert searches(fake) == ["qz", "qz"]


@pytest.mark.req("extensions.COMPLETION.6")
async def test_500_distinct_typed_values_cost_cooked_no_more_than_the_rate_cap(
    fake: FakeCooked, process: Client
) -> None:
    started = time.monotonic()
    answers = [await process.complete(SHOP, {"name": "recipe", "value": f"{n:03d}"}) for n in range(500)]
    elapsed = time.monotonic() - started

    assert all(answer.completion.values == [] for answer in answers)
    assert len(searches(fake)) <= SEARCH_BURST + SEARCH_PER_SECOND * elapsed + 1, elapsed
    assert sum(answer.completion.has_more is False for answer in answers) == len(searches(fake))
