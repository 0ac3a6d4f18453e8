"""Logging to stderr only, with a redaction filter as a second line of defence for secrets.

stdout belongs to the stdio transport: one stray line there corrupts the JSON-RPC stream,
so the only handler writes to stderr.

No log line of ours holds a credential, cookie or token: messages name settings, endpoints
and path templates, never values. That is the first line of defence, and it is easy to
break with one careless ``logger.debug("%s", request)`` in a later change or in a library.
So every record also passes through ``RedactionFilter`` before it is written: it replaces
every registered secret (the Cooked login name and canonical username, the password, the
HTTP bearer token, and the session cookie values the client holds right now) with
``[redacted]`` in the formatted message, the traceback and the stack. The filter sits on the
handler, not on a logger, because handler filters see the records of every logger that
propagates to the root, library loggers included.

The libraries in ``QUIET_LIBRARY_LOGGERS`` are also held at WARNING whatever the configured
level: httpx logs full request URLs at INFO (user-scoped paths hold the username), httpcore
logs raw headers at DEBUG (``Cookie``, ``Set-Cookie``) and sse_starlette logs every chunk it
streams, tool results included. Our own DEBUG line per Cooked request says what is useful
without them.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterable

from .redaction import MIN_SECRET_LENGTH, REDACTED, redact

__all__ = [
    "QUIET_LIBRARY_LOGGERS",
    "REDACTED",
    "RedactionFilter",
    "SecretSource",
    "configure_logging",
    "quiet_library_loggers",
    "register_secret_source",
]

#: Library loggers that print URLs, raw headers or whole messages below WARNING: httpx (URLs, which
#: hold the username), httpcore (``Cookie`` / ``Set-Cookie``), sse_starlette (every SSE chunk as a
#: bytes repr: tool results, the username in escaped UTF-8) and the SDK's SSE transport (every message).
QUIET_LIBRARY_LOGGERS = ("httpx", "httpcore", "sse_starlette", "mcp.server.sse")

#: Something that knows secrets only at run time, such as the client's current cookie values.
SecretSource = Callable[[], Iterable[str]]

_FORMAT = "cooked-mcp %(levelname)s %(name)s: %(message)s"
_active: RedactionFilter | None = None


# implements: authentication.SECRETS.1, server.SECURITY.2
class RedactionFilter(logging.Filter):
    """Replaces registered secret values in every record it sees; never drops a record.

    Each secret is matched in every spelling ``cooked_mcp.redaction`` knows (percent-encoded
    in a URL, JSON-escaped in a dumped body), in any letter case.

    Filtering takes no lock: the secrets and sources are immutable values, replaced whole
    when one is added, so a record logged from anywhere (a signal handler in someone else's
    code, a source that logs) never waits for a lock its own thread holds. Adding takes a
    re-entrant lock, only so that two threads adding at once both keep their values.
    """

    def __init__(self, secrets: Iterable[str] = (), sources: Iterable[SecretSource] = ()) -> None:
        super().__init__()
        self._adding = threading.RLock()
        self._secrets: frozenset[str] = frozenset()
        self._sources: tuple[SecretSource, ...] = tuple(sources)
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        with self._adding:
            self._secrets = self._secrets.union(s for s in secrets if len(s) >= MIN_SECRET_LENGTH)

    def add_source(self, source: SecretSource) -> None:
        with self._adding:
            self._sources = (*self._sources, source)

    def redact(self, text: str) -> str:
        return redact(text, self._current())

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken %-format must not lose the record, nor print its arguments
            message = f"{record.msg} (log arguments could not be formatted)"
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True

    def _current(self) -> frozenset[str]:
        """The registered secrets plus whatever the sources hold right now."""
        values, sources = self._secrets, self._sources  # each read once: a whole value
        if not sources:
            return values
        current = set(values)
        for source in sources:
            try:
                current.update(source())
            except Exception:  # noqa: S112 - a source that fails (e.g. a jar mid-update) must not stop logging
                continue
        return frozenset(current)


def configure_logging(level: str, secrets: Iterable[str] = ()) -> RedactionFilter:
    """Send every record to stderr at ``level``, with ``secrets`` (and later sources) redacted."""
    global _active
    redaction = RedactionFilter(secrets)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_FORMAT))
    handler.addFilter(redaction)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    quiet_library_loggers()
    _active = redaction
    return redaction


def quiet_library_loggers() -> None:
    """Raise each of ``QUIET_LIBRARY_LOGGERS`` to WARNING unless it is already quieter.

    Called by ``configure_logging`` at the entry point: nothing below the handlers touches
    global logging, so a host application embedding the client calls this itself if it wants
    the same protection. Setting the parent loggers' level is enough: their child loggers
    (``httpcore.http11``...) inherit it.
    """
    for name in QUIET_LIBRARY_LOGGERS:
        library_logger = logging.getLogger(name)
        if library_logger.level < logging.WARNING:  # NOTSET (0) included: it would inherit the root's
            library_logger.setLevel(logging.WARNING)


def register_secret_source(source: SecretSource) -> None:
    """Add run-time secrets (the Cooked session cookies) to the installed filter, if any.

    A no-op before ``configure_logging``: embedded uses (tests, the in-memory client) have
    no handler of ours to protect.
    """
    if _active is not None:
        _active.add_source(source)
