"""The SDK's Streamable HTTP session transport, answering in JSON unless a request can stream.

Streamable HTTP lets a server answer each POSTed request either with one JSON body or with
an SSE stream, and obliges clients to accept both. The SDK's session manager makes one
choice for the whole server: SSE for every request (so a URL import can stream progress)
or JSON for every request (so progress is lost). An SSE answer costs about 2 ms more per
tool call on the benchmark machine than a JSON one, most of it in the client that parses
the stream, for a stream that carries nothing but the answer.

Here each request decides. cooked-mcp streams progress, only to a request that carries a
progress token, and a question to the person (``elicitation/create``, the confirmation before
a change that loses data), only to a client that declared elicitation when its session
opened; such a request (a tool call of such a client, and everything that is not a plain
request on an open session: notifications, malformed bodies) goes through the SDK's own code
unchanged. Every other request, ``initialize`` included, is answered with a JSON body.

Every method here overrides or reads a private part of ``StreamableHTTPServerTransport``
(mcp 2.3.0); tests/surface/test_sdk_contract.py fails if an upgrade renames or reshapes one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from functools import partial
from http import HTTPStatus

import anyio
from mcp.server.streamable_http import (
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..jsonrpc_checks import invalid_request, is_answer, read_message
from ..one_answer import interrupted

__all__ = ["MAX_INITIALIZE_BYTES", "JsonWhenSilentTransport"]

#: The largest ``initialize`` request body: real clients send about 1 KB; the SDK's 4 MiB
#: body limit let one session pin some 70 MB of parsed capability keys for half an hour.
MAX_INITIALIZE_BYTES = 16 * 1024

logger = logging.getLogger("cooked_mcp.transports.http_sessions")


class JsonWhenSilentTransport(StreamableHTTPServerTransport):
    """The SDK's session transport, answering a request with nothing to stream in JSON.

    ``JsonWhenSilentSessionManager`` re-classes the transports the SDK builds to this one, so
    it adds no ``__init__`` and keeps its own state in the instance ``__dict__``.
    """

    # Workaround (mcp 2.3.0, private ``_handle_post_request``): the 2025 protocol's entry point
    # answers every request in SSE or every one in JSON (``json_response``); the SDK's 2026
    # entry point already chooses per request (python-sdk PR #3001). Can go once the clients
    # cooked-mcp serves speak the 2026-07-28 protocol; no upstream issue found for the 2025
    # entry point, re-check on upgrade. The same override answers what the SDK leaves open:
    # an invalid JSON-RPC body or an id that is no id (python-sdk issue #2848; its PR #2857
    # was closed), a request reusing an id still in flight (python-sdk issue #3060, open), and
    # an ``initialize`` over ``MAX_INITIALIZE_BYTES`` (no upstream issue found; re-check on
    # upgrade).
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
                if message.method == "initialize":
                    self.__dict__["_client_elicits"] = _declares_elicitation(message.params)
                async with self._cancelled_when_client_leaves(message.id, receive):
                    if not self._answers_in_json(message, request):
                        await super()._handle_post_request(scope, request, receive, send)
                    elif message.method == "initialize" or await self._validate_request_headers(
                        request, send
                    ):
                        await self._answer_in_json(message, request, scope, receive, send)
                return
        await super()._handle_post_request(scope, request, receive, send)

    # Workaround (mcp 2.3.0, private ``_read_stream_writer`` and ``_request_streams``): a client
    # whose connection drops while its request runs (an HTTP read timeout, such as LangChain's
    # ``sse_read_timeout``) sends no notifications/cancelled, and the SDK runs the request on and
    # writes its answer to the closed connection; the dispatcher then counts that answer as
    # received (ToolCall.when_answered), and an identical retry would make a change again. No
    # upstream issue found; re-check on upgrade.
    @contextlib.asynccontextmanager
    async def _cancelled_when_client_leaves(
        self, request_id: RequestId, receive: Receive
    ) -> AsyncIterator[None]:
        """While the body runs, a client that goes before its answer cancels the request, exactly
        as its notifications/cancelled would: an answer it never got is not counted as received."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._cancel_when_gone, request_id, receive)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def _cancel_when_gone(self, request_id: RequestId, receive: Receive) -> None:
        # The body has been read: the next message is the disconnect (the client went, or uvicorn
        # says so once the response is complete, by when the request's stream is gone).
        while (await receive())["type"] != "http.disconnect":
            pass
        writer = self._read_stream_writer
        if str(request_id) not in self._request_streams or writer is None:
            return  # answered: its stream ends at its answer
        logger.info(
            "a client went away before the answer to its request %r: the request is cancelled", request_id
        )
        cancel = JSONRPCNotification(
            jsonrpc="2.0",
            method="notifications/cancelled",
            params={"requestId": request_id, "reason": "the client's connection closed"},
        )
        with (
            anyio.CancelScope(shield=True),
            contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError),
        ):
            await writer.send(SessionMessage(cancel))

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
        if message.method == "tools/call" and self.__dict__.get("_client_elicits", False):
            return False  # the call may ask the person first (handlers/confirmation.py)
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

    # Workaround (mcp 2.3.0, private ``_terminate_unanswered_request``): the SDK's dispatcher no
    # longer answers a cancelled request (python-sdk issue #2480, PR #3188), but its 2025-era
    # HTTP transport still does, with -32800 ``Request cancelled``, so that a resuming client's
    # replay ends; cooked-mcp keeps no event store (nothing resumes), and clients report that
    # answer as one to an unknown request. No upstream issue for the 2025 transport found;
    # it goes with the 2026-07-28 protocol, whose transports must not answer.
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

    # Workaround (mcp 2.3.0, private ``_request_streams``): at shutdown the SDK cuts a request
    # still running off without an answer, though Cooked may have applied its change. No
    # upstream issue found; re-check on upgrade.
    async def interrupt_in_flight(self) -> int:
        """Answer every request still running with its one answer, ``one_answer.interrupted``
        (the request's stream ends at its first answer, so a late result is not sent after it);
        return how many there were."""
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


def _declares_elicitation(params: object) -> bool:
    """Whether an ``initialize`` request's client capabilities include elicitation."""
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    return isinstance(capabilities, dict) and isinstance(capabilities.get("elicitation"), dict)
