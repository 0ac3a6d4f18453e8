"""The steps of ``--check``: each one's line on the terminal and its outcome for the verdicts. A
``Mismatch`` holds only what is safe in a report (status, a code-like code, our sentence, the
answer's shape); Cooked's free text stays on the terminal."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.exceptions import (
    CookedError,
    CookedRejected,
    CookedRequestError,
    CookedResponseError,
    CookedUnavailable,
    UnexpectedAnswer,
)

_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
#: How the client opens an error about one request: the step's line already says FAILED.
_REQUEST_FAILED = re.compile(r"^The [\w -]+ request failed: ")


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


@dataclass
class Outcome:
    step: str
    endpoint: Endpoint
    ok: bool = True
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
    # Cooked answered, but not as the contract says (an unusable answer, a refused request).
    disagrees = isinstance(error, CookedResponseError | CookedRejected)
    return Mismatch(f"answered {shown}, expected {expected}", error.status, code, disagrees=disagrees)


class Steps(list[Outcome]):
    """The outcomes so far; given ``out``, each step's line is shown as it starts, so the step
    Cooked keeps waiting is on the screen, and completed when it ends."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self.out = out or io.StringIO()  # no terminal: the lines go nowhere

    @contextlib.contextmanager
    def step(
        self, name: str, endpoint: Endpoint, explain: Callable[[CookedError], str] = str
    ) -> Iterator[Outcome]:
        """One step: OK (with the ``detail`` its block may set on the outcome) unless the block raises a
        Cooked error or a ``Mismatch``, which ends the block, not the check."""
        print(f"  {name} ... ", end="", file=self.out, flush=True)
        outcome = Outcome(name, endpoint)
        try:
            yield outcome
        except CookedError as exc:
            mismatch = mismatch_of(exc)
            # A person reads this: no next step meant for an agent ("retry once; …") where Cooked
            # disagreed with the contract, as the summary asks for a report instead.
            shown = exc.with_next_step("") if mismatch.disagrees else exc
            outcome = Outcome(name, endpoint, False, explain(shown), mismatch)
        except Mismatch as exc:
            outcome = Outcome(name, endpoint, False, exc.problem, exc)
        self.append(outcome)
        detail = _REQUEST_FAILED.sub("", outcome.detail)  # the line says FAILED already
        print(
            f"{'OK' if outcome.ok else 'FAILED'}{' - ' + detail if detail else ''}", file=self.out, flush=True
        )


def expect(holds: bool, problem: str) -> None:
    """A step's check of Cooked's answer beyond its shape."""
    if not holds:
        raise Mismatch(problem)
