"""Issue 29's three stories, through the real cooked-mcp process over stdio with the official client:
a page the person asked to import once is in Cooked once, whatever the client's timeout does.

Each waits on the fake's request log or on the server's answers, never on a guessed sleep. The
stories that need no setting of their own share one process (each imports its own page; the fake
is reset between them, so the process logs in again and the 401 before it is not counted).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from recipe_support import failed, ok
from servers import server_env, stdio_client, write_limits
from sessions import text_of, until

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio

IMPORT = ("POST", "/api/new")


def imports_sent(fake: FakeCooked) -> int:
    return sum(1 for method, path, _ in fake.api_calls(renewals=False) if (method, path) == IMPORT)


def titled(fake: FakeCooked, title: str) -> list[str]:
    return [recipe.id for recipe in fake.state.recipes.values() if recipe.title == title]


def carried_out(fake: FakeCooked) -> int:
    """Imports that reached the fake and that it chose an answer for (so carried out, or refused)."""
    return sum(1 for r in fake.api_requests(renewals=False) if (r.method, r.path) == IMPORT and r.status)


async def settled(fake: FakeCooked, count: int = 1) -> None:
    await until(fake, lambda _: carried_out(fake) >= count)


def started(fake: FakeCooked, tmp_path: Path, **extra: str) -> Client:
    env = server_env(tmp_path, fake.base_url, **extra)
    return stdio_client(env)


def limited(fake: FakeCooked, tmp_path: Path, **limits: float) -> Client:
    """A process answering imports after 0.2 s, with ``[mcp.limits]`` set to ``limits``."""
    env = server_env(tmp_path, fake.base_url, COOKED_MCP_IMPORT_ANSWER_SECONDS="0.2")
    write_limits(env, **limits)
    return stdio_client(env)


async def import_until_done(client: Client, url: str) -> types.CallToolResult:
    """The first answer to importing ``url`` that is not "still running"."""
    with anyio.fail_after(20):
        while True:
            answer = await client.call_tool("save_recipe", {"source": "url", "url": url})
            if not (answer.structured_content or {}).get("import_running"):
                return answer


@pytest.fixture(scope="module")
async def shared(running_fake: FakeCooked, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One process for the stories that need no setting of their own."""
    async with started(running_fake, tmp_path_factory.mktemp("stories")) as client:
        yield client


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "recipes.SAVE.9", "recipes.VERIFICATION.1")
async def test_a_client_timeout_cancels_the_call_not_the_import_and_the_retry_gets_its_recipe(
    shared: Client, fake: FakeCooked
) -> None:
    """Story 1: the client gives up at 1.5 s (and sends notifications/cancelled), then retries."""
    url = "https://example.org/recipes/slow-stew"
    fake.fail_with("slow", *IMPORT, seconds=3)

    client = shared
    with pytest.raises(MCPError, match=r"(?i)timed out"):
        await client.call_tool("save_recipe", {"source": "url", "url": url}, read_timeout_seconds=1.5)
    retry = await client.call_tool("save_recipe", {"source": "url", "url": url})

    text, out = ok(retry, "save_recipe")
    assert imports_sent(fake) == 1
    assert titled(fake, "Slow Stew") == [out["recipe_id"]]
    assert out["saved"] is True
    assert text.startswith("This page was already imported") and "not imported again" in text


@pytest.mark.req("recipes.SAVE.3", "tools.RESPONSES.6", "recipes.VERIFICATION.1")
async def test_a_promise_of_no_second_import_holds_when_the_answer_to_the_import_is_lost(
    fake: FakeCooked, tmp_path: Path
) -> None:
    """Story 2: answered "still running"; Cooked then saves the page and the answer is lost."""
    url = "https://example.org/recipes/lost-stew"
    fake.fail_with("answer_lost", *IMPORT, seconds=1.5)

    async with started(fake, tmp_path, COOKED_MCP_IMPORT_ANSWER_SECONDS="0.5") as client:
        first = await client.call_tool("save_recipe", {"source": "url", "url": url})
        await settled(fake)
        with anyio.fail_after(20):
            retry = await client.call_tool("save_recipe", {"source": "url", "url": url})
            while (retry.structured_content or {}).get("import_running"):
                retry = await client.call_tool("save_recipe", {"source": "url", "url": url})
        again = await client.call_tool("save_recipe", {"source": "url", "url": url})
        listed = await client.call_tool("read", {"target": "recipes", "limit": 3})

    promise = ok(first, "save_recipe")[0]
    assert "starts no second import" in promise
    for answer in (retry, again):
        text = failed(answer)
        assert "nothing was sent to cooked again" in text.lower() and "may" in text
        assert "read target=recipes" in text and "after that read" in text
    assert imports_sent(fake) == 1 and len(titled(fake, "Lost Stew")) == 1
    assert "Lost Stew" in text_of(listed)


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "recipes.DELETE.1", "recipes.VERIFICATION.1")
async def test_deleting_the_imported_recipe_ends_the_memory_of_its_import(
    shared: Client, fake: FakeCooked
) -> None:
    """Story 3: import, delete, import again: the second import really imports, and its ID reads."""
    url = "https://example.org/recipes/remembered-stew"

    client = shared
    first = ok(await client.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")[1]
    ok(await client.call_tool("delete_recipe", {"recipe_id": first["recipe_id"]}), "delete_recipe")
    second_text, second = ok(
        await client.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe"
    )
    read = await client.call_tool("read", {"target": "recipe", "recipe_id": second["recipe_id"]})

    assert imports_sent(fake) == 2
    assert second["recipe_id"] != first["recipe_id"] and not second_text.startswith("This page was already")
    assert ok(read, "read")[1]["recipe"]["title"] == "Remembered Stew"
    assert titled(fake, "Remembered Stew") == [second["recipe_id"]]


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "recipes.VERIFICATION.1")
async def test_a_new_process_remembers_no_import(shared: Client, fake: FakeCooked, tmp_path: Path) -> None:
    """Kept outcomes live in memory only: after a restart the same page is imported again."""
    url = "https://example.org/recipes/restarted-stew"
    answers = [ok(await shared.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")]
    async with started(fake, tmp_path) as client:
        answers.append(
            ok(await client.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")
        )

    assert imports_sent(fake) == 2
    assert not answers[1][0].startswith("This page was already imported")
    assert answers[0][1]["recipe_id"] != answers[1][1]["recipe_id"]


@pytest.mark.req(
    "recipes.SAVE.3", "recipes.SAVE.5", "recipes.SAVE.7", "recipes.DELETE.1", "recipes.VERIFICATION.1"
)
async def test_saving_an_imported_draft_ends_the_memory_of_the_import_that_made_it(
    shared: Client, fake: FakeCooked
) -> None:
    """The draft path: import (a DRAFT), save the draft, delete the recipe, import again. The
    saved draft is gone, so the import that made it no longer answers: the page is imported anew."""
    url = "https://example.org/recipes/drafted-stew"
    fake.set_import_result(url, "draft")

    client = shared
    first = ok(await client.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")[1]
    draft_id = first["draft"]["draft_id"]
    saved = ok(
        await client.call_tool(
            "save_recipe",
            {"source": "draft", "draft_id": draft_id, "markdown": "## x\n- y", "portions": 4},
        ),
        "save_recipe",
    )[1]
    ok(await client.call_tool("delete_recipe", {"recipe_id": saved["recipe_id"]}), "delete_recipe")
    again_text, again = ok(
        await client.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe"
    )

    assert imports_sent(fake) == 2
    assert draft_id not in again_text and not again_text.startswith("This page was already")
    assert again["draft"]["draft_id"] != draft_id


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "recipes.VERIFICATION.1")
async def test_spellings_of_one_page_import_it_once_and_another_path_or_query_is_another_page(
    shared: Client, fake: FakeCooked
) -> None:
    """A fragment, the default port, the host's case, a percent-escaped letter and an empty query
    name the page the first call imported; a path differing in case, or a query, do not."""
    page = "https://example.com/recipes/Soup"
    spellings = [
        f"{page}#top",
        "https://example.com:443/recipes/Soup",
        "https://EXAMPLE.com/recipes/%53oup",
        f"{page}?",
        "https://Example.COM:443/recipes/%53%6Fup?#method",
    ]
    others = ["https://example.com/recipes/soup", f"{page}?page=2"]

    first = ok(await shared.call_tool("save_recipe", {"source": "url", "url": page}), "save_recipe")[1]
    for url in spellings:
        text, out = ok(await shared.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")
        assert text.startswith("This page was already imported"), (url, text)
        assert out["recipe_id"] == first["recipe_id"]
    for url in others:
        text, out = ok(await shared.call_tool("save_recipe", {"source": "url", "url": url}), "save_recipe")
        assert (
            not text.startswith("This page was already imported") and out["recipe_id"] != first["recipe_id"]
        )

    assert imports_sent(fake) == 1 + len(others)


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.2", "tools.RESPONSES.6", "recipes.VERIFICATION.1")
async def test_at_the_count_bound_no_promised_import_is_forgotten_and_a_new_change_is_refused(
    fake: FakeCooked, tmp_path: Path
) -> None:
    """Each of the first three imports is answered "still running", a promise that the same URL
    starts no second import: at the bound (3 here, 100 by default) the fourth and fifth imports
    and a prepared save are refused before Cooked, and a retry of the oldest reports its import."""
    fake.fail_with("slow", *IMPORT, times=None, seconds=0.5)
    urls = [f"https://example.org/recipes/promised-stew-{n}" for n in range(5)]
    prepared = {"source": "prepared", "title": "Stew", "markdown": "## Ingredients\n- 1 leek", "portions": 2}

    async with limited(fake, tmp_path, kept_outcomes=3) as client:
        answers = [await client.call_tool("save_recipe", {"source": "url", "url": url}) for url in urls]
        refused_save = await client.call_tool("save_recipe", prepared)
        await settled(fake, imports_sent(fake))  # every import that was started has ended
        oldest = await import_until_done(client, urls[0])

    assert all(ok(answer, "save_recipe")[1]["import_running"] for answer in answers[:3])
    assert ok(oldest, "save_recipe")[0].startswith("This page was already imported")
    assert imports_sent(fake) == 3 and len(titled(fake, "Promised Stew 0")) == 1
    for refused in (*answers[3:], refused_save):
        text = failed(refused)
        assert text.startswith("Nothing was sent to Cooked:") and "kept_outcomes = 3" in text, text
        assert "try again" in text
    assert not any(path == "/api/recipes" for _, path, _ in fake.api_calls(renewals=False))


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.5", "tools.RESPONSES.6", "recipes.VERIFICATION.1")
async def test_at_the_size_bound_no_promised_draft_is_forgotten_and_a_new_import_is_refused(
    fake: FakeCooked, tmp_path: Path
) -> None:
    """A promised import's draft (a page's markdown) alone reaches a size bound below it (16 Mi
    characters by default): the next import is refused, and the first's draft is still reported."""
    fake.fail_with("slow", *IMPORT, times=None, seconds=0.5)
    urls = [f"https://example.org/recipes/drafted-soup-{n}" for n in range(2)]
    for url in urls:
        fake.set_import_result(url, "draft")

    async with limited(fake, tmp_path, kept_outcome_chars=100) as client:
        first = await client.call_tool("save_recipe", {"source": "url", "url": urls[0]})
        drafted = await import_until_done(client, urls[0])
        refused = await client.call_tool("save_recipe", {"source": "url", "url": urls[1]})
        again = await client.call_tool("save_recipe", {"source": "url", "url": urls[0]})

    assert ok(first, "save_recipe")[1]["import_running"] is True
    draft_id = ok(drafted, "save_recipe")[1]["draft"]["draft_id"]
    again_text, again_out = ok(again, "save_recipe")
    assert again_text.startswith("This page was already imported")
    assert again_out["draft"]["draft_id"] == draft_id and imports_sent(fake) == 1
    text = failed(refused)
    assert text.startswith("Nothing was sent to Cooked:") and "kept_outcome_chars = 100" in text, text


@pytest.mark.req("recipes.SAVE.2", "tools.RESPONSES.6", "recipes.VERIFICATION.1")
async def test_at_the_count_bound_an_outcome_the_agent_never_received_is_kept_and_its_retry_sends_nothing(
    fake: FakeCooked, tmp_path: Path
) -> None:
    """A save whose call timed out ends unreceived: its retry must get its outcome, so at the bound
    (1 here) it is kept like a promise and another change is refused, not dropped to make room."""
    save = {"source": "prepared", "title": "Stew", "markdown": "## Ingredients\n- 1 leek", "portions": 2}
    other = {**save, "title": "Soup"}
    fake.fail_with("slow", "POST", "/api/recipes", seconds=1)

    async with limited(fake, tmp_path, kept_outcomes=1) as client:
        with pytest.raises(MCPError, match=r"(?i)timed out"):
            await client.call_tool("save_recipe", save, read_timeout_seconds=0.3)
        await until(fake, lambda _: len(titled(fake, "Stew")) == 1)
        await client.list_tools()  # a round trip: the server has taken Cooked's answer by now
        refused = await client.call_tool("save_recipe", other)
        retry = await client.call_tool("save_recipe", save)

    assert len(titled(fake, "Stew")) == 1 and titled(fake, "Soup") == []
    assert "nothing was sent to cooked again" in ok(retry, "save_recipe")[0].lower()
    text = failed(refused)
    assert text.startswith("Nothing was sent to Cooked:") and "kept_outcomes = 1" in text, text
