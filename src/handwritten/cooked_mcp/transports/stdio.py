"""MCP over the process's stdin and stdout.

When stdin and stdout are pipes or sockets, as they are when an MCP client spawns the
server, or a terminal, the event loop watches them itself (``stdio_event_loop``: the
SDK's ``stdio_server`` costs more CPU per call than cooked-mcp does). Anything else (a
regular file) is served by the SDK's transport, which handles those.

Either way, while serving, fd 0 reads the null device and fd 1 writes to stderr, so a
library or a child process that prints cannot corrupt the protocol stream
(``stdio_event_loop``), and the end of stdin does not cut off requests read before it
(``protocol_guard``): the SDK would cancel every request still running.

What the SDK leaves unanswered is answered here (``protocol_guard``): a line that is not
JSON (-32700), not a JSON-RPC message or with an ``id`` that is no id (-32600), a request
reusing the id of one still running, and a message over ``MAX_MESSAGE_BYTES``, whose ``id``
is looked for in its first and last bytes; when it has none that can be read, no answer
can reach the request that sent it, so the session ends with a message on stderr rather
than leave the client waiting for ever.

SIGINT and SIGTERM (``stop_signals``) end the session the same way as the end of stdin,
with a short grace (``stop_grace_seconds`` in ``config.Limits``; a second signal ends it at once) after which
calls still running get their one answer, an error saying their change may or may not have
been made (``protocol_guard``); the exit status is then 128 + the first signal. A terminal is
served by the event loop too, through its own file description (opened by name), so Ctrl-C
ends the server at once and the shell's terminal stays blocking.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.stdio import stdio_server

from ..app import Application
from .stdio_event_loop import MAX_MESSAGE_BYTES, answering_before_the_end, event_loop_stdio, pollable
from .stop_signals import StopSignals

__all__ = ["MAX_MESSAGE_BYTES", "serve_stdio"]


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
