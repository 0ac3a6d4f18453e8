"""Session cookies: random tokens the fake can forget all at once to play an expired login."""

from __future__ import annotations

import secrets
import threading

COOKIE_NAME = "ring-session"


class Sessions:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, str] = {}
        self.fixed_token: str | None = None  # every login answers this value: a canary tests can search for

    def issue(self, username: str) -> str:
        token = self.fixed_token or secrets.token_urlsafe(24)
        with self._lock:
            self._users[token] = username
        return token

    def user_for(self, token: str | None) -> str | None:
        with self._lock:
            return self._users.get(token) if token else None

    def expire_all(self) -> None:
        with self._lock:
            self._users.clear()
