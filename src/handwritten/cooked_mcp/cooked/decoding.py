"""Cooked's answer as what it means. A 2xx one: a validated model, or a ``CookedResponseError``
naming the bad field (``items[3].id: field required``) and never quoting the body, which may hold
recipe text; for a report, the answer's shape: JSON types, never values, and a key only when it
looks like a schema key (a key can be data too), bounded in depth and width. Any other: the
``CookedError`` that says so, with a next step an agent can act on; Cooked's own message is
untrusted, cleaned and shortened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from cooked_mcp import exceptions as errors
from cooked_mcp.cooked.endpoints import Endpoint, Key
from cooked_mcp.cooked.models import RecipeList
from cooked_mcp.cooked.sender import MAX_SUCCESS_BODY_BYTES, Answer
from cooked_mcp.redaction import redact
from cooked_mcp.text import one_line

#: The answer model a decode returns.
M = TypeVar("M", bound=BaseModel)

#: Nesting levels described; deeper values show as their type only.
MAX_SHAPE_DEPTH: Final = 4
#: Keys described per object; more are counted, not listed.
MAX_SHAPE_KEYS: Final = 30
#: Array elements whose shapes are merged into the array's element shape.
_ELEMENTS_LOOKED_AT: Final = 5
#: A key that does not look like a schema key (a key can be data too) shows as ``<other key N>``.
_SCHEMA_KEY = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*\??")
_MAX_KEY_CHARS: Final = 32
#: The JSON type of each scalar the json module gives (any other: a string).
_SCALARS: Final = {type(None): "null", bool: "boolean", int: "number", float: "number"}


# implements: api-client.RESPONSES.1, api-client.RESPONSES.3
def decode(
    model: type[M], reply: Answer, endpoint: Endpoint, secrets: Callable[[], Iterable[str]] = tuple
) -> M:
    """``secrets()`` (asked only when an answer is refused) are kept out of its shape (``shape_of``)."""
    data: Any = None

    def fail(problem: str) -> errors.CookedResponseError:
        return errors.UnexpectedAnswer(
            f"The {endpoint.name} request failed: Cooked's answer {problem}",
            problem=problem,
            shape=None if data is None else shape_of(data, tuple(secrets())),
            status=reply.status,
            next_step="retry once; if it happens again, Cooked's API has changed and cooked-mcp needs an update",
        )

    if reply.truncated:
        raise fail(f"is larger than {MAX_SUCCESS_BODY_BYTES // (1024 * 1024)} MiB")
    try:  # the usual answer, parsed and validated in one pass (~10 us less); any other takes the checks below
        return model.model_validate_json(reply.body)
    except ValidationError:
        pass
    if not reply.body.strip():
        if not model.model_fields:  # an operation that returns nothing may say so with no body at all
            return model()
        raise fail("is empty")
    try:
        data = json.loads(reply.body)
    except (ValueError, RecursionError):
        raise fail("is not valid JSON") from None
    if not isinstance(data, dict) and not (isinstance(data, list) and model is RecipeList):
        raise fail("is not a JSON object")  # only a recipe list comes bare from Cooked
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise fail(f"has an unexpected shape: {_first_bad_field(exc)}") from None


def _first_bad_field(error: ValidationError) -> str:
    """``items[3].id: field required (and 2 more problems)``, without the offending input."""
    problems = error.errors(include_url=False, include_input=False, include_context=False)
    location = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in problems[0]["loc"])
    message = str(problems[0]["msg"]).removeprefix("Value error, ")
    more = len(problems) - 1
    suffix = f" (and {more} more problem{'s' if more != 1 else ''})" if more else ""
    return f"{location.removeprefix('.') or 'response'}: {message[:1].lower()}{message[1:]}{suffix}"


def shape_of(value: Any, secrets: tuple[str, ...] = (), depth: int = 0) -> Any:
    """``{"items": ["array", {"id": "string"}]}`` for ``{"items": [{...}]}``; ``secrets`` never show as keys."""
    if isinstance(value, dict):
        if depth >= MAX_SHAPE_DEPTH:
            return "object"
        out: dict[str, Any] = {}
        others = 0
        for key in list(value)[:MAX_SHAPE_KEYS]:
            shown = key
            if (
                len(key) > _MAX_KEY_CHARS
                or not _SCHEMA_KEY.fullmatch(key)
                or any(secret and secret.casefold() in key.casefold() for secret in secrets)
            ):
                others += 1
                shown = f"<other key {others}>"
            out[shown] = shape_of(value[key], secrets, depth + 1)
        if len(value) > MAX_SHAPE_KEYS:
            out["<more keys>"] = len(value) - MAX_SHAPE_KEYS
        return out
    if isinstance(value, list):
        if depth >= MAX_SHAPE_DEPTH or not value:
            return ["array"]
        elements: list[Any] = []
        for element in value[:_ELEMENTS_LOOKED_AT]:
            shape = shape_of(element, secrets, depth + 1)
            if shape not in elements:
                elements.append(shape)
        return ["array", *elements]
    return _SCALARS.get(type(value), "string")


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


# implements: api-client.ERRORS.1, api-client.ERRORS.5, api-client.ERRORS.6, api-client.ERRORS.3, api-client.ERRORS.4, authentication.SECRETS.3
def error_from_response(reply: Answer, endpoint: Endpoint, secrets: Collection[str]) -> errors.CookedError:
    """A 4xx or 5xx answer (other than a session 401) as an error; a body that is not a JSON object
    adds nothing but its status. Cooked's message and code are scrubbed of ``secrets`` in every spelling."""
    try:
        data = json.loads(reply.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        data = None
    fields = data if isinstance(data, dict) else {}
    code = _cleaned(fields.get(Key.CODE), secrets, _MAX_CODE_CHARS)
    message = _cleaned(fields.get(Key.MESSAGE), secrets, _MAX_MESSAGE_CHARS)
    seconds = (reply.retry_after or "").strip()  # delta-seconds; an HTTP-date is ignored, not guessed at
    retry_after = float(seconds) if seconds.isdecimal() and len(seconds) < 10 else None
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


def _cleaned(value: object, secrets: Collection[str], limit: int) -> str | None:
    if not isinstance(value, str):
        return None
    return one_line(redact(value, secrets), "", limit) or None
