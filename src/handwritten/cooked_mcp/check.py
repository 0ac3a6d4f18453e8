"""``cooked-mcp --check``: does this Cooked account answer as the server expects?

The Cooked contract is partly reconstructed, so a real user needs a way to
see whether their Cooked matches it before an agent depends on it. Only read
requests are made, and the report names endpoints and fields, never a
secret or any recipe content.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TextIO, TypeVar

import anyio

from .config import Settings
from .cooked.client import CookedClient
from .cooked.errors import CookedError
from .cooked.models import RecipeSummary

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    step: str
    ok: bool
    detail: str


def run_check(settings: Settings, out: TextIO = sys.stdout) -> int:
    """Print the report; exit status 0 only when every step matched the contract."""
    outcomes = anyio.run(_run, settings)
    print(f"cooked-mcp --check against {settings.base_url}", file=out)
    for line in [*settings.describe_account(), "checks:"]:
        print(line, file=out)
    width = max(len(o.step) for o in outcomes)
    for outcome in outcomes:
        verdict = "OK" if outcome.ok else "FAILED"
        detail = f" - {outcome.detail}" if outcome.detail else ""
        print(f"  {outcome.step.ljust(width)}  {verdict}{detail}", file=out)
    failed = sum(not o.ok for o in outcomes)
    if failed:
        print(f"{failed} of {len(outcomes)} checks failed.", file=out)
        return 1
    print(f"All {len(outcomes)} checks passed: this Cooked answers as cooked-mcp expects.", file=out)
    return 0


async def _run(settings: Settings) -> list[Outcome]:
    async with CookedClient.from_settings(settings) as client:
        outcomes = [await _step("log in", client.ensure_session, lambda _: "")]
        if not outcomes[0].ok:
            return outcomes
        # A recipe ID to read: the first from the list, or from the search when the list failed.
        found: list[str] = []

        async def collect(summaries: Awaitable[list[RecipeSummary]]) -> int:
            items = await summaries
            found.extend(item.id for item in items[:1])
            return len(items)

        outcomes.append(
            await _step(
                "list recipes", lambda: collect(client.list_recipes(1, 5)), lambda n: f"{n} on the first page"
            )
        )
        outcomes.append(
            await _step(
                "search recipes", lambda: collect(client.search_recipes("a", 1)), lambda n: f"{n} matches"
            )
        )
        outcomes.append(
            await _step(
                "read the shopping list",
                client.get_shopping_list,
                lambda s: (
                    f"{len(s.aisles)} aisles, {sum(len(a.product_groups) for a in s.aisles)} product groups"
                ),
            )
        )
        if found:
            outcomes.append(await _step("read one recipe", lambda: client.get_recipe(found[0]), lambda _: ""))
        elif all(o.ok for o in outcomes):
            outcomes.append(Outcome("read one recipe", True, "skipped: the account has no saved recipes"))
        else:
            outcomes.append(
                Outcome("read one recipe", False, "skipped: no recipe ID could be listed or found")
            )
        return outcomes


async def _step(name: str, action: Callable[[], Awaitable[T]], describe: Callable[[T], str]) -> Outcome:
    try:
        result = await action()
    except CookedError as exc:
        return Outcome(name, False, str(exc))
    return Outcome(name, True, describe(result))
