"""One step of ``--check``: which endpoint it exercised and, when Cooked disagreed, exactly how.

A ``Mismatch`` holds only what cooked-mcp itself wrote or what is safe to pass on: the status,
Cooked's error code when it looks like one, a problem sentence built here (naming a key or
an expectation, never a value) and the answer's shape (keys and types). Cooked's free-text
message stays in the terminal line, where the user sees it, and out of the report.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.errors import CookedError, CookedRequestError, CookedUnavailable, UnexpectedAnswer

__all__ = ["Failed", "Mismatch", "Outcome", "mismatch_of", "safe_code", "step"]

T = TypeVar("T")
_CODE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


@dataclass(frozen=True)
class Mismatch:
    problem: str
    status: int | None = None
    code: str | None = None
    shape: Any = None


@dataclass(frozen=True)
class Outcome:
    step: str
    endpoint: Endpoint
    ok: bool
    detail: str = ""
    mismatch: Mismatch | None = None


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
        return Mismatch(f"the answer {error.problem}", error.status, None, error.shape)
    if isinstance(error, CookedUnavailable):
        return Mismatch("no usable answer (connection, timeout or redirect)", error.status, code)
    if isinstance(error, CookedRequestError):
        return Mismatch("not sent: an ID Cooked returned cannot be put in a path", None, None)
    shown = " ".join(str(part) for part in (error.status, code) if part is not None)
    return Mismatch(f"answered {shown or 'an error'}, expected success", error.status, code)


async def step(
    outcomes: list[Outcome],
    name: str,
    endpoint: Endpoint,
    action: Callable[[], Awaitable[T]],
    describe: Callable[[T], str] = lambda _: "",
) -> T | None:
    """Run one step, record its outcome, and return its result (None when it failed)."""
    try:
        result = await action()
    except CookedError as exc:
        outcomes.append(Outcome(name, endpoint, False, str(exc), mismatch_of(exc)))
        return None
    except Failed as exc:
        outcomes.append(Outcome(name, endpoint, False, exc.mismatch.problem, exc.mismatch))
        return None
    outcomes.append(Outcome(name, endpoint, True, describe(result)))
    return result
