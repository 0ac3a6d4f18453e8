"""The steps of ``--check``: each one's line on the terminal and its outcome for the verdicts. A
``Mismatch`` holds only what is safe in a report (status, a code-like code, our sentence, the
answer's shape); Cooked's free text stays on the terminal."""

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
#: How the client opens an error about one request: the step's line already says FAILED.
_REQUEST_FAILED = re.compile(r"^The [\w -]+ request failed: ")
#: Cooked answered, but not as the contract says (an unusable answer, a refused request).
_DISAGREES = (CookedResponseError, CookedRejected)


@dataclass(eq=False)
class Mismatch(Exception):
    """Cooked answered, but not as expected; raised by a step's checks, kept in its outcome."""

    problem: str
    status: int | None = None
    code: str | None = None
    shape: Any = None
    #: Cooked answered, but not as the contract says: what a report is for.
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


def safe_code(code: str | None) -> str | None:
    """Cooked's error code when it looks like one (``NOT_FOUND``); anything else could be any text."""
    return code if code and _CODE.fullmatch(code) else None


def answered(*parts: object) -> str:
    """``404 NOT_FOUND``: what of status and code is known."""
    return " ".join(str(part) for part in parts if part is not None)


def mismatch_of(error: CookedError, expected: str = "success") -> Mismatch:
    code = safe_code(error.code)
    if isinstance(error, UnexpectedAnswer):
        return Mismatch(f"the answer {error.problem}", error.status, None, error.shape, disagrees=True)
    if isinstance(error, CookedUnavailable):
        return Mismatch("no usable answer (connection, timeout or redirect)", error.status, code)
    if isinstance(error, CookedRequestError):
        return Mismatch("not sent: an ID Cooked returned cannot be put in a path")
    shown = answered(error.status, code) or "an error"
    disagrees = isinstance(error, _DISAGREES)
    return Mismatch(f"answered {shown}, expected {expected}", error.status, code, disagrees=disagrees)


def for_a_person(error: CookedError) -> str:
    """The error's sentence without the next step meant for an agent ("retry once; …") where Cooked
    disagreed with the contract: the summary asks for a report instead."""
    return str(error.with_next_step("")) if isinstance(error, _DISAGREES) else str(error)


class Steps(list[Outcome]):
    """The outcomes so far; given ``out``, each step's name is shown (``started``) while Cooked is waited for."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self._out = out

    def started(self, name: str) -> None:
        self._show(f"  {name} ... ")

    def append(self, outcome: Outcome) -> None:
        super().append(outcome)
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
        """Run one step, record its outcome, and return its result (None when it failed);
        ``describe`` says what was found, or raises a ``Mismatch`` for what was not expected."""
        self.started(name)
        try:
            result = await action()
            detail = describe(result)
        except CookedError as exc:
            self.append(Outcome(name, endpoint, False, explain(exc), mismatch_of(exc)))
            return None
        except Mismatch as exc:
            self.append(Outcome(name, endpoint, False, exc.problem, exc))
            return None
        self.append(Outcome(name, endpoint, True, detail))
        return result

    def _show(self, text: str) -> None:
        if self._out is not None:
            print(text, end="", file=self._out, flush=True)
