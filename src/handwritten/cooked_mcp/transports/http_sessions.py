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
today's clients speak.
"""

from __future__ import annotations

import logging
from functools import partial
from http import HTTPStatus

import anyio
import pydantic_core
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
from mcp_types import INTERNAL_ERROR, JSONRPCError, JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

__all__ = ["JsonWhenSilentSessionManager", "JsonWhenSilentTransport"]

logger = logging.getLogger(__name__)


class JsonWhenSilentTransport(StreamableHTTPServerTransport):
    """The SDK's session transport, answering a request with nothing to stream in JSON."""

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        try:
            message = await self._silent_request(request)
        except ClientDisconnect:  # nobody is left to answer, and the request was never whole
            logger.debug("a client went away before its request body was complete")
            return
        if message is None:
            await super()._handle_post_request(scope, request, receive, send)
            return
        if await self._validate_request_headers(request, send):
            await self._answer_in_json(message, request, scope, receive, send)

    async def _silent_request(self, request: Request) -> JSONRPCRequest | None:
        """The request in this POST if it can only ever be answered with its response, else None.

        Anything this returns None for is left to the SDK, which then reads the same body
        (Starlette keeps it) and applies its own checks and refusals to it.
        """
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse) or not self._check_content_type(request):
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(
                pydantic_core.from_json(await request.body()), by_name=False
            )
        except (ValueError, ValidationError):  # ValidationError is a ValueError; named for the reader
            return None
        if not isinstance(message, JSONRPCRequest) or message.method == "initialize":
            return None
        if progress_token_from_params(message.params) is not None:
            return None
        return message

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
        if response is None:
            response = self._create_error_response(
                "Session terminated before the request completed",
                HTTPStatus.INTERNAL_SERVER_ERROR,
                INTERNAL_ERROR,
            )
        await response(scope, receive, send)


class JsonWhenSilentSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, opening sessions on ``JsonWhenSilentTransport``."""

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        transport = super()._admit_session(requestor)
        if transport is not None:
            # Admission (the session limit, the owner) stays the SDK's; only the answering
            # changes, and the subclass adds no state, so the built transport is re-classed.
            transport.__class__ = JsonWhenSilentTransport
        return transport
