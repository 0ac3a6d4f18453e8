"""Logging to stderr only (stdout is the stdio transport's), through a filter that scrubs the
registered secrets from every logger's records, libraries included."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable

from .redaction import MIN_SECRET_LENGTH, redact

#: Loggers that print URLs (the username), raw headers (cookies) or whole messages below WARNING.
QUIET_LIBRARY_LOGGERS = ("httpx", "httpcore", "sse_starlette", "mcp.server.sse")

#: Something that knows secrets only at run time, such as the client's current cookie values.
SecretSource = Callable[[], Iterable[str]]

_FORMAT = "cooked-mcp %(levelname)s %(name)s: %(message)s"
_active: RedactionFilter | None = None


# implements: authentication.SECRETS.1, server.SECURITY.2
class RedactionFilter(logging.Filter):
    """Replaces registered secrets in every record. It takes no lock: secrets and sources are added
    at start-up and replaced whole, so a record logged from a signal handler never waits for one."""

    def __init__(self, secrets: Iterable[str] = (), sources: Iterable[SecretSource] = ()) -> None:
        super().__init__()
        self._secrets: frozenset[str] = frozenset()
        self._sources: tuple[SecretSource, ...] = tuple(sources)
        self.add(*secrets)

    def add(self, *secrets: str) -> None:
        self._secrets = self._secrets.union(s for s in secrets if len(s) >= MIN_SECRET_LENGTH)

    def add_source(self, source: SecretSource) -> None:
        self._sources = (*self._sources, source)

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = self._current()
        try:
            message = record.getMessage()
        except Exception:  # a broken %-format must not lose the record, nor print its arguments
            message = f"{record.msg} (log arguments could not be formatted)"
        record.msg, record.args = redact(message, secrets), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, secrets)
        return True

    def _current(self) -> frozenset[str]:
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


def configure_logging(level: str, secrets: Iterable[str] = ()) -> None:
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


def quiet_library_loggers() -> None:
    for name in QUIET_LIBRARY_LOGGERS:
        library_logger = logging.getLogger(name)
        if library_logger.level < logging.WARNING:  # NOTSET (0) included: it would inherit the root's
            library_logger.setLevel(logging.WARNING)


def register_secret_source(source: SecretSource) -> None:
    """Add run-time secrets (the session cookies) to the installed filter; a no-op before ``configure_logging``."""
    if _active is not None:
        _active.add_source(source)
