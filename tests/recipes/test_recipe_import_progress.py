"""A slow URL import: progress while it runs, a cancelled call that leaves it running, and an answer by
the deadline while a longer import finishes in the background, never started twice (handlers/writes.py)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from recipe_support import failed, ok
from sessions import client_for, cooked_session, text_of

import cooked_mcp.handlers.recipes as recipe_handlers
import cooked_mcp.handlers.writes as writes
from cooked_fake import FakeCooked
from cooked_mcp.app import build_server
from cooked_mcp.config.limits import Limits
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.models import ImportResult

pytestmark = pytest.mark.anyio

TICK = 0.05
URL = "https://example.org/recipes/slow-braise"


@pytest.fixture
def fast_ticks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ticks every 50 ms instead of every few seconds, so a half-second import shows several."""
    monkeypatch.setattr(recipe_handlers, "PROGRESS_INTERVAL_SECONDS", TICK)


@dataclass
class Imports:
    """How each Cooked import request ended inside the server: "answered" or "cancelled"."""

    outcomes: list[str] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_until_ended(self) -> None:
        with anyio.fail_after(10):
            await self.ended.wait()


@pytest.fixture
def imports(monkeypatch: pytest.MonkeyPatch) -> Imports:
    watch = Imports()
    original = CookedClient.import_url

    async def watched(self: CookedClient, url: str) -> ImportResult:
        watch.started.set()
        try:
            result = await original(self, url)
        except asyncio.CancelledError:
            watch.outcomes.append("cancelled")
            watch.cancelled.set()
            watch.ended.set()
            raise
        watch.outcomes.append("answered")
        watch.ended.set()
        return result

    monkeypatch.setattr(CookedClient, "import_url", watched)
    return watch


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "tools.RESPONSES.1")
@pytest.mark.parametrize("result", ["saved", "draft"])
async def test_a_slow_import_reports_progress_until_it_answers(
    fake: FakeCooked, fast_ticks: None, result: str
) -> None:
    fake.set_import_result(URL, "saved" if result == "saved" else "draft")
    fake.fail_with("slow", "POST", "/api/new", seconds=0.5)
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with cooked_session(fake) as client:
        outcome = await client.call_tool(
            "save_recipe", {"source": "url", "url": URL}, progress_callback=on_progress
        )
        count = len(reports)
        await anyio.sleep(5 * TICK)

    _, out = ok(outcome, "save_recipe")
    assert out["saved"] is (result == "saved")
    assert count >= 4 and len(reports) == count  # several while waiting, none once answered
    progress = [p for p, _, _ in reports]
    assert progress == sorted(set(progress)) and progress[0] == 0
    assert all(total is None and message and "importing the page" in message for _, total, message in reports)


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4")
async def test_progress_without_a_progress_token_is_silently_skipped(
    fake: FakeCooked, fast_ticks: None
) -> None:
    fake.fail_with("slow", "POST", "/api/new", seconds=0.3)

    async with cooked_session(fake) as client:
        outcome = await client.call_tool("save_recipe", {"source": "url", "url": URL})

    ok(outcome, "save_recipe")


@pytest.mark.req("recipes.SAVE.3", "tools.RESPONSES.6")
async def test_a_timed_out_call_leaves_its_import_running_and_the_server_keeps_serving(
    fake: FakeCooked, fast_ticks: None, imports: Imports
) -> None:
    fake.fail_with("slow", "POST", "/api/new", seconds=1.5)
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with cooked_session(fake) as client:
        with pytest.raises(MCPError, match=r"(?i)timed out"):
            await client.call_tool(
                "save_recipe",
                {"source": "url", "url": URL},
                read_timeout_seconds=0.3,
                progress_callback=on_progress,
            )
        ticks = len(reports)
        started = time.monotonic()
        listed = await client.call_tool("read", {"target": "recipes", "limit": 1})
        answered_in = time.monotonic() - started
        await imports.wait_until_ended()
        await anyio.sleep(4 * TICK)

    assert ticks >= 2 and len(reports) == ticks  # the ticker stopped with the handler
    ok(listed, "read")
    assert answered_in < 1  # not queued behind the abandoned call's import
    assert imports.outcomes == ["answered"]  # the call was cancelled, the import was not
    assert fake.api_calls()[0] == ("POST", "/api/new", {"url": URL})


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "recipes.SAVE.9")
async def test_a_cancelled_call_leaves_its_import_running_and_its_outcome_answers_the_next_call(
    fake: FakeCooked, fast_ticks: None, imports: Imports
) -> None:
    fake.fail_with("slow", "POST", "/api/new", seconds=1)

    async with cooked_session(fake) as client:
        with anyio.move_on_after(0.3) as scope:
            await client.call_tool("save_recipe", {"source": "url", "url": URL})
        await imports.wait_until_ended()
        again = await client.call_tool("save_recipe", {"source": "url", "url": URL})

    assert scope.cancelled_caught
    text, out = ok(again, "save_recipe")
    assert text.startswith("This page was already imported") and out["saved"] is True
    assert out["recipe_id"] in fake.state.recipes
    assert imports.outcomes == ["answered"] and imports_sent(fake) == 1


# --- an import longer than the answer deadline ---------------------------------------------------

DEADLINE = 0.3  # the configured answer deadline in these tests; the fake's import is much slower


async def import_until_done(client: Client, url: str) -> tuple[types.CallToolResult, list[str]]:
    """Call save_recipe for ``url`` until it stops answering "still running"; every answer's text."""
    texts: list[str] = []
    with anyio.fail_after(30):
        while True:
            result = await client.call_tool("save_recipe", {"source": "url", "url": url})
            texts.append(text_of(result))
            if result.is_error or not (result.structured_content or {}).get("import_running"):
                return result, texts
            await anyio.sleep(0.1)


def imports_sent(fake: FakeCooked) -> int:
    return sum(1 for method, path, _ in fake.api_calls() if (method, path) == ("POST", "/api/new"))


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4", "tools.RESPONSES.1", "tools.RESPONSES.2")
@pytest.mark.parametrize("result", ["saved", "draft"])
async def test_an_import_past_the_deadline_answers_still_running_and_is_never_started_twice(
    fake: FakeCooked, fast_ticks: None, imports: Imports, result: str
) -> None:
    fake.set_import_result(URL, "saved" if result == "saved" else "draft")
    fake.fail_with("slow", "POST", "/api/new", seconds=3)
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with cooked_session(fake, import_answer_seconds=DEADLINE) as client:
        first = await client.call_tool(
            "save_recipe", {"source": "url", "url": URL}, progress_callback=on_progress
        )
        unanswered_by_cooked = list(imports.outcomes)
        ticks = len(reports)
        final, texts = await import_until_done(client, URL)
        await anyio.sleep(4 * TICK)

    text, out = ok(first, "save_recipe")
    assert unanswered_by_cooked == []  # the call was answered while Cooked was still working
    assert out == {"source": "url", "saved": False, "import_running": True}
    assert "Do NOT retry" in text and "read target=recipes" in text
    # An agent that sees only the structured output is told the same (ok() checked the words match).
    guidance = first.structured_content or {}
    assert "Do NOT retry" in guidance["notice"] and "read target=recipes" in guidance["next_step"]
    assert ticks >= 1 and len(reports) == ticks  # progress while waiting, none after the answer
    assert any(t.startswith("An earlier save_recipe call started importing this page") for t in texts[:-1])
    final_text, final_out = ok(final, "save_recipe")
    assert final_text.startswith("This page was already imported")
    assert final_out.get("import_running") is None
    assert (final.structured_content or {})["notice"].startswith("This page was already imported")
    if result == "saved":
        assert final_out["saved"] is True and final_out["recipe_id"] in fake.state.recipes
    else:
        assert final_out["saved"] is False and final_out["draft"]["draft_id"]
    assert imports.outcomes == ["answered"] and imports_sent(fake) == 1


@pytest.mark.req("recipes.SAVE.3", "tools.RESPONSES.6")
async def test_a_background_import_that_fails_is_reported_once_then_the_next_call_imports_again(
    fake: FakeCooked,
) -> None:
    fake.set_import_result(URL, "fail")
    fake.fail_with("slow", "POST", "/api/new", seconds=1)

    async with cooked_session(fake, import_answer_seconds=DEADLINE) as client:
        first = await client.call_tool("save_recipe", {"source": "url", "url": URL})
        final, _ = await import_until_done(client, URL)
        reported = imports_sent(fake)
        again = await client.call_tool("save_recipe", {"source": "url", "url": URL})

    assert ok(first, "save_recipe")[1]["import_running"] is True
    text = failed(final)
    assert (
        "Cooked found no recipe on that page" in text and "nothing was sent to cooked again" in text.lower()
    )
    assert reported == 1
    assert "nothing was sent" not in failed(again)
    assert imports_sent(fake) == 2  # the failed one, then, once told, a real second attempt


@pytest.mark.req("recipes.SAVE.3", "tools.RESPONSES.6")
async def test_a_background_import_is_cancelled_at_its_bound_and_its_outcome_is_unknown(
    fake: FakeCooked, imports: Imports, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "BACKGROUND_LIMIT_SECONDS", 1.0)
    fake.fail_with("slow", "POST", "/api/new", seconds=8)

    async with cooked_session(fake, import_answer_seconds=DEADLINE) as client:
        first = await client.call_tool("save_recipe", {"source": "url", "url": URL})
        with anyio.fail_after(10):
            await imports.cancelled.wait()
        unknown, _ = await import_until_done(client, URL)
        ok(await client.call_tool("read", {"target": "recipes"}), "read")
        final, _ = await import_until_done(client, URL)

    assert ok(first, "save_recipe")[1]["import_running"] is True
    text = failed(unknown)
    assert "stopped waiting" in text and "may or may not" in text and "read target=recipes" in text
    assert ok(final, "save_recipe")[1]["saved"] is True  # looked, then imported again on purpose
    assert imports.outcomes == ["cancelled", "answered"]


@pytest.mark.req("recipes.SAVE.3", "tools.RESPONSES.6")
async def test_imports_beyond_the_running_bound_are_refused_before_cooked(
    fake: FakeCooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "MAX_RUNNING", 1)
    fake.fail_with("slow", "POST", "/api/new", seconds=3)

    async with cooked_session(fake, import_answer_seconds=DEADLINE) as client:
        await client.call_tool("save_recipe", {"source": "url", "url": URL})
        refused = await client.call_tool("save_recipe", {"source": "url", "url": "https://example.org/b"})
        await import_until_done(client, URL)

    assert "are still unanswered" in failed(refused) and "Nothing was sent" in text_of(refused)
    assert "(1 of them URL imports)" in text_of(refused)
    assert imports_sent(fake) == 1


@pytest.mark.req("recipes.SAVE.2", "tools.RESPONSES.6")
async def test_a_refusal_beyond_the_running_bound_names_url_imports_only_when_some_run(
    fake: FakeCooked, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "MAX_RUNNING", 1)
    fake.fail_with("slow", "POST", "/api/recipes", seconds=1)
    prepared = {"source": "prepared", "title": "Stew", "markdown": "## Ingredients\n- 1 leek", "portions": 2}

    async with cooked_session(fake, import_answer_seconds=DEADLINE) as client:
        with anyio.move_on_after(0.2):
            await client.call_tool("save_recipe", prepared)  # cancelled: the save runs on
        refused = await client.call_tool("save_recipe", {"source": "url", "url": URL})
        ok(await client.call_tool("save_recipe", prepared), "save_recipe")  # waits for the running save

    assert "1 changes sent to it are still unanswered" in failed(refused), text_of(refused)
    assert "URL import" not in text_of(refused) and imports_sent(fake) == 0


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4")
@pytest.mark.parametrize(
    ("remember_seconds", "limits", "imports_expected"),
    [
        (300.0, Limits(), 2),
        (-1.0, Limits(), 3),
        (300.0, Limits(kept_outcomes=1), 3),
        # Two outcomes of under 300 characters each (190 today): the newer fits, the older does not.
        (300.0, Limits(kept_outcome_chars=300), 3),
    ],
    ids=["remembered", "forgotten-after-a-while", "forgotten-beyond-the-count", "forgotten-beyond-the-size"],
)
async def test_a_finished_import_answers_a_repeat_for_a_while(
    fake: FakeCooked,
    monkeypatch: pytest.MonkeyPatch,
    remember_seconds: float,
    limits: Limits,
    imports_expected: int,
) -> None:
    """Outcomes kept under no promise (these imports answered at once) go beyond either bound."""
    monkeypatch.setattr(writes, "KEEP_SECONDS", remember_seconds)
    other = "https://example.org/quick-salad"

    cooked = client_for(fake)
    async with cooked, Client(build_server(cooked, limits=limits)) as client:
        first = await client.call_tool("save_recipe", {"source": "url", "url": URL})
        await client.call_tool("save_recipe", {"source": "url", "url": other})
        again = await client.call_tool("save_recipe", {"source": "url", "url": URL})

    assert ok(first, "save_recipe")[1]["saved"] is True
    assert imports_sent(fake) == imports_expected
    repeated = ok(again, "save_recipe")[0].startswith("This page was already imported")
    assert repeated is (imports_expected == 2)
    assert ok(again, "save_recipe")[1]["recipe_id"] == first.structured_content["recipe_id"] or not repeated


@pytest.mark.req("recipes.SAVE.3", "recipes.SAVE.4")
async def test_an_identical_call_while_the_import_runs_waits_for_it_even_when_the_first_is_cancelled(
    fake: FakeCooked, imports: Imports
) -> None:
    fake.fail_with("slow", "POST", "/api/new", seconds=1)

    async with cooked_session(fake) as client, anyio.create_task_group() as group:
        scope = anyio.CancelScope()

        async def first_call() -> None:
            with scope:
                await client.call_tool("save_recipe", {"source": "url", "url": URL})

        group.start_soon(first_call)
        with anyio.fail_after(10):
            await imports.started.wait()
        scope.cancel()
        second = await client.call_tool("save_recipe", {"source": "url", "url": URL})

    text, out = ok(second, "save_recipe")
    assert text.startswith("This page was already imported") and out["saved"] is True
    assert imports.outcomes == ["answered"] and imports_sent(fake) == 1
