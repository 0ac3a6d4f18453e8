"""Streamable HTTP sessions whose requests are answered in plain JSON unless they can stream.

Streamable HTTP lets a server answer each POSTed request either with one JSON body or with
an SSE stream, and obliges clients to accept both. The SDK's session manager makes one
choice for the whole server: SSE for every request (so a URL import can stream progress)
or JSON for every request (so progress is lost). An SSE answer costs about 2 ms more per
tool call on the benchmark machine than a JSON one, most of it in the client that parses
the stream, for a stream that carries nothing but the answer.

Here each request decides. The only thing cooked-mcp streams is progress, and only to a
request that carries a progress token; such a request (and everything that is not a plain
request on an open session: ``initialize``, notifications, malformed bodies) goes through
the SDK's own code unchanged. Every other request is answered with a JSON body. The SDK
makes the same per-request choice for the 2026 protocol (JSON unless the handler emits),
which cooked-mcp already serves through it; this brings it to the 2025 protocol that
today's clients speak. ``initialize`` is answered in JSON too (nothing streams before a
session exists).

Beyond the framing, this module holds what the SDK leaves open:

* a message that is not valid JSON-RPC, or a request with an ``id`` that is not a string or
  an integer, gets the JSON-RPC error for it (``jsonrpc_checks``), not a 202 and silence;
* a request reusing the ``id`` of one still in flight in the same session is refused with
  -32600 (the SDK would replace the first one's answer channel, leaving it waiting for ever);
* a cancelled request gets no answer (the MCP spec says so): its POST ends with 202 and an
  empty body, or its event stream ends without a message;
* what one session can hold is bounded: ``initialize`` of at most ``MAX_INITIALIZE_BYTES``,
  at most ``MAX_SESSIONS`` sessions, idle ones ending after ``SESSION_IDLE_SECONDS``, and
  the longest-idle one closed to make room for a new one before any is refused;
* a refusal of a request that would have opened a session carries no ``mcp-session-id``:
  that session never existed;
* at shutdown, a request still running after the grace period is answered with an error
  saying its change may have been made (``interrupt_in_flight``), not cut off.
"""

from __future__ import annotations

import contextlib
import logging
import math
from functools import partial
from http import HTTPStatus
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import (
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from .jsonrpc_checks import interrupted, invalid_request, is_answer, read_message

__all__ = [
    "MAX_INITIALIZE_BYTES",
    "MAX_SESSIONS",
    "SESSION_IDLE_SECONDS",
    "JsonWhenSilentSessionManager",
    "JsonWhenSilentTransport",
]

#: The largest ``initialize`` request body: real clients send about 1 KB; the SDK's 4 MiB
#: body limit let one session pin some 70 MB of parsed capability keys for half an hour.
MAX_INITIALIZE_BYTES = 16 * 1024
#: Sessions open at once: one user's clients need a handful (the SDK allows 10,000).
MAX_SESSIONS = 100
#: A session with no request in flight for this long ends (the SDK's default is 30 minutes).
SESSION_IDLE_SECONDS = 5 * 60

logger = logging.getLogger(__name__)


class JsonWhenSilentTransport(StreamableHTTPServerTransport):
    """The SDK's session transport, answering a request with nothing to stream in JSON."""

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        try:
            body = await request.body()
        except ClientDisconnect:  # nobody is left to answer, and the request was never whole
            logger.debug("a client went away before its request body was complete")
            return
        if self._get_session_id(request) is None and len(body) > MAX_INITIALIZE_BYTES:
            # Only initialize can open a session: refused unparsed (parsing is what costs memory).
            too_big = invalid_request(None, f"initialize request larger than {MAX_INITIALIZE_BYTES} bytes")
            logger.info("refused an opening request of %d bytes", len(body))
            await self._create_json_response(too_big, HTTPStatus.REQUEST_ENTITY_TOO_LARGE)(
                scope, receive, send
            )
            return
        if self._check_content_type(request):
            message = read_message(body)
            refusal = self._refusal(message, body)
            if refusal is not None:
                logger.info("refused a message: %s", refusal.error.message)
                await self._create_json_response(refusal, HTTPStatus.BAD_REQUEST)(scope, receive, send)
                return
            if isinstance(message, JSONRPCRequest):
                self._remember_id(message.id)
            if self._answers_in_json(message, request):
                assert isinstance(message, JSONRPCRequest)
                initialize = message.method == "initialize"
                if initialize or await self._validate_request_headers(request, send):
                    await self._answer_in_json(message, request, scope, receive, send)
                return
        await super()._handle_post_request(scope, request, receive, send)

    def _refusal(self, message: JSONRPCMessage | JSONRPCError, body: bytes) -> JSONRPCError | None:
        """The error to answer ``message`` with instead of passing it on, or None."""
        if is_answer(message):
            assert isinstance(message, JSONRPCError)
            return message
        if not isinstance(message, JSONRPCRequest):
            return None
        if message.method == "initialize" and len(body) > MAX_INITIALIZE_BYTES:
            return JSONRPCError(
                jsonrpc="2.0",
                id=message.id,
                error=ErrorData(
                    code=INVALID_PARAMS,
                    message=f"initialize request larger than {MAX_INITIALIZE_BYTES} bytes; send fewer capabilities",
                ),
            )
        if str(message.id) in self._request_streams:
            return invalid_request(
                message.id, f"A request with id {message.id!r} is still running in this session; use a new id"
            )
        return None

    def _answers_in_json(self, message: object, request: Request) -> bool:
        """Whether ``message`` can only ever be answered with its response (else the SDK answers).

        Anything this returns False for is left to the SDK, which then reads the same body
        (Starlette keeps it) and applies its own checks and refusals to it.
        """
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse) or not isinstance(message, JSONRPCRequest):
            return False
        return progress_token_from_params(message.params) is None

    async def _answer_in_json(
        self, message: JSONRPCRequest, request: Request, scope: Scope, receive: Receive, send: Send
    ) -> None:
        writer = self._read_stream_writer
        assert writer is not None, "a session's transport is connected before it serves requests"
        request_id = str(message.id)
        self._request_streams[request_id] = anyio.create_memory_object_stream[EventMessage](
            REQUEST_STREAM_BUFFER_SIZE
        )
        answers = self._request_streams[request_id][1]
        metadata = ServerMessageMetadata(
            request_context=request,
            on_request_unanswered=partial(self._terminate_unanswered_request, message.id),
            can_send_request=False,  # a JSON body has no room for a request to the client
        )
        response: Response | None = None
        try:
            await writer.send(SessionMessage(message, metadata=metadata))
            async for event in answers:
                if isinstance(event.message, JSONRPCResponse | JSONRPCError):
                    response = self._create_json_response(event.message)
                    break
                # A notification about this request has no place in a JSON body. None is
                # sent without a progress token; skipping one keeps it from being taken
                # for the answer.
                logger.debug("dropped a message about request %s answered in JSON", request_id)
        except anyio.ClosedResourceError:
            pass  # the session was terminated while the request ran
        finally:
            await self._clean_up_memory_streams(request_id)
        if response is None and request_id in self._cancelled():
            self._cancelled().discard(request_id)
            response = Response(status_code=HTTPStatus.ACCEPTED)  # a cancelled request is not answered
        if response is None:
            response = self._create_error_response(
                "Session terminated before the request completed",
                HTTPStatus.INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
            )
        await response(scope, receive, send)

    def _ids_by_key(self) -> dict[str, RequestId]:
        """The id of each request in flight by its stream key (the SDK keys them by ``str(id)``)."""
        ids: dict[str, RequestId] = self.__dict__.setdefault("_request_ids", {})
        return ids

    def _remember_id(self, request_id: RequestId) -> None:
        ids = self._ids_by_key()
        for key in [key for key in ids if key not in self._request_streams]:
            del ids[key]
        ids[str(request_id)] = request_id

    def _cancelled(self) -> set[str]:
        """Ids of requests cancelled by the client (kept on the instance: the class is swapped in)."""
        cancelled: set[str] = self.__dict__.setdefault("_cancelled_ids", set())
        return cancelled

    async def _terminate_unanswered_request(self, request_id: RequestId) -> None:
        """A request that settled without an answer (cancelled) gets none: its JSON POST ends
        with 202 and an empty body, its event stream ends without a message. The SDK sends it
        ``Request cancelled``, which clients report as an answer to an unknown request."""
        key = str(request_id)
        streams = self._request_streams.get(key)
        if streams is None:
            return
        self._cancelled().add(key)
        await streams[0].aclose()

    async def interrupt_in_flight(self) -> int:
        """Answer every request still running with ``INTERRUPTED``; return how many there were."""
        answered = 0
        ids = self._ids_by_key()
        for key, (sender, _) in list(self._request_streams.items()):
            request_id = ids.get(str(key))
            if request_id is None:
                continue  # the standalone GET stream: no request to answer
            error = interrupted(request_id)
            with (
                anyio.move_on_after(1),
                contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError),
            ):
                await sender.send(EventMessage(error))
                answered += 1
        return answered


class JsonWhenSilentSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, opening sessions on ``JsonWhenSilentTransport`` within the bounds
    of the module docstring."""

    def __init__(self, app: Any, **options: Any) -> None:
        options.setdefault("max_sessions", MAX_SESSIONS)
        options.setdefault("session_idle_timeout", SESSION_IDLE_SECONDS)
        super().__init__(app, **options)

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
        """Answer every request still running in any session (see ``INTERRUPTED``)."""
        answered = 0
        for transport in list(self._server_instances.values()):
            if isinstance(transport, JsonWhenSilentTransport):
                answered += await transport.interrupt_in_flight()
        return answered
