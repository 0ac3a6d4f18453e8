"""Logging to stderr only: stdout belongs to the stdio transport."""

from __future__ import annotations

import logging
import sys


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("cooked-mcp %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
