"""``cooked-mcp --check``: does this Cooked account answer as the (partly reconstructed) contract
says? One command finds what we guessed wrong, with a report to send (docs/check.md)."""

from __future__ import annotations

import json
import platform
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from secrets import token_hex
from typing import Any, TextIO

import anyio

from cooked_mcp import __version__, docs_url
from cooked_mcp.config import Settings, default
from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.cooked.endpoints import ENDPOINTS, Endpoint
from cooked_mcp.exceptions import CookedAuthError, CookedError
from cooked_mcp.redaction import redact

from .steps import LINE_NAME, RECIPE_TITLE, Outcome, RoundTrip, Steps, answered, mismatch_of

#: The only answer that starts ``--write``: exactly what the question asks for.
CONFIRMATION = "yes"
#: What a person does about a failed check, where an agent would be told to retry.
REPORT_ADVICE = (
    "To report it: run the same command again with --report FILE and attach FILE to a bug report "
    "(it holds no secrets or recipes)."
)
#: What the search step looks for: one letter, so any account with recipes finds some.
SEARCH_QUERY = "a"
LIST_PAGE = 5
#: The endpoints no mode of ``--check`` calls, and why (docs/check.md says the same).
NEVER_CHECKED: dict[Endpoint, str] = {
    endpoints.IMPORT_URL: "a URL import makes Cooked fetch a web page",
    endpoints.GET_DRAFT: "drafts come only from a URL import",
    endpoints.SAVE_DRAFT: "drafts come only from a URL import",
    endpoints.CLEAR_SHOPPING_LIST: "it would empty your whole shopping list",
}


@dataclass(frozen=True)
class CheckResult:
    outcomes: list[Outcome]
    roundtrip: RoundTrip | None

    @property
    def passed(self) -> bool:
        # The round trip leaves something to undo only after a failed step: all steps OK, all undone.
        return all(o.ok for o in self.outcomes)


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
    with outcomes.step("log in", endpoints.LOGIN, explain=explain_login):
        await client.ensure_session()
    if not outcomes[-1].ok:
        return CheckResult(outcomes, None)
    ids: list[str] = []  # a recipe ID to read: from the list, or from the search when listing failed
    with outcomes.step("list recipes", endpoints.LIST_RECIPES) as step:
        items = await client.list_recipes(1, LIST_PAGE)
        ids += [item.id for item in items]
        # The page size first: "5 recipes on the first page" read as "the account has 5 recipes".
        step.detail = f"page of {LIST_PAGE}: {len(items)} recipes"
    with outcomes.step("search recipes", endpoints.SEARCH_RECIPES) as step:
        items = await client.search_recipes(SEARCH_QUERY, 1)
        ids += [item.id for item in items]
        step.detail = f"first page of the search for '{SEARCH_QUERY}': {len(items)} matches"
    with outcomes.step("read the shopping list", endpoints.GET_SHOPPING_LIST) as step:
        shopping = await client.get_shopping_list()
        groups = sum(len(aisle.product_groups) for aisle in shopping.aisles)
        step.detail = f"{len(shopping.aisles)} aisles, {groups} product groups"
    with outcomes.step("read one recipe", endpoints.GET_RECIPE) as step:
        if ids:
            await client.get_recipe(ids[0])
        else:
            step.ok = all(o.ok for o in outcomes)  # else listing failed: no ID could be had
            why = "the account has no saved recipes" if step.ok else "no recipe ID could be listed or found"
            step.detail = f"skipped: {why}"
            step.skipped = True
    if not write:
        return CheckResult(outcomes, None)
    roundtrip = RoundTrip(client, outcomes, token or token_hex(4))
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
    token = token_hex(4)  # tells the check's own recipe and line from the user's
    if write and not yes:
        title, line = RECIPE_TITLE.format(token), LINE_NAME.format(token)
        _say(
            out,
            "--write changes this Cooked account and changes it back:",
            f"  creates the recipe {title!r} (previewed, saved, read, updated), then deletes it",
            f"  adds the shopping-list line '1 {line}' (ticked, unticked, updated), then removes it",
            "If a step fails, it removes what it created (or names what to remove by hand).",
        )
        print(f"Type '{CONFIRMATION}' to go ahead (or run with --yes): ", end="", file=out, flush=True)
        reply = answer.readline()
        if not answer.isatty():  # a piped answer is not echoed: end the question's line for it
            print(file=out)
        if reply.strip() != CONFIRMATION:
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

    result, secret_values = anyio.run(run)
    _summarise(result, out, reported=report is not None)
    if report is not None:
        _write_report(report, result, write, settings.base_url, secret_values)
        _say(out, f"Report written to {report}: attach it to a bug report (it holds no secrets or recipes).")
    return 0 if result.passed else 1


def _say(out: TextIO, *lines: str) -> None:
    """Lines the user reads while the check goes on: flushed at once, even into a pipe."""
    print(*lines, sep="\n", file=out, flush=True)


# implements: authentication.LOGIN.4
def login_problem(error: CookedError, settings: Settings) -> str:
    """A rejected login is the user's to fix here and now: no restart to mention, the code said once."""
    if not isinstance(error, CookedAuthError):
        return str(error)  # a connection problem says what failed and what to check
    shown = mismatch_of(error)
    return (
        f"Cooked rejected the username or password ({answered(shown.status, shown.code)}): "
        f"check {settings.describe_credentials()}; "
        "social-login and passwordless Cooked accounts are not supported"
    )


def verdicts(outcomes: list[Outcome]) -> Iterator[tuple[Endpoint, str, Outcome | None]]:
    """Per row of the endpoint table: ok, mismatch (with its first such outcome), skipped or not checked."""
    for endpoint in ENDPOINTS:
        mine = [o for o in outcomes if o.endpoint == endpoint]
        bad = next((o for o in mine if o.mismatch is not None), None)
        if bad is not None:
            yield endpoint, "mismatch", bad
        elif any(o.ok and not o.skipped for o in mine):
            yield endpoint, "ok", None
        else:
            yield endpoint, "skipped" if mine else "not checked", None


def _summarise(result: CheckResult, out: TextIO, *, reported: bool) -> None:
    outcomes = result.outcomes
    login = outcomes[0]
    if not login.ok:
        _say(out, "Nothing else was checked: every other request needs a logged-in session.")
        if not reported and login.mismatch is not None and login.mismatch.disagrees:
            _say(out, REPORT_ADVICE)
        return
    if result.roundtrip is not None:
        _say(out, *(f"  undo: {note}" for note in result.roundtrip.undo_notes))
    rows = list(verdicts(outcomes))
    _say(out, "Endpoints, whether a public source confirms them, and what this run found:")
    width = max(len(endpoint.path_template) for endpoint in ENDPOINTS)
    for e, status, bad in rows:
        verdict = status.upper()
        if bad is not None and bad.mismatch is not None:
            shown = answered(bad.mismatch.status, bad.mismatch.code)
            shown = f" [{shown}]" if shown and shown not in bad.mismatch.problem else ""
            verdict = f"{verdict} in '{bad.step}': {bad.mismatch.problem}{shown}"
        elif status == "not checked":
            verdict = f"{verdict} ({NEVER_CHECKED.get(e, 'only --check --write calls it')})"
        kind = "confirmed" if e.provenance.confirmed else "reconstructed"
        _say(out, f"  {e.method:<6} {e.path_template:<{width}}  {kind:<13}  {verdict}")
    _say(out, *(f"  {provenance.label}" for provenance in dict.fromkeys(e.provenance for e in ENDPOINTS)))
    _say(out, f"The contract these rows follow: {docs_url('cooked-api.md')}")
    counts = Counter(status for _, status, _ in rows)
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
    else:
        # Not "all": the count is of steps, and some endpoints may not have been checked at all.
        _say(out, f"{len(outcomes)} of {len(outcomes)} checks passed: {checked}")


def _write_report(path: Path, result: CheckResult, write: bool, base_url: str, secrets: list[str]) -> None:
    """Every spelling of ``secrets`` (login, password, cookies, token) is kept out of every string, keys
    too: what comes from Cooked (a code, a key of the answer's shape) passed filters that know no secret."""
    trip = result.roundtrip
    custom = base_url.rstrip("/") != default("base_url")
    report: dict[str, Any] = {
        "report": "cooked-mcp --check",
        "cooked-mcp-version": __version__,
        "python": platform.python_version(),
        "mode": "write" if write else "read-only",
        "cooked": "a custom base URL" if custom else "cooked.wiki (default)",
        "passed": result.passed,
        "steps": [
            {"step": o.step, "endpoint": o.endpoint.name, "ok": o.ok, **o.fields()} for o in result.outcomes
        ],
        "endpoints": [
            {
                "name": e.name,
                "method": e.method,
                "path": e.path_template,
                "confirmed": e.provenance.confirmed,
                "source": e.provenance.source,
                "verdict": status,
                **({"step": bad.step, **bad.fields()} if bad else {}),
            }
            for e, status, bad in verdicts(result.outcomes)
        ],
    }
    if trip is not None:
        report["undo"] = {"complete": trip.undo_complete, "needed": bool(trip.undo_notes)}
    kept_out = frozenset(secrets)

    def scrubbed(value: Any) -> Any:
        if isinstance(value, str):
            return redact(value, kept_out)
        if isinstance(value, dict):
            return {redact(key, kept_out): scrubbed(item) for key, item in value.items()}
        return [scrubbed(item) for item in value] if isinstance(value, list) else value

    path.write_text(json.dumps(scrubbed(report), indent=2) + "\n", encoding="utf-8")
