"""Fault switches: the misbehaviours of a real service and its proxies that a client must survive."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args
from urllib.parse import unquote

from .exchange import Incoming, Reply, error_reply, json_reply

FaultKind = Literal[
    "malformed_json",
    "wrong_shape",
    "extra_fields",
    "rate_limited",
    "rate_limited_no_retry_after",
    "html_502",
    "empty_503",
    "huge_error",
    "cut_off",
    "redirect_other_host",
    "slow",
    "trickle",
    "answer_lost",
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
HUGE_ERROR_BYTES = 10 * 1024 * 1024
RETRY_AFTER_SECONDS = 7
_DEFAULT_CODES = {400: "INVALID_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND",
                  422: "EXTRACTION_FAILED", 429: "RATE_LIMITED"}  # fmt: skip
JsonBody = Mapping[str, Any] | list[Any]


@dataclass
class Fault:
    """``kind`` "status" answers with status/body/headers as given; the others are the named faults."""

    kind: str
    method: str | None = None
    path: str | None = None
    path_regex: str | None = None
    times: int | None = 1
    status: int = 500
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 5.0

    def matches(self, incoming: Incoming) -> bool:
        if self.method is not None and self.method.upper() != incoming.method:
            return False
        forms = {incoming.path, unquote(incoming.path)}
        if incoming.query_string:
            forms.add(f"{incoming.path}?{incoming.query_string}")
        if self.path is not None and self.path not in forms:
            return False
        return self.path_regex is None or any(re.search(self.path_regex, f) for f in forms)


def custom(
    *,
    method: str | None,
    path: str | None,
    path_regex: str | None,
    status: int,
    body: bytes | str | JsonBody | None,
    headers: Mapping[str, str] | None,
    times: int | None,
) -> Fault:
    """A dict/list body is sent as JSON; no body means Cooked's usual error JSON for that status."""
    given = dict(headers or {})
    if body is None:
        code = _DEFAULT_CODES.get(status, "INTERNAL_ERROR" if status >= 500 else "ERROR")
        body = {"code": code, "message": f"Injected fault {status}"}
    if isinstance(body, str):
        raw, media = body.encode(), "text/plain; charset=utf-8"
    elif isinstance(body, bytes):
        raw, media = body, "text/plain; charset=utf-8"
    else:
        raw, media = json.dumps(body).encode(), "application/json"
    if not any(k.lower() == "content-type" for k in given):
        given["Content-Type"] = media
    return _checked(Fault("status", method, path, path_regex, times, status, raw, given))


def named(
    kind: str,
    *,
    method: str | None,
    path: str | None,
    path_regex: str | None,
    times: int | None,
    seconds: float,
) -> Fault:
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
    return _checked(Fault(kind, method, path, path_regex, times, seconds=seconds))


def _checked(fault: Fault) -> Fault:
    if fault.times is not None and fault.times < 1:
        raise ValueError("times must be a positive int or None (until cleared)")
    if fault.path_regex is not None:
        re.compile(fault.path_regex)
    return fault


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, incoming: Incoming) -> Fault | None:
        """The oldest matching fault, used up by one when it has a count."""
        with self._lock:
            for fault in self._faults:
                if fault.matches(incoming):
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times == 0:
                            self._faults.remove(fault)
                    return fault
        return None


def _huge_body() -> Iterator[bytes]:
    head, tail = b'{"code": "INTERNAL_ERROR", "message": "', b'"}'
    yield head
    remaining, chunk = HUGE_ERROR_BYTES - len(head) - len(tail), b"x" * 65536
    while remaining > 0:
        yield chunk[:remaining]
        remaining -= len(chunk)
    yield tail


def with_extras(value: Any) -> Any:
    """Unknown keys at every object level, of every JSON type, as Cooked may add at any time."""
    if isinstance(value, list):
        return [with_extras(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: with_extras(v) for k, v in value.items()}
    out.update(
        {
            "zz-unknown-text": "ignore me",
            "zz-unknown-number": 42.5,
            "zz-unknown-flag": True,
            "zz-unknown-null": None,
            "zz-unknown-list": [1, "two", {"three": 3}],
            "zz-unknown-object": {"nested": {"deeper": ["x"]}},
        }
    )
    return out


def _trickled(body: bytes, seconds: float, stop: threading.Event) -> Iterator[bytes]:
    """One byte every ``seconds``: each read is quick, the whole answer is not (until the fake stops)."""
    for index in range(len(body)):
        if index and stop.wait(seconds):
            return
        yield body[index : index + 1]


def render(
    fault: Fault,
    incoming: Incoming,
    normal: Callable[[], Reply],
    port: int,
    stop: threading.Event | None = None,
) -> Reply:
    """The answer a fault gives; "slow", "trickle", "answer_lost" and "extra_fields" wrap the normal answer.

    "trickle" sends the normal answer's status and headers at once, then its body one byte
    every ``fault.seconds``; ``stop`` (set when the fake stops) ends it early.
    """
    json_type = [("Content-Type", "application/json")]
    match fault.kind:
        case "status":
            return Reply(fault.status, fault.body, list(fault.headers.items()))
        case "malformed_json":
            return Reply(200, b'{"items": [{"id": "r-0001", "title": "Shaksh', json_type)
        case "wrong_shape":  # not an array either: Cooked may send lists bare (variants.py)
            return json_reply(200, "unexpected shape")
        case "extra_fields":
            reply = normal()
            assert isinstance(reply.body, bytes)
            try:
                value = json.loads(reply.body)
            except ValueError:
                return reply
            reply.body = json.dumps(with_extras(value)).encode()
            return reply
        case "rate_limited" | "rate_limited_no_retry_after":
            reply = error_reply(429, "RATE_LIMITED", "Too many requests, slow down")
            if fault.kind == "rate_limited":
                reply.headers.append(("Retry-After", str(RETRY_AFTER_SECONDS)))
            return reply
        case "html_502":
            page = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>"
            return Reply(502, page, [("Content-Type", "text/html")])
        case "empty_503":
            return Reply(503)
        case "huge_error":
            return Reply(500, _huge_body(), json_type, content_length=HUGE_ERROR_BYTES, close=True)
        case "cut_off":
            sent = b'{"items": [{"id": "r-0001", "title": "Shaksh'
            return Reply(200, sent, json_type, content_length=len(sent) + 4096, close=True)
        case "redirect_other_host":
            target = f"http://127.0.0.2:{port}{incoming.path}"
            if incoming.query_string:
                target += f"?{incoming.query_string}"
            return Reply(302, b"", [("Location", target)])
        case "answer_lost":  # Cooked acted (after the wait), then the connection dropped unanswered
            reply = normal()
            reply.hang_up = True
            return reply
        case "trickle":
            reply = normal()
            assert isinstance(reply.body, bytes)
            body = reply.body
            reply.body = _trickled(body, fault.seconds, stop or threading.Event())
            reply.content_length = len(body)
            return reply
        case _:  # "slow": the caller has already slept
            return normal()
