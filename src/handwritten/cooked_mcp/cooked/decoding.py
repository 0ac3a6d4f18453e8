"""Turn a 2xx answer into a validated model, or a ``CookedResponseError`` that names the bad field.

The error names the field (``items[3].id: field required``) so a maintainer can fix the
contract, and never quotes the body or the offending value: the body may hold recipe
text, or worse, and an agent gains nothing from seeing it.
"""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from cooked_mcp.cooked.endpoints import Endpoint
from cooked_mcp.cooked.errors import CookedResponseError
from cooked_mcp.cooked.wire import MAX_SUCCESS_BODY_BYTES, Reply

__all__ = ["decode", "describe_validation_error"]

M = TypeVar("M", bound=BaseModel)

_NEXT_STEP = "retry once; if it happens again, Cooked's API has changed and cooked-mcp needs an update"


# implements: api-client.RESPONSES.1, api-client.RESPONSES.3
def decode(model: type[M], reply: Reply, endpoint: Endpoint) -> M:
    def fail(problem: str) -> CookedResponseError:
        return CookedResponseError(
            f"Cooked's answer to the {endpoint.name} request {problem}",
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
    if not isinstance(data, dict):
        raise fail("is not a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise fail(f"has an unexpected shape: {describe_validation_error(exc)}") from None


def describe_validation_error(error: ValidationError) -> str:
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
