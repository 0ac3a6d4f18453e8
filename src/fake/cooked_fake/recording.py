"""Request recording: tests assert on what the client actually sent, and on what the fake answered."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from .exchange import Incoming

LOGIN_PATH = "/api/public/login"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # raw, still percent-encoded, without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes
    json: Any  # the parsed body, or None when it is empty or not JSON
    status: int  # what the fake answered; 0 while the answer is still being prepared

    def to_wire(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["body"] = self.body.decode("utf-8", "replace")
        return out


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


class Recorder:
    """Keyed by arrival number: the status is filled in once the answer is chosen, before it is sent."""

    def __init__(self) -> None:
        # Reentrant: a wait_until condition may read the fake's requests (snapshot) while it holds it.
        self._lock = threading.RLock()
        self._arrived = threading.Condition(self._lock)
        self._records: dict[int, RecordedRequest] = {}
        self._next = 0
        self.login_count = 0

    def arrive(self, incoming: Incoming) -> int:
        record = RecordedRequest(
            incoming.method,
            incoming.path,
            parse_qs(incoming.query_string, keep_blank_values=True),
            dict(incoming.headers),
            incoming.body,
            _parse(incoming.body),
            0,
        )
        with self._lock:
            self._next += 1
            self._records[self._next] = record
            if incoming.method == "POST" and incoming.path == LOGIN_PATH:
                self.login_count += 1
            self._arrived.notify_all()
            return self._next

    def wait_for(self, method: str, path: str, timeout: float) -> RecordedRequest:
        """The first recorded ``method path`` request, waiting up to ``timeout`` s for it to arrive."""

        def found() -> RecordedRequest | None:
            return next((r for r in self._records.values() if (r.method, r.path) == (method, path)), None)

        with self._arrived:
            record = self._arrived.wait_for(found, timeout)
        if record is None:
            raise TimeoutError(f"no {method} {path} reached the fake within {timeout} s")
        return record

    def wait_until(self, done: Callable[[list[RecordedRequest]], bool], timeout: float) -> None:
        """Until ``done(records)`` holds, checked at each arrival and each answer chosen."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: done(list(self._records.values())), timeout):
                raise TimeoutError(f"the fake's requests did not reach the awaited state within {timeout} s")

    def settle(self, key: int, status: int) -> None:
        with self._lock:
            if key in self._records:  # cleared meanwhile: stay cleared
                self._records[key] = dataclasses.replace(self._records[key], status=status)
            self._arrived.notify_all()

    def snapshot(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._records.values())

    def clear(self, *, logins: bool = False) -> None:
        with self._lock:
            self._records.clear()
            if logins:
                self.login_count = 0
