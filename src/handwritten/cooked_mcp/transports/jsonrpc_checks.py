"""What a received message is, or the JSON-RPC error it must be answered with.

The SDK validates a message against its union of request, notification and response; a
message that is none of these reaches it as an exception and goes unanswered, and a
request whose ``id`` is not a string or an integer (``1.5``, ``null``, ``true``, ``{}``)
passes as a notification, which is never answered either. A client that sent either
waits for ever. JSON-RPC 2.0 (section 5.1) says what to answer instead: -32700 for what
is not JSON, -32600 for what is not a valid request, with the request's ``id`` when it
can be read and ``null`` only when it cannot. Both transports use this one reading.
"""

from __future__ import annotations

import json
import re
from typing import Any

import mcp_types as types
import pydantic_core
from pydantic import ValidationError

__all__ = [
    "answer_from_here",
    "error_line",
    "find_id",
    "invalid_request",
    "is_answer",
    "read_message",
]


def read_message(raw: str | bytes) -> types.JSONRPCMessage | types.JSONRPCError:
    """The message in ``raw``, or (as a ``JSONRPCError`` not yet sent) what to answer it with.

    A ``JSONRPCError`` returned here is always the answer to send; a JSON-RPC error the
    client itself sent comes back inside the union like any other valid message, so the
    caller tells them apart by identity, not by type: see ``is_answer``.
    """
    try:
        data: Any = pydantic_core.from_json(raw)
    except ValueError:
        return _Answer.make(None, types.PARSE_ERROR, "Parse error: the message is not valid JSON")
    if isinstance(data, list):
        return _Answer.make(
            None, types.INVALID_REQUEST, "Batches are not supported: send one message at a time"
        )
    if not isinstance(data, dict):
        return _Answer.make(None, types.INVALID_REQUEST, "Invalid request: a message must be a JSON object")
    request_id = data.get("id")
    readable = request_id if type(request_id) in (int, str) else None
    if "id" in data and readable is None:
        return _Answer.make(None, types.INVALID_REQUEST, "Invalid request: id must be a string or an integer")
    try:
        return types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        where = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'][-2:]) or 'message'}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)[:3]
        )
        return _Answer.make(readable, types.INVALID_REQUEST, f"Invalid request ({where})")


def is_answer(message: types.JSONRPCMessage | types.JSONRPCError) -> bool:
    """Whether ``message`` came from ``read_message`` as the error to answer with."""
    return isinstance(message, _Answer)


def invalid_request(request_id: types.RequestId | None, message: str) -> types.JSONRPCError:
    return _Answer.make(request_id, types.INVALID_REQUEST, message)


def answer_from_here(request_id: types.RequestId | None, code: int, message: str) -> types.JSONRPCError:
    """A JSON-RPC error made by this server, to be sent (``is_answer`` is true of it)."""
    return _Answer.make(request_id, code, message)


def find_id(head: bytes, tail: bytes) -> types.RequestId | None:
    """The top-level ``id`` of a message too long to read whole, from its first and last bytes.

    Clients write ``id`` near the start (the Python SDK) or at the very end (the TypeScript
    SDK), so both ends are kept. None when neither holds a string or integer ``id``.
    """
    value = _top_level_id(head.decode("utf-8", errors="replace"))
    if value is _MISSING:
        value = _last_members_id(tail)
    return value if type(value) in (int, str) else None  # type: ignore[return-value]


_MISSING = object()
_COLON = re.compile(r"\s*:\s*")
_ID_KEY = re.compile(rb'"id"\s*:')


def _top_level_id(text: str) -> object:
    """The value of a top-level ``"id"`` member in the start of a JSON object, or ``_MISSING``."""
    depth, index, in_string = 0, 0, False
    while index < len(text):
        char = text[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            if depth == 1 and text.startswith('"id"', index) and (colon := _COLON.match(text, index + 4)):
                try:
                    return json.JSONDecoder().raw_decode(text, colon.end())[0]
                except ValueError:
                    return _MISSING  # cut off in the middle of the value
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        index += 1
    return _MISSING


def _last_members_id(tail: bytes) -> object:
    """The ``id`` among the last members of a JSON object: ``{`` plus the rest from a top-level
    ``"id":`` is itself a valid object, which it is not from a nested one (a brace too many)."""
    for match in _ID_KEY.finditer(tail):
        try:
            members = json.loads(b"{" + tail[match.start() :])
        except ValueError:
            continue
        return members.get("id", _MISSING)
    return _MISSING


def error_line(error: types.JSONRPCError) -> bytes:
    """``error`` as one newline-terminated line of the stdio wire."""
    return types.JSONRPCError.model_dump_json(error, by_alias=True, exclude_unset=True).encode() + b"\n"


class _Answer(types.JSONRPCError):
    """A JSON-RPC error made here, to be sent (distinct from an error a client sent)."""

    @classmethod
    def make(cls, request_id: types.RequestId | None, code: int, message: str) -> _Answer:
        return cls(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
