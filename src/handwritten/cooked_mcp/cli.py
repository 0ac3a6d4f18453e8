"""The ``cooked-mcp`` command: parse flags, load settings, serve; a config problem is one stderr line, exit 2."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__, docs_url
from .config import DECLARED, Settings, environment_variables, load_settings, schema_keys
from .exceptions import ConfigError
from .logging_setup import configure_logging

EXIT_CONFIG = 2
EXIT_INTERRUPTED = 128 + 2  # SIGINT


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line like every other startup error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"cooked-mcp: {message} (see cooked-mcp --help)", file=sys.stderr)
        raise SystemExit(EXIT_CONFIG)


def _epilog() -> str:
    """Every setting on one screen: the names come from the settings' declarations, so this cannot drift."""
    return "\n".join(
        [
            "environment variables (they win over the config file):",
            *_two_columns(environment_variables(), down=False),  # no order of their own: read across
            "config file keys (TOML; a *_cmd key runs a command that prints the value):",
            *_two_columns(schema_keys(), down=True),  # read down, so keys of one table stay together
            f"{DECLARED['confirm_changes'].env}=false: no questions before changes that lose data",
            "Each setting explained:",
            f"  {docs_url('configuration.md')}",
        ]
    )


def _two_columns(items: Sequence[str], *, down: bool) -> list[str]:
    padded = [*items, ""] if len(items) % 2 else list(items)
    half = len(padded) // 2
    left, right = (padded[:half], padded[half:]) if down else (padded[::2], padded[1::2])
    width = max(map(len, left)) + 2
    return [f"  {one:<{width}}{two}".rstrip() for one, two in zip(left, right, strict=True)]


# implements: server.IDENTITY.2, server.TRANSPORT.2, server.CONFIG.6, server.CONFIG.8
def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cooked-mcp",
        # The package's description; --transport's help says stdio is the default.
        description="A single-user MCP server for a Cooked (https://cooked.wiki) account.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for declared in (DECLARED[name] for name in Settings.model_fields if name in DECLARED):
        if declared.flag:
            parser.add_argument(
                declared.flag, dest=declared.name, metavar=declared.metavar, help=declared.help
            )
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="TOML configuration file (default: $XDG_CONFIG_HOME/cooked-mcp/config.toml)",
    )
    parser.add_argument(
        "--check", action="store_true", help="log in, check Cooked with read-only requests, exit"
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="with --check: also change and undo a test recipe and a test shopping-list line "
        "(asks first unless --yes)",
    )
    parser.add_argument(
        "--yes", action="store_true", help="with --check --write: do not ask for confirmation"
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="with --check: write the per-endpoint results to FILE (no secrets, no recipe text) for a bug report",
    )
    parser.add_argument("--clients", action="store_true", help="remote mode: list connected clients")
    parser.add_argument("--revoke", metavar="CLIENT|all", help="remote mode: end a client's access")
    parser.add_argument("--version", action="version", version=f"cooked-mcp {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.check and (args.write or args.yes or args.report):
        parser.error("--write, --yes and --report only go with --check")
    if args.clients or args.revoke:
        from .remote import manage

        return manage(os.environ, revoke=args.revoke)
    # --http-addr or --public-url alone means HTTP (nothing else listens); with --transport stdio, a contradiction.
    implied = "--http-addr" if args.http_addr else "--public-url" if args.public_url else None
    transport = "http" if implied and args.transport is None else args.transport
    try:
        if implied and transport == "stdio":
            raise ConfigError(f"{implied} needs the http transport: drop --transport stdio or {implied}")
        settings = load_settings(
            config_path=args.config,
            environ=os.environ,
            transport=transport,
            http_addr=args.http_addr,
            public_url=args.public_url,
        )
    except ConfigError as exc:
        print(f"cooked-mcp: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    for warning in settings.warnings:
        print(f"cooked-mcp: warning: {warning}", file=sys.stderr)
    configure_logging(settings.log_level, secrets=settings.secret_values())
    if args.check:
        from .check import run_check

        return run_check(
            settings, write=args.write, yes=args.yes, report=Path(args.report) if args.report else None
        )
    return serve(settings)


# implements: server.TRANSPORT.1, server.TRANSPORT.2-1, server.TRANSPORT.2-2
def serve(settings: Settings) -> int:
    """Run the configured transport until the client goes away or a signal arrives (a Ctrl-C while starting too)."""
    # Start-up makes many long-lived objects and next to no garbage: the cyclic collector is off
    # meanwhile, and what start-up made is frozen (``gc.freeze``) so later collections skip it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        try:
            from .app import build_application

            application = build_application(settings)
            if settings.transport == "http":
                from .transports.http import serve_http as serve_transport
            else:
                from .transports.stdio import serve_stdio as serve_transport
        finally:
            if collecting:
                gc.freeze()
                gc.enable()
        return serve_transport(application)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
