"""One step of ``--check``. A ``Mismatch`` holds only what is safe in a report (status, a code-like
error code, our own sentence, the answer's shape); Cooked's free text stays on the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.exceptions import (
    CookedError,
    CookedRejected,
    CookedRequestError,
    CookedResponseError,
    CookedUnavailable,
    UnexpectedAnswer,
)

T = TypeVar("T")
_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
#: How the client opens an error about one request; see Steps.append.
_REQUEST_FAILED = re.compile(r"^The [\w -]+ request failed: ")


@dataclass(frozen=True)
class Mismatch:
    problem: str
    status: int | None = None
    code: str | None = None
    shape: Any = None
    #: Cooked answered, but not as the contract says (``disagrees``): what a report is for.
    disagrees: bool = False


@dataclass(frozen=True)
class Outcome:
    step: str
    endpoint: Endpoint
    ok: bool
    detail: str = ""
    mismatch: Mismatch | None = None
    #: No request was made (nothing to make it on): the endpoint was not checked.
    skipped: bool = False


class Steps(list[Outcome]):
    """The outcomes so far; given ``out``, each step's name is shown while Cooked is waited for."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self._out = out
        self._shown: str | None = None

    def started(self, name: str) -> None:
        self._show(f"  {name} ... ")
        self._shown = name

    def append(self, outcome: Outcome) -> None:
        super().append(outcome)
        if self._shown != outcome.step:  # recorded without a request: no line was started for it
            self._show(f"  {outcome.step} ... ")
        self._shown = None
        verdict = "OK" if outcome.ok else "FAILED"
        # The line already names the step and says FAILED; the client's own "The log in request
        # failed: " lead-in (for agents whose client drops isError) would say it twice.
        detail = _REQUEST_FAILED.sub("", outcome.detail)
        self._show(f"{verdict} - {detail}\n" if detail else f"{verdict}\n")

    def _show(self, text: str) -> None:
        if self._out is not None:
            print(text, end="", file=self._out, flush=True)


class Failed(Exception):
    """Cooked answered, but not as expected (e.g. a deleted recipe still readable)."""

    def __init__(self, mismatch: Mismatch) -> None:
        super().__init__(mismatch.problem)
        self.mismatch = mismatch


def safe_code(code: str | None) -> str | None:
    """Cooked's error code when it looks like one (``NOT_FOUND``); anything else could be any text."""
    return code if code and _CODE.fullmatch(code) else None


def mismatch_of(error: CookedError) -> Mismatch:
    code = safe_code(error.code)
    if isinstance(error, UnexpectedAnswer):
        return Mismatch(f"the answer {error.problem}", error.status, None, error.shape, disagrees=True)
    if isinstance(error, CookedUnavailable):
        return Mismatch("no usable answer (connection, timeout or redirect)", error.status, code)
    if isinstance(error, CookedRequestError):
        return Mismatch("not sent: an ID Cooked returned cannot be put in a path", None, None)
    shown = " ".join(str(part) for part in (error.status, code) if part is not None)
    return Mismatch(
        f"answered {shown or 'an error'}, expected success", error.status, code, disagrees=disagrees(error)
    )


def disagrees(error: CookedError) -> bool:
    """Cooked answered, but not as the contract says (an unusable answer, a refused request)."""
    return isinstance(error, CookedResponseError | CookedRejected)


def for_a_person(error: CookedError) -> str:
    """The error's sentence without the next step meant for an agent ("retry once; …", "check
    the ID …") where Cooked disagreed with the contract: the summary asks for a report instead."""
    return str(error.with_next_step("")) if disagrees(error) else str(error)


async def step(
    outcomes: Steps,
    name: str,
    endpoint: Endpoint,
    action: Callable[[], Awaitable[T]],
    describe: Callable[[T], str] = lambda _: "",
    explain: Callable[[CookedError], str] = for_a_person,
) -> T | None:
    """Run one step, record its outcome, and return its result (None when it failed)."""
    outcomes.started(name)
    try:
        result = await action()
    except CookedError as exc:
        outcomes.append(Outcome(name, endpoint, False, explain(exc), mismatch_of(exc)))
        return None
    except Failed as exc:
        outcomes.append(Outcome(name, endpoint, False, exc.mismatch.problem, exc.mismatch))
        return None
    outcomes.append(Outcome(name, endpoint, True, describe(result)))
    return result
