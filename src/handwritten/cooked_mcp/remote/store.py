"""What remote mode remembers across restarts: registered clients, grants and their tokens.

One JSON file, ``$XDG_STATE_HOME/cooked-mcp/remote.json`` (mode 0600), holding tokens only as
SHA-256 hashes: a copy of the file lets nobody in. Every change is read-modify-write under an
``flock`` and lands by ``os.replace``; a reader reloads when the file changed, so
``cooked-mcp --revoke`` in another process takes effect on the running server's next request.

A grant is one consent: the client that got it, and the family of tokens descending from its
authorization code. Revoking a grant (reuse of a rotated refresh token, a second use of its code,
``--revoke``) drops every token of the family at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sys
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

STATE_FILE = "remote.json"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class Grant(BaseModel):
    client_id: str
    #: Who the owner let in, as the consent page named it: the host of the client's URL.
    host: str
    resource: str
    connected: float
    last_used: float


class Token(BaseModel):
    grant: str
    expires: float
    #: A refresh token once rotated: kept until it expires, so that its reuse is recognised.
    used: bool = False


class State(BaseModel):
    #: Clients registered by DCR (RFC 7591), by client_id, as the SDK's model dumps them.
    clients: dict[str, dict[str, object]] = Field(default_factory=dict)
    grants: dict[str, Grant] = Field(default_factory=dict)
    access: dict[str, Token] = Field(default_factory=dict)
    refresh: dict[str, Token] = Field(default_factory=dict)

    def revoke(self, grant: str) -> None:
        self.grants.pop(grant, None)
        for table in (self.access, self.refresh):
            for key in [key for key, token in table.items() if token.grant == grant]:
                del table[key]

    def drop_expired(self, now: float) -> None:
        for table in (self.access, self.refresh):
            for key in [key for key, token in table.items() if token.expires < now]:
                del table[key]
        live = {token.grant for token in self.refresh.values()} | {t.grant for t in self.access.values()}
        for grant in [grant for grant in self.grants if grant not in live]:
            del self.grants[grant]


def state_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_STATE_HOME/cooked-mcp``, or ``~/.local/state/cooked-mcp`` as the XDG spec says."""
    base = environ.get("XDG_STATE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".local" / "state")
    return Path(base) / "cooked-mcp"


class Store:
    """The state file, read again only when it changed (a ``stat`` per read)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / STATE_FILE
        self._lock_path = folder / "remote.lock"
        self._state = State()
        self._seen: tuple[int, int, int] | None = None

    def read(self) -> State:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return self._state
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen != self._seen:
            self._state = State.model_validate_json(self.path.read_bytes())
            self._seen = seen
        return self._state

    @contextlib.contextmanager
    def change(self) -> Iterator[State]:
        """The current state, to change in place; written back (atomically, 0600) when the block ends."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            state = self.read()
            yield state
            state.drop_expired(time.time())
            temporary = self.path.with_suffix(".tmp")
            with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
                out.write(state.model_dump_json().encode())
            os.replace(temporary, self.path)
            self._seen = None
            self.read()
        finally:
            os.close(descriptor)  # releases the lock


# implements: extensions.REMOTE.14
def manage_clients(environ: Mapping[str, str], *, revoke: str | None) -> int:
    """List the connected clients, or end one (by host or client_id) or all of them."""
    store = Store(state_dir(environ))
    grants = store.read().grants
    if revoke is None:
        if not grants:
            print("No client is connected.")
        for grant in sorted(grants.values(), key=lambda g: g.connected):
            print(f"{grant.host}  connected {_when(grant.connected)}  last used {_when(grant.last_used)}")
            print(f"  client_id {grant.client_id}")
        return 0
    chosen = [key for key, g in grants.items() if revoke == "all" or revoke in (g.host, g.client_id)]
    if not chosen:
        print(f"cooked-mcp: no connected client is {revoke!r}; see cooked-mcp --clients", file=sys.stderr)
        return 1
    with store.change() as state:
        for key in chosen:
            state.revoke(key)
    print(f"Revoked {len(chosen)} connection(s); the client must ask for consent again.")
    return 0


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")
