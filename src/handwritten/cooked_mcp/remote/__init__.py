"""Remote mode: with ``--public-url``, the HTTP transport is also a single-owner OAuth 2.1
authorization server, so claude.ai, the Claude apps and ChatGPT can connect from their clouds.

Built on the SDK's public auth API (``mcp.server.auth``); this package adds what it lacks:
Client ID Metadata Documents (``cimd``), the consent page and the owner password (``consent``),
the provider with its single-use codes and rotating refresh tokens (``provider``), and the
store that keeps connections across restarts (``store``). ``remote_mode`` is the one thing the
HTTP transport calls; ``manage`` serves ``--clients`` and ``--revoke``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cooked_mcp.config import Settings

    from .wiring import Remote

__all__ = ["manage", "remote_mode"]


def remote_mode(settings: Settings) -> Remote:
    """What the HTTP transport adds in remote mode (imported only then: the SDK's auth is not light)."""
    from .wiring import build

    return build(settings)


def manage(environ: Mapping[str, str], *, revoke: str | None) -> int:
    """``cooked-mcp --clients`` (``revoke`` None) or ``--revoke CLIENT|all``: prints, returns the exit status."""
    from .store import manage_clients

    return manage_clients(environ, revoke=revoke)
