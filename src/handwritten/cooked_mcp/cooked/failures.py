"""From Cooked's answer that is no success to the ``CookedError`` that says so, with a next step an
agent can act on; Cooked's own message is untrusted, cleaned and shortened.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

from cooked_mcp import exceptions as errors
from cooked_mcp.cooked.endpoints import Endpoint, Key
from cooked_mcp.cooked.sender import Answer
from cooked_mcp.text import one_line

_MAX_MESSAGE_CHARS = 300
_MAX_CODE_CHARS = 64
_NEXT_STEPS_BY_CODE = {
    "INVALID_REQUEST": "check the arguments (IDs, required fields) and try again with corrected values",
    "NOT_FOUND": "check the ID; read the recipe list or the shopping list again to get current IDs",
    "EXTRACTION_FAILED": (
        "Cooked found no recipe on that page; copy the recipe text from the page and "
        "preview and save it as raw text instead"
    ),
}
#: The kind of error each status is; any other 4xx is a ``CookedRejected``, any 5xx a ``CookedServerError``.
_KINDS: dict[int, type[errors.CookedError]] = {
    400: errors.CookedInvalidRequest,
    403: errors.CookedForbidden,
    404: errors.CookedNotFound,
    422: errors.CookedUnprocessable,
    429: errors.CookedRateLimited,
}


# implements: api-client.ERRORS.1, api-client.ERRORS.5, api-client.ERRORS.6, api-client.ERRORS.3, api-client.ERRORS.4
def error_from_response(
    reply: Answer, endpoint: Endpoint, redact: Callable[[str], str]
) -> errors.CookedError:
    """A 4xx or 5xx answer (other than a session 401) as an error; a body that is not a JSON object
    adds nothing but its status. ``redact`` scrubs Cooked's message and code."""
    try:
        data = json.loads(reply.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    fields = data if isinstance(data, dict) else {}
    code = _cleaned(fields.get(Key.CODE), redact, _MAX_CODE_CHARS)
    message = _cleaned(fields.get(Key.MESSAGE), redact, _MAX_MESSAGE_CHARS)
    try:  # Retry-After in delta-seconds; an HTTP-date or garbage is ignored rather than guessed at
        retry_after: float | None = float(reply.retry_after or "nan")
    except ValueError:
        retry_after = None
    if retry_after is not None and not 0 <= retry_after < math.inf:
        retry_after = None
    kind = _KINDS.get(reply.status, errors.CookedRejected if reply.status < 500 else errors.CookedServerError)
    summary = f"Cooked rejected the {endpoint.name} request"
    if kind is errors.CookedRateLimited:
        wait = f"wait {retry_after:g} seconds" if retry_after is not None else "wait a little"
        next_step = f"Cooked is rate limiting; {wait}, then retry once"
    elif kind is errors.CookedServerError:
        summary = f"Cooked failed while handling the {endpoint.name} request"
        next_step = "this is a problem on Cooked's side; retry later"
    elif kind is errors.CookedForbidden or code == "FORBIDDEN":
        # An account changes only the recipes it owns; a 403 on listing recipes or the shopping list
        # is about the account, not about a recipe.
        next_step = (
            "this recipe belongs to someone else and cannot be changed; read it and save a copy instead"
            if endpoint.changes and "recipe_id" in endpoint.path_params
            else f"Cooked does not let this account {endpoint.name}; check that cooked-mcp is set up for the "
            "right Cooked account (cooked-mcp --check), and do not repeat the call unchanged"
        )
    else:  # Cooked's own code says more than the status, when it has one we know
        next_step = _NEXT_STEPS_BY_CODE.get(code or "") or (
            _NEXT_STEPS_BY_CODE["NOT_FOUND"]
            if kind is errors.CookedNotFound
            else "check the arguments and try again; do not repeat the same call unchanged"
        )
    return kind(
        summary,
        status=reply.status,
        code=code,
        cooked_message=message,
        retry_after=retry_after,
        next_step=next_step,
    )


def _cleaned(value: object, redact: Callable[[str], str], limit: int) -> str | None:
    return one_line(redact(value), "", limit) or None if isinstance(value, str) else None
