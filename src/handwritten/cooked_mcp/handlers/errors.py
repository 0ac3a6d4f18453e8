"""Cooked client errors as tool errors an agent can recover from.

The client's errors already carry status, Cooked's code and message, and a
generic next step; a handler knows better what a 404 or 403 means for its
own call (a recipe ID versus a shopping-list entry, an unknown aisle versus a
malformed body, a web page without a recipe), so it may say so here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cooked_mcp_runtime.results import ToolError

from ..cooked.errors import CookedError


# implements: api-client.ERRORS.1, api-client.ERRORS.5, tools.RESPONSES.6
@contextmanager
def cooked_errors(
    *,
    not_found: str | None = None,
    forbidden: str | None = None,
    invalid: str | None = None,
    unprocessable: str | None = None,
) -> Iterator[None]:
    """Raise a ToolError for any CookedError inside, with call-specific next steps."""
    try:
        yield
    except CookedError as exc:
        raise ToolError(
            describe(
                exc, not_found=not_found, forbidden=forbidden, invalid=invalid, unprocessable=unprocessable
            )
        ) from None


def describe(
    exc: CookedError,
    *,
    not_found: str | None = None,
    forbidden: str | None = None,
    invalid: str | None = None,
    unprocessable: str | None = None,
) -> str:
    hint = {404: not_found, 403: forbidden, 400: invalid, 422: unprocessable}.get(exc.status or 0)
    if hint is None:
        return str(exc)
    return str(
        type(exc)(
            exc.summary,
            status=exc.status,
            code=exc.code,
            cooked_message=exc.cooked_message,
            retry_after=exc.retry_after,
            next_step=hint,
        )
    )
