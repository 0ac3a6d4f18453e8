"""The steps of ``--check`` and their per-endpoint verdicts, printed and written for a bug report.
A ``Mismatch`` holds only what is safe in a report (status, a code-like code, our sentence, the
answer's shape); Cooked's free text stays on the terminal."""

from __future__ import annotations

import json
import platform
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

from cooked_mcp import __version__, docs_url
from cooked_mcp.config import Settings, default
from cooked_mcp.cooked import endpoints
from cooked_mcp.cooked.endpoints import ENDPOINTS, Endpoint
from cooked_mcp.exceptions import (
    CookedAuthError,
    CookedError,
    CookedRejected,
    CookedRequestError,
    CookedResponseError,
    CookedUnavailable,
    UnexpectedAnswer,
)
from cooked_mcp.redaction import redact

T = TypeVar("T")
_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
#: How the client opens an error about one request; see Steps.append.
_REQUEST_FAILED = re.compile(r"^The [\w -]+ request failed: ")

#: The endpoints no mode of ``--check`` calls, and why (docs/check.md says the same).
NEVER_CHECKED: dict[Endpoint, str] = {
    endpoints.IMPORT_URL: "a URL import makes Cooked fetch a web page",
    endpoints.GET_DRAFT: "drafts come only from a URL import",
    endpoints.SAVE_DRAFT: "drafts come only from a URL import",
    endpoints.CLEAR_SHOPPING_LIST: "it would empty your whole shopping list",
}


@dataclass(frozen=True)
class Mismatch:
    problem: str
    status: int | None = None
    code: str | None = None
    shape: Any = None
    #: Cooked answered, but not as the contract says (``disagrees``): what a report is for.
    disagrees: bool = False

    def fields(self) -> dict[str, Any]:
        """As a report holds it: what is known, nothing else."""
        shown = {
            "problem": self.problem,
            "status": self.status,
            "code": self.code,
            "answer-shape": self.shape,
        }
        return {key: value for key, value in shown.items() if value is not None}


@dataclass(frozen=True)
class Outcome:
    step: str
    endpoint: Endpoint
    ok: bool
    detail: str = ""
    mismatch: Mismatch | None = None
    #: No request was made (nothing to make it on): the endpoint was not checked.
    skipped: bool = False


class Failed(Exception):
    """Cooked answered, but not as expected (e.g. a deleted recipe still readable)."""

    def __init__(self, mismatch: Mismatch) -> None:
        super().__init__(mismatch.problem)
        self.mismatch = mismatch


def safe_code(code: str | None) -> str | None:
    """Cooked's error code when it looks like one (``NOT_FOUND``); anything else could be any text."""
    return code if code and _CODE.fullmatch(code) else None


def answered(*parts: object) -> str:
    """``404 NOT_FOUND``: what of status and code is known."""
    return " ".join(str(part) for part in parts if part is not None)


def mismatch_of(error: CookedError) -> Mismatch:
    code = safe_code(error.code)
    if isinstance(error, UnexpectedAnswer):
        return Mismatch(f"the answer {error.problem}", error.status, None, error.shape, disagrees=True)
    if isinstance(error, CookedUnavailable):
        return Mismatch("no usable answer (connection, timeout or redirect)", error.status, code)
    if isinstance(error, CookedRequestError):
        return Mismatch("not sent: an ID Cooked returned cannot be put in a path", None, None)
    shown = answered(error.status, code) or "an error"
    return Mismatch(f"answered {shown}, expected success", error.status, code, disagrees=disagrees(error))


def disagrees(error: CookedError) -> bool:
    """Cooked answered, but not as the contract says (an unusable answer, a refused request)."""
    return isinstance(error, CookedResponseError | CookedRejected)


def for_a_person(error: CookedError) -> str:
    """The error's sentence without the next step meant for an agent ("retry once; …") where Cooked
    disagreed with the contract: the summary asks for a report instead."""
    return str(error.with_next_step("")) if disagrees(error) else str(error)


class Steps(list[Outcome]):
    """The outcomes so far; given ``out``, each step's name is shown (``started``) while Cooked is waited for."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self._out = out

    def started(self, name: str) -> None:
        self._show(f"  {name} ... ")

    def append(self, outcome: Outcome) -> None:
        super().append(outcome)
        # The line already says FAILED: the client's "The log in request failed: " would say it twice.
        detail = _REQUEST_FAILED.sub("", outcome.detail)
        self._show(f"{'OK' if outcome.ok else 'FAILED'}{' - ' + detail if detail else ''}\n")

    async def step(
        self,
        name: str,
        endpoint: Endpoint,
        action: Callable[[], Awaitable[T]],
        describe: Callable[[T], str] = lambda _: "",
        explain: Callable[[CookedError], str] = for_a_person,
    ) -> T | None:
        """Run one step, record its outcome, and return its result (None when it failed)."""
        self.started(name)
        try:
            result = await action()
        except CookedError as exc:
            self.append(Outcome(name, endpoint, False, explain(exc), mismatch_of(exc)))
            return None
        except Failed as exc:
            self.append(Outcome(name, endpoint, False, exc.mismatch.problem, exc.mismatch))
            return None
        self.append(Outcome(name, endpoint, True, describe(result)))
        return result

    def _show(self, text: str) -> None:
        if self._out is not None:
            print(text, end="", file=self._out, flush=True)


# implements: authentication.LOGIN.4
def login_problem(error: CookedError, settings: Settings) -> str:
    """A rejected login is the user's to fix here and now: no restart to mention, the code said once."""
    if not isinstance(error, CookedAuthError):
        return for_a_person(error)  # a connection problem says what failed and what to check
    return (
        f"Cooked rejected the username or password ({answered(error.status, safe_code(error.code))}): "
        f"check {settings.describe_credentials()}; "
        "social-login and passwordless Cooked accounts are not supported"
    )


@dataclass(frozen=True)
class Verdict:
    endpoint: Endpoint
    status: str  # ok, mismatch, skipped or not checked
    step: str = ""
    mismatch: Mismatch | None = None


def verdicts(outcomes: list[Outcome]) -> list[Verdict]:
    """One per row of the endpoint table: its first mismatch, else OK, else why it was not checked."""
    result: list[Verdict] = []
    for endpoint in ENDPOINTS:
        mine = [o for o in outcomes if o.endpoint == endpoint]
        bad = next((o for o in mine if o.mismatch is not None), None)
        if bad is not None:
            result.append(Verdict(endpoint, "mismatch", bad.step, bad.mismatch))
        elif any(o.ok and not o.skipped for o in mine):
            result.append(Verdict(endpoint, "ok"))
        else:
            result.append(Verdict(endpoint, "skipped" if mine else "not checked"))
    return result


def print_endpoints(rows: list[Verdict], out: TextIO) -> None:
    print("Endpoints, whether a public source confirms them, and what this run found:", file=out)
    width = max(len(row.endpoint.path_template) for row in rows)
    for row in rows:
        e, verdict, mismatch = row.endpoint, row.status.upper(), row.mismatch
        if mismatch is not None:
            shown = answered(mismatch.status, mismatch.code)
            shown = f" [{shown}]" if shown and shown not in mismatch.problem else ""
            verdict = f"{verdict} in '{row.step}': {mismatch.problem}{shown}"
        elif row.status == "not checked":
            verdict = f"{verdict} ({NEVER_CHECKED.get(e, 'only --check --write calls it')})"
        kind = "confirmed" if e.provenance.confirmed else "reconstructed"
        print(f"  {e.method:<6} {e.path_template:<{width}}  {kind:<13}  {verdict}", file=out)
    for provenance in dict.fromkeys(row.endpoint.provenance for row in rows):
        print(f"  {provenance.label}", file=out)
    print(f"The contract these rows follow: {docs_url('cooked-api.md')}", file=out)


def write_report(
    path: Path,
    *,
    mode: str,
    base_url: str,
    outcomes: list[Outcome],
    undo: dict[str, Any] | None,
    secrets: Iterable[str],
) -> None:
    """``secrets`` (the client's: login name, password, username, cookies, token) are kept out of
    every string of the file, keys included, in every spelling ``cooked_mcp.redaction`` knows: what
    it holds from Cooked (a code, a key of the answer's shape) passed filters that know no secret."""
    report: dict[str, Any] = {
        "report": "cooked-mcp --check",
        "cooked-mcp-version": __version__,
        "python": platform.python_version(),
        "mode": mode,
        "cooked": "cooked.wiki (default)"
        if base_url.rstrip("/") == default("base_url")
        else "a custom base URL",
        "passed": all(o.ok for o in outcomes),
        "steps": [
            {
                "step": o.step,
                "endpoint": o.endpoint.name,
                "ok": o.ok,
                **(o.mismatch.fields() if o.mismatch else {}),
            }
            for o in outcomes
        ],
        "endpoints": [
            {
                "name": row.endpoint.name,
                "method": row.endpoint.method,
                "path": row.endpoint.path_template,
                "confirmed": row.endpoint.provenance.confirmed,
                "source": row.endpoint.provenance.source,
                "verdict": row.status,
                **({"step": row.step, **row.mismatch.fields()} if row.mismatch else {}),
            }
            for row in verdicts(outcomes)
        ],
    }
    if undo is not None:
        report["undo"] = undo
    secret_set = frozenset(secrets)

    def scrubbed(value: Any) -> Any:
        if isinstance(value, str):
            return redact(value, secret_set)
        if isinstance(value, dict):
            return {redact(key, secret_set): scrubbed(item) for key, item in value.items()}
        return [scrubbed(item) for item in value] if isinstance(value, list) else value

    path.write_text(json.dumps(scrubbed(report), indent=2) + "\n", encoding="utf-8")
