"""``cooked-mcp --check``: does this Cooked account answer as the (partly reconstructed) contract
says? One command finds what we guessed wrong, with a report to send (docs/check.md)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import anyio

from cooked_mcp.config import Settings
from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.models import CookedRecipeSummary
from cooked_mcp.exceptions import CookedError

from .roundtrip import RoundTrip, line_name, new_token, recipe_title
from .steps import Outcome, Steps, login_problem, print_endpoints, verdicts, write_report

#: The only answer that starts ``--write``: exactly what the question asks for.
CONFIRMATION = "yes"
#: What a person does about a failed check, where an agent would be told to retry.
REPORT_ADVICE = (
    "To report it: run the same command again with --report FILE and attach FILE to a bug report "
    "(it holds no secrets or recipes)."
)

#: What the search step looks for: one letter, so any account with recipes finds some.
SEARCH_QUERY = "a"
#: How many recipes the list step asks for.
LIST_PAGE = 5


@dataclass(frozen=True)
class CheckResult:
    outcomes: list[Outcome]
    roundtrip: RoundTrip | None

    @property
    def passed(self) -> bool:
        undone = self.roundtrip is None or self.roundtrip.undo_complete
        return undone and all(o.ok for o in self.outcomes)

    @property
    def logged_in(self) -> bool:
        return bool(self.outcomes) and self.outcomes[0].ok


async def check_account(
    client: CookedClient,
    *,
    write: bool,
    steps: Steps | None = None,
    token: str | None = None,
    explain_login: Callable[[CookedError], str] = str,
) -> CheckResult:
    """The read checks, then (``write``) the round trip; never raises for a Cooked failure."""
    outcomes = Steps() if steps is None else steps
    if not await read_checks(client, outcomes, explain_login) or not write:
        return CheckResult(outcomes, None)
    roundtrip = RoundTrip(client, outcomes, token or new_token())
    await roundtrip.run()
    return CheckResult(outcomes, roundtrip)


def run_check(
    settings: Settings,
    *,
    write: bool = False,
    yes: bool = False,
    report: Path | None = None,
    out: TextIO = sys.stdout,
    answer: TextIO = sys.stdin,
) -> int:
    """Print each line as soon as it is known (no network first); exit 0 only when all matched."""
    mode = "with --write" if write else "read-only"
    _say(out, f"cooked-mcp --check ({mode}) against {settings.base_url}", *settings.describe_account())
    token = new_token()
    if write and not yes and not _confirmed(token, out, answer):
        _say(out, "Nothing was sent to Cooked.")
        return 1

    async def run() -> tuple[CheckResult, list[str]]:
        async with CookedClient.from_settings(settings) as client:
            seconds = client.answer_deadline(endpoints.LOGIN)
            _say(out, f"checks (each waits at most {seconds:.0f} s for Cooked's answer):")
            result = await check_account(
                client,
                write=write,
                steps=Steps(out),
                token=token,
                explain_login=lambda error: login_problem(error, settings),
            )
            return result, client.secret_values()

    result, secrets = anyio.run(run)
    _summarise(result, out, reported=report is not None)
    if report is not None:
        trip = result.roundtrip
        write_report(
            report,
            mode="write" if write else "read-only",
            base_url=settings.base_url,
            outcomes=result.outcomes,
            undo=None if trip is None else {"complete": trip.undo_complete, "needed": bool(trip.undo_notes)},
            secrets=secrets,
        )
        _say(out, f"Report written to {report}: attach it to a bug report (it holds no secrets or recipes).")
    return 0 if result.passed else 1


def _say(out: TextIO, *lines: str) -> None:
    """Lines the user reads while the check goes on: flushed at once, even into a pipe."""
    print(*lines, sep="\n", file=out, flush=True)


def _confirmed(token: str, out: TextIO, answer: TextIO) -> bool:
    """Say exactly what will be created and removed on the account just shown, then ask."""
    _say(
        out,
        "--write changes this Cooked account and changes it back:",
        f"  creates the recipe {recipe_title(token)!r} (previewed, saved, read, updated), then deletes it",
        f"  adds the shopping-list line '1 {line_name(token)}' (ticked, unticked, updated), then removes it",
        "If a step fails, it removes what it created (or names what to remove by hand).",
    )
    print(f"Type '{CONFIRMATION}' to go ahead (or run with --yes): ", end="", file=out, flush=True)
    reply = answer.readline()
    if not answer.isatty():  # a piped answer is not echoed: end the question's line for it
        print(file=out)
    return reply.strip() == CONFIRMATION


def _summarise(result: CheckResult, out: TextIO, *, reported: bool) -> None:
    """What was checked and what was not; ``reported``: a report is on its way."""
    if not result.logged_in:
        _say(out, "Nothing else was checked: every other request needs a logged-in session.")
        login = result.outcomes[0].mismatch if result.outcomes else None
        if not reported and login is not None and login.disagrees:
            _say(out, REPORT_ADVICE)
        return
    if result.roundtrip is not None:
        _say(out, *(f"  undo: {note}" for note in result.roundtrip.undo_notes))
    rows, outcomes = verdicts(result.outcomes), result.outcomes
    print_endpoints(rows, out)
    counts = Counter(row.status for row in rows)
    unchecked = len(rows) - counts["ok"] - counts["mismatch"]
    checked = (
        f"{counts['ok']} of the {len(rows)} endpoints answered as cooked-mcp expects"
        + (f", {counts['mismatch']} did not" if counts["mismatch"] else "")
        + (f"; {unchecked} were not checked (each row says why)." if unchecked else ".")
    )
    failed = sum(not o.ok for o in outcomes)
    if failed:
        _say(out, f"{failed} of {len(outcomes)} checks failed: {checked}")
        if not reported:
            _say(out, REPORT_ADVICE)
    elif not result.passed:
        _say(out, "Every check passed, but the clean-up did not finish: see the undo lines above.")
    else:
        # Not "all": the count is of steps, and some endpoints may not have been checked at all.
        _say(out, f"{len(outcomes)} of {len(outcomes)} checks passed: {checked}")


async def read_checks(
    client: CookedClient, outcomes: Steps, explain_login: Callable[[CookedError], str] = str
) -> bool:
    """Append the read steps' outcomes; False when the login failed (nothing else can work)."""
    await outcomes.step("log in", endpoints.LOGIN, client.ensure_session, explain=explain_login)
    if not outcomes[-1].ok:
        return False
    found: list[str] = []  # a recipe ID to read: from the list, or from the search when listing failed

    def remember(page: str, what: str) -> Callable[[list[CookedRecipeSummary]], str]:
        # The page first: "5 recipes on the first page" read as "the account has 5 recipes".
        def describe(items: list[CookedRecipeSummary]) -> str:
            found.extend(item.id for item in items[:1])
            return f"{page}: {len(items)} {what}"

        return describe

    await outcomes.step(
        "list recipes",
        endpoints.LIST_RECIPES,
        lambda: client.list_recipes(1, LIST_PAGE),
        remember(f"page of {LIST_PAGE}", "recipes"),
    )
    await outcomes.step(
        "search recipes",
        endpoints.SEARCH_RECIPES,
        lambda: client.search_recipes(SEARCH_QUERY, 1),
        remember(f"first page of the search for '{SEARCH_QUERY}'", "matches"),
    )
    await outcomes.step(
        "read the shopping list",
        endpoints.GET_SHOPPING_LIST,
        client.get_shopping_list,
        lambda s: f"{len(s.aisles)} aisles, {sum(len(a.product_groups) for a in s.aisles)} product groups",
    )
    if found:
        await outcomes.step("read one recipe", endpoints.GET_RECIPE, lambda: client.get_recipe(found[0]))
    else:
        none = all(o.ok for o in outcomes)  # else listing failed: no ID could be had
        why = "the account has no saved recipes" if none else "no recipe ID could be listed or found"
        outcomes.started("read one recipe")
        outcomes.append(
            Outcome("read one recipe", endpoints.GET_RECIPE, none, f"skipped: {why}", skipped=True)
        )
    return True
