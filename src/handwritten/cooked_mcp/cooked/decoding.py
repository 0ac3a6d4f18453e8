"""A 2xx answer as a validated model, or a ``CookedResponseError`` naming the bad field
(``items[3].id: field required``) and never quoting the body, which may hold recipe text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cooked_mcp.cooked.bounds import MAX_SUCCESS_BODY_BYTES
from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.cooked.models import RecipeList
from cooked_mcp.cooked.sender import Answer
from cooked_mcp.cooked.shape import shape_of
from cooked_mcp.exceptions import CookedResponseError, UnexpectedAnswer

M = TypeVar("M", bound=BaseModel)

#: Answers Cooked may send as a bare JSON array instead of ``{"items": [...]}``.
_BARE_ARRAY_MODELS: frozenset[type[BaseModel]] = frozenset({RecipeList})

_NEXT_STEP = "retry once; if it happens again, Cooked's API has changed and cooked-mcp needs an update"


# implements: api-client.RESPONSES.1, api-client.RESPONSES.3
def decode(
    model: type[M], reply: Answer, endpoint: Endpoint, secrets: Callable[[], Iterable[str]] = tuple
) -> M:
    """``secrets()`` (asked only when an answer is refused) are kept out of its shape (``shape.shape_of``)."""
    data: Any = None

    def fail(problem: str) -> CookedResponseError:
        return UnexpectedAnswer(
            f"The {endpoint.name} request failed: Cooked's answer {problem}",
            problem=problem,
            shape=None if data is None else shape_of(data, tuple(secrets())),
            status=reply.status,
            next_step=_NEXT_STEP,
        )

    if reply.truncated:
        raise fail(f"is larger than {MAX_SUCCESS_BODY_BYTES // (1024 * 1024)} MiB")
    if not reply.body.strip():
        raise fail("is empty")
    try:
        data = json.loads(reply.body)
    except (ValueError, RecursionError):
        raise fail("is not valid JSON") from None
    if not isinstance(data, dict) and not (isinstance(data, list) and model in _BARE_ARRAY_MODELS):
        raise fail("is not a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise fail(f"has an unexpected shape: {_first_bad_field(exc)}") from None


def _first_bad_field(error: ValidationError) -> str:
    """``items[3].id: field required (and 2 more problems)``, without the offending input."""
    problems = error.errors(include_url=False, include_input=False, include_context=False)
    first = problems[0]
    location = _location(first["loc"]) or "response"
    message = str(first["msg"]).removeprefix("Value error, ")
    message = message[:1].lower() + message[1:]
    more = len(problems) - 1
    suffix = f" (and {more} more problem{'s' if more != 1 else ''})" if more else ""
    return f"{location}: {message}{suffix}"


def _location(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text
