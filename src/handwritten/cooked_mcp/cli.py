"""The ``cooked-mcp`` command: parse flags, load settings, serve.

Every configuration problem is reported here, before anything is served, as
one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__
from .config import ConfigError, Settings, load_settings
from .logging_setup import configure_logging

EXIT_CONFIG = 2
EXIT_INTERRUPTED = 128 + 2  # SIGINT


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other startup error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"cooked-mcp: {message} (see cooked-mcp --help)", file=sys.stderr)
        raise SystemExit(EXIT_CONFIG)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cooked-mcp",
        description="MCP server for a Cooked (https://cooked.wiki) account, over stdio by default.",
    )
    parser.add_argument("--transport", metavar="stdio|http", help="MCP transport (default: stdio)")
    parser.add_argument(
        "--http-addr", metavar="HOST:PORT", help="address for --transport http (default: 127.0.0.1:8123)"
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="TOML configuration file (default: $XDG_CONFIG_HOME/cooked-mcp/config.toml)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="log in, make read-only requests, report whether Cooked answers as expected, and exit",
    )
    parser.add_argument("--version", action="version", version=f"cooked-mcp {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings(
            config_path=args.config,
            environ=os.environ,
            transport=args.transport,
            http_addr=args.http_addr,
        )
    except ConfigError as exc:
        print(f"cooked-mcp: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    configure_logging(settings.log_level, secrets=_secrets(settings))
    if args.check:
        from .check import run_check

        return run_check(settings)
    return serve(settings)


def _secrets(settings: Settings) -> list[str]:
    """What the log redaction filter must never let through; cookie values are added once a client exists."""
    values = [settings.username, settings.password.get_secret_value()]
    if settings.http_token is not None:
        values.append(settings.http_token.get_secret_value())
    return values


def serve(settings: Settings) -> int:
    """Run the configured transport until the client goes away or a signal arrives.

    The transports catch SIGINT and SIGTERM while they serve; a Ctrl-C before that (while
    starting) ends the process as quietly, with the shell's status for it.
    """
    try:
        return _serve(settings)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _serve(settings: Settings) -> int:
    if settings.transport == "http":
        from .transports.http import serve_http

        return serve_http(settings)
    from .transports.stdio import serve_stdio

    return serve_stdio(settings)
