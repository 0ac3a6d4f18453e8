"""The SDK's Streamable HTTP session manager, within bounds one user's clients never reach.

What one session can hold is bounded: ``initialize`` of at most ``MAX_INITIALIZE_BYTES``
(``http_transport``), at most ``MAX_SESSIONS`` sessions, idle ones ending after
``SESSION_IDLE_SECONDS``, and the longest-idle one closed to make room for a new one
before any is refused. A refusal of a request that would have opened a session carries no
``mcp-session-id``: that session never existed. Sessions are opened on
``JsonWhenSilentTransport``, which answers in JSON unless a request can stream.

The overrides reach into private parts of ``StreamableHTTPSessionManager`` (mcp 2.3.0);
tests/surface/test_sdk_contract.py fails if an upgrade renames or reshapes one.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Message, Receive, Scope, Send

from .http_transport import MAX_INITIALIZE_BYTES, JsonWhenSilentTransport

__all__ = [
    "MAX_INITIALIZE_BYTES",
    "MAX_SESSIONS",
    "SESSION_IDLE_SECONDS",
    "JsonWhenSilentSessionManager",
    "JsonWhenSilentTransport",
]

#: Sessions open at once: one user's clients need a handful (the SDK allows 10,000).
MAX_SESSIONS = 100
#: A session with no request in flight for this long ends (the SDK's default is 30 minutes).
SESSION_IDLE_SECONDS = 5 * 60

logger = logging.getLogger("cooked_mcp.transports.http_sessions")


class JsonWhenSilentSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, opening sessions on ``JsonWhenSilentTransport`` within the bounds
    of the module docstring."""

    def __init__(self, app: Any, **options: Any) -> None:
        options.setdefault("max_sessions", MAX_SESSIONS)
        options.setdefault("session_idle_timeout", SESSION_IDLE_SECONDS)
        super().__init__(app, **options)

    # Workaround (mcp 2.3.0, private ``_admit_session``, and a live object's class swapped):
    # the manager builds its sessions' transports itself with no way to choose their class,
    # and at ``max_sessions`` it refuses a newcomer (503) rather than close an idle session.
    # No upstream issue found for either; re-check on upgrade (a transport factory argument
    # would let the class swap go).
    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            self._close_longest_idle()
        transport = super()._admit_session(requestor)
        if transport is not None:
            # Admission (the session limit, the owner) stays the SDK's; only the answering
            # changes, and the subclass adds no state, so the built transport is re-classed.
            transport.__class__ = JsonWhenSilentTransport
        return transport

    def _close_longest_idle(self) -> None:
        """Make room by ending the session idle longest (none is ended while serving a request)."""
        idle = [
            (transport.idle_scope.deadline, session_id)
            for session_id, transport in self._server_instances.items()
            if transport.idle_scope is not None and transport.idle_scope.deadline != math.inf
        ]
        if not idle:
            return
        _, session_id = min(idle)
        transport = self._server_instances.pop(session_id)
        self._session_owners.pop(session_id, None)
        assert transport.idle_scope is not None
        transport.idle_scope.cancel()  # its server task ends, and terminates the transport
        logger.info("closed the longest-idle session to open a new one (%d open)", self.max_sessions)

    # Workaround (mcp 2.3.0, private ``_serve_opening_request``): a refused opening request
    # still names the session the SDK discards (python-sdk issue #3228 fixed the discarding,
    # not the header). No upstream issue found for the header; re-check on upgrade.
    async def _serve_opening_request(
        self, http_transport: StreamableHTTPServerTransport, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """The SDK's, except that a refusal does not name the session it discards."""

        async def send_without_a_dead_session(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"mcp-session-id"]
                message = {**message, "headers": headers}
            await send(message)

        await super()._serve_opening_request(http_transport, scope, receive, send_without_a_dead_session)

    def close_listening_streams(self) -> None:
        """End every session's standalone GET stream (for shutdown: it never ends by itself)."""
        for transport in list(self._server_instances.values()):
            transport.close_standalone_sse_stream()

    async def interrupt_in_flight(self) -> int:
        """Answer every request still running in any session (see ``one_answer``)."""
        answered = 0
        for transport in list(self._server_instances.values()):
            if isinstance(transport, JsonWhenSilentTransport):
                answered += await transport.interrupt_in_flight()
        return answered
