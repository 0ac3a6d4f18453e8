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


class RecipeGone(ToolError):
    """Cooked has no recipe with the ID read: an answer in itself, for a deletion (writes.py)."""


# implements: api-client.ERRORS.1, api-client.ERRORS.5, tools.RESPONSES.6
@contextmanager
def cooked_errors(
    *,
    not_found: str | None = None,
    forbidden: str | None = None,
    invalid: str | None = None,
    unprocessable: str | None = None,
    gone: type[ToolError] = ToolError,
) -> Iterator[None]:
    """Raise a ToolError for any CookedError inside, with this call's next step for its kind
    (a 404 as ``gone``, for a caller that tells it apart)."""
    try:
        yield
    except errors.CookedUnavailable as exc:
        if exc.may_have_changed:
            raise AnswerLost(str(exc), summary=str(exc.with_next_step(""))) from None
        raise ToolError(str(exc)) from None
    except errors.CookedError as exc:
        hints = {
            errors.CookedNotFound: not_found,
            errors.CookedForbidden: forbidden,
            errors.CookedInvalidRequest: invalid,
            errors.CookedUnprocessable: unprocessable,
        }
        hint = next((hint for kind, hint in hints.items() if isinstance(exc, kind) and hint), None)
        error = gone if isinstance(exc, errors.CookedNotFound) else ToolError
        raise error(str(exc if hint is None else exc.with_next_step(hint))) from None
