"""MCP over the process's stdin and stdout.

Pipes, sockets and terminals (how an MCP client or a person starts the server) are served by
the event loop itself (``stdio_event_loop``: the SDK's ``stdio_server`` costs more CPU per call
than cooked-mcp does); anything else, a regular file, by the SDK's transport. Either way the
guard (``protocol_guard``) answers what the SDK leaves unanswered, and a stop (the end of stdin,
SIGINT or SIGTERM) gives the calls still running their grace and one answer each; after a
signal the exit status is 128 + that signal.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.stdio import stdio_server

from ..app import Application
from .stdio_event_loop import answering_before_the_end, event_loop_stdio, pollable
from .stop_signals import StopSignals

__all__ = ["serve_stdio"]


# implements: server.TRANSPORT.1, server.TRANSPORT.2-1
def serve_stdio(application: Application) -> int:
    """Serve until stdin ends (0) or SIGINT/SIGTERM arrives (128 + the signal)."""
    settings = application.settings
    if os.isatty(0):
        print(
            f"cooked-mcp: waiting for an MCP client on stdin (Cooked account {settings.username} at "
            f"{settings.base_url}); an MCP client starts this itself. Press Ctrl-C to stop.",
            file=sys.stderr,
            flush=True,
        )
    return anyio.run(_serve, application)


async def _serve(application: Application) -> int:
    stop = StopSignals()
    async with anyio.create_task_group() as signals:
        await signals.start(stop.watch)
        async with application:
            server = application.server
            changes = application.tools.changes_finished
            limits = application.settings.limits
            streams = (
                event_loop_stdio(limits, stop, changes)
                if pollable(0) and pollable(1)
                else answering_before_the_end(stdio_server(), limits, stop, changes)
            )
            async with streams as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        signals.cancel_scope.cancel()
    return 128 + stop.signal if stop.signal else 0
