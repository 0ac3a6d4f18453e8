"""``cooked-mcp --check``: does this Cooked account answer as the server expects?

The Cooked contract is partly reconstructed (the endpoint table marks which rows a public
source confirms), so a real user needs one command that finds whatever we guessed wrong and
a report they can send us. The default makes only read requests; ``--write`` adds a round
trip that changes the account and changes it back (``roundtrip``), after a confirmation.
Terminal lines name endpoints, counts and Cooked's (redacted) error text; the ``--report``
file holds less still (see ``report``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio

from cooked_mcp.config import Settings
from cooked_mcp.cooked.client import CookedClient

from .reading import read_checks
from .report import print_endpoints, verdicts, write_report
from .roundtrip import RoundTrip
from .steps import Outcome

__all__ = ["CheckResult", "check_account", "run_check"]

WRITE_WARNING = (
    "--check --write changes your Cooked account and changes it back: it saves a recipe titled\n"
    "'cooked-mcp check <random>', updates and deletes it, and adds one shopping-list line, ticks,\n"
    "unticks, updates and removes it. If a step fails it removes what it created."
)


@dataclass(frozen=True)
class CheckResult:
    outcomes: list[Outcome]
    roundtrip: RoundTrip | None

    @property
    def passed(self) -> bool:
        undone = self.roundtrip is None or self.roundtrip.undo_complete
        return undone and all(o.ok for o in self.outcomes)

    def undo_summary(self) -> dict[str, Any] | None:
        if self.roundtrip is None:
            return None
        return {"complete": self.roundtrip.undo_complete, "needed": bool(self.roundtrip.undo_notes)}


async def check_account(client: CookedClient, *, write: bool) -> CheckResult:
    """The read checks, then (``write``) the round trip; never raises for a Cooked failure."""
    outcomes: list[Outcome] = []
    if not await read_checks(client, outcomes) or not write:
        return CheckResult(outcomes, None)
    roundtrip = RoundTrip(client)
    outcomes.extend(await roundtrip.run())
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
    """Print the results (and write ``report``); exit status 0 only when everything matched."""
    if write and not yes and not _confirmed(out, answer):
        print("Nothing was sent to Cooked.", file=out)
        return 1

    async def run() -> CheckResult:
        async with CookedClient.from_settings(settings) as client:
            return await check_account(client, write=write)

    result = anyio.run(run)
    _print(result, settings.base_url, settings.describe_account(), write, out)
    if report is not None:
        write_report(
            report,
            mode="write" if write else "read-only",
            base_url=settings.base_url,
            outcomes=result.outcomes,
            undo=result.undo_summary(),
        )
        print(
            f"Report written to {report}: attach it to a bug report (it holds no secrets or recipes).",
            file=out,
        )
    return 0 if result.passed else 1


def _confirmed(out: TextIO, answer: TextIO) -> bool:
    print(WRITE_WARNING, file=out)
    print("Type 'yes' to go ahead (or run with --yes): ", end="", file=out, flush=True)
    reply = answer.readline().strip().lower()
    return reply in {"y", "yes"}


def _print(result: CheckResult, base_url: str, account: list[str], write: bool, out: TextIO) -> None:
    outcomes = result.outcomes
    mode = "with --write" if write else "read-only"
    print(f"cooked-mcp --check ({mode}) against {base_url}", file=out)
    for line in [*account, "checks:"]:
        print(line, file=out)
    width = max(len(o.step) for o in outcomes)
    for outcome in outcomes:
        verdict = "OK" if outcome.ok else "FAILED"
        detail = f" - {outcome.detail}" if outcome.detail else ""
        print(f"  {outcome.step.ljust(width)}  {verdict}{detail}", file=out)
    if result.roundtrip is not None:
        for note in result.roundtrip.undo_notes:
            print(f"  undo: {note}", file=out)
    print_endpoints(verdicts(outcomes), out)
    failed = sum(not o.ok for o in outcomes)
    if failed:
        print(f"{failed} of {len(outcomes)} checks failed.", file=out)
    elif not result.passed:
        print("Every check passed, but the clean-up did not finish: see the undo lines above.", file=out)
    else:
        print(f"All {len(outcomes)} checks passed: this Cooked answers as cooked-mcp expects.", file=out)
