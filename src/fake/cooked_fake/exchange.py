"""Plain request/answer values, so the HTTP plumbing and the fake's logic never see each other's types."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Incoming:
    """A request as read off the socket; ``path`` is still percent-encoded so routing decodes once."""

    method: str
    path: str
    query_string: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    """An answer not yet written.

    ``body`` may be an iterable of chunks so a 10 MB error never sits in memory; ``content_length``
    may then be set by hand (larger than the bytes sent, for a cut-off answer). ``hang_up``: the
    connection is closed without a byte of the answer (the request was carried out all the same).
    """

    status: int
    body: bytes | Iterable[bytes] = b""
    headers: list[tuple[str, str]] = field(default_factory=list)
    content_length: int | None = None
    close: bool = False
    hang_up: bool = False


class ApiError(Exception):
    """Raised anywhere in the fake's logic to answer with Cooked's ``{"code", "message"}`` error body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


def json_reply(status: int, value: Any, headers: Mapping[str, str] | None = None) -> Reply:
    extra = [(k, v) for k, v in (headers or {}).items() if k.lower() != "content-type"]
    return Reply(status, json.dumps(value).encode(), [("Content-Type", "application/json"), *extra])


def error_reply(status: int, code: str, message: str) -> Reply:
    return json_reply(status, {"code": code, "message": message})
