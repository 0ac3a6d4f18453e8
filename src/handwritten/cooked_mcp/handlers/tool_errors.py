"""Cooked client errors as tool errors, with the next step a handler knows for its own call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cooked_mcp_runtime.results import ToolError

from .. import exceptions as errors


class AnswerLost(ToolError):
    """A change reached Cooked but its answer was lost; ``summary`` omits the client's next step, for
    writes.py, which gives its own (look first)."""

    def __init__(self, message: str, *, summary: str) -> None:
        super().__init__(message)
        self.summary = summary


# implements: api-client.ERRORS.1, api-client.ERRORS.5, tools.RESPONSES.6
@contextmanager
def cooked_errors(
    *,
    not_found: str | None = None,
    forbidden: str | None = None,
    invalid: str | None = None,
    unprocessable: str | None = None,
) -> Iterator[None]:
    """Raise a ToolError for any CookedError inside, with this call's next step for its kind."""
    try:
        yield
    except errors.CookedUnavailable as exc:
        if exc.may_have_changed:
            raise AnswerLost(str(exc), summary=str(exc.with_next_step(""))) from None
        raise ToolError(str(exc)) from None
    except errors.CookedError as exc:
        hints: dict[type[errors.CookedError], str | None] = {
            errors.CookedNotFound: not_found,
            errors.CookedForbidden: forbidden,
            errors.CookedInvalidRequest: invalid,
            errors.CookedUnprocessable: unprocessable,
        }
        hint = hints.get(type(exc))
        raise ToolError(str(exc.with_next_step(hint) if hint else exc)) from None
