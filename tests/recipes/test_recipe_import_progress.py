"""A slow URL import: progress notifications while it runs, and cancellation that really stops it."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from recipe_support import ok, sent
from sessions import cooked_session

import cooked_mcp.handlers.recipes as recipe_handlers
from cooked_fake import FakeCooked
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
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_until_cancelled(self) -> None:
        with anyio.fail_after(2):
            await self.cancelled.wait()


@pytest.fixture
def imports(monkeypatch: pytest.MonkeyPatch) -> Imports:
    watch = Imports()
    original = CookedClient.import_url

    async def watched(self: CookedClient, url: str) -> ImportResult:
        try:
            result = await original(self, url)
        except asyncio.CancelledError:
            watch.outcomes.append("cancelled")
            watch.cancelled.set()
            raise
        watch.outcomes.append("answered")
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
async def test_a_timed_out_import_is_cancelled_and_the_server_keeps_serving(
    fake: FakeCooked, fast_ticks: None, imports: Imports
) -> None:
    fake.fail_with("slow", "POST", "/api/new", seconds=3)
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with cooked_session(fake) as client:
        with pytest.raises(MCPError, match="Timed out"):
            await client.call_tool(
                "save_recipe",
                {"source": "url", "url": URL},
                read_timeout_seconds=0.3,
                progress_callback=on_progress,
            )
        await imports.wait_until_cancelled()
        ticks = len(reports)
        started = time.monotonic()
        listed = await client.call_tool("read", {"target": "recipes", "limit": 1})
        answered_in = time.monotonic() - started
        await anyio.sleep(4 * TICK)

    assert ticks >= 2 and len(reports) == ticks  # the ticker stopped with the handler
    ok(listed, "read")
    assert answered_in < 1  # not queued behind the abandoned import
    assert sent(fake)[0] == ("POST", "/api/new", {"url": URL})


@pytest.mark.req("recipes.SAVE.3")
async def test_a_caller_cancelling_the_call_cancels_the_import(
    fake: FakeCooked, fast_ticks: None, imports: Imports
) -> None:
    fake.fail_with("slow", "POST", "/api/new", seconds=3)

    async with cooked_session(fake) as client:
        with anyio.move_on_after(0.3) as scope:
            await client.call_tool("save_recipe", {"source": "url", "url": URL})
        await imports.wait_until_cancelled()
        second = await client.call_tool(
            "save_recipe", {"source": "url", "url": "https://example.org/quick-salad"}
        )

    assert scope.cancelled_caught
    _, out = ok(second, "save_recipe")
    assert imports.outcomes == ["cancelled", "answered"] and out["saved"] is True
