"""Every reach into a private part of mcp, uvicorn (and the h11 it drives) or sse-starlette, in one place.

Each reach carries a comment naming the limitation it works around and what would let it go;
pyproject.toml bounds those packages to the releases checked, and
tests/surface/test_sdk_contract.py drives each reach against the installed release. On an
upgrade: run that test and tests/http, re-check each comment, and delete what the upstream
package now does itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from functools import partial
from http import HTTPStatus
from typing import Any

import anyio
import h11
import uvicorn
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
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from sse_starlette.sse import AppStatus
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..config.limits import Limits
from .http_sockets import MAX_CONNECTIONS, connection_cap
from .protocol_guard import interrupted, read_message, refusal
from .stop_signals import StopSignals, cancel_when_set

__all__ = [
    "BoundedH11Protocol",
    "GracefulServer",
    "JsonWhenSilentSessionManager",
    "JsonWhenSilentTransport",
    "bounded_protocol",
]

logger = logging.getLogger("cooked_mcp.transports.http")

#: Sessions open at once: one user's clients need a handful (the SDK allows 10,000).
MAX_SESSIONS = 100
#: A session with no request in flight for this long ends (the SDK's default is 30 minutes).
SESSION_IDLE_SECONDS = 5 * 60
_BUSY_BODY = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Too many connections"}}'
_BUSY_503 = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"retry-after: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)


class JsonWhenSilentTransport(StreamableHTTPServerTransport):
    """The SDK's session transport, answering a request with nothing to stream in JSON: an SSE
    answer costs about 2 ms more per call, most of it in the client parsing a stream that
    carries nothing but the answer. ``JsonWhenSilentSessionManager`` re-classes the transports
    the SDK builds to this one, so it adds no ``__init__`` and keeps its state in ``__dict__``.
    """

    # Reach (mcp 2.3.0, private ``_handle_post_request``): the 2025 protocol's entry point
    # answers every request in SSE or every one in JSON (``json_response``); the SDK's 2026
    # entry point already chooses per request (python-sdk PR #3001). Goes once the clients
    # cooked-mcp serves speak the 2026-07-28 protocol. It is also where the guard's rules
    # (``protocol_guard.refusal``) see each message: the SDK has no hook before its dispatcher
    # (python-sdk issues #2848 and #3060 would make the framing and duplicate-id rules go).
    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        try:
            body = await request.body()
        except ClientDisconnect:  # nobody is left to answer, and the request was never whole
            logger.debug("a client went away before its request body was complete")
            return
        if self._check_content_type(request):
            message = read_message(body)
            refused = refusal(message, body, lambda request_id: str(request_id) in self._request_streams)
            if refused is not None:
                logger.info("refused a message: %s", refused.error.message)
                await self._create_json_response(refused, HTTPStatus.BAD_REQUEST)(scope, receive, send)
                return
            if isinstance(message, JSONRPCRequest):
                if message.method == "initialize":
                    capabilities = (message.params or {}).get("capabilities")
                    elicits = isinstance(capabilities, dict) and isinstance(
                        capabilities.get("elicitation"), dict
                    )
                    self.__dict__["_client_elicits"] = elicits
                async with self._in_flight(message.id, receive):
                    if not self._answers_in_json(message, request):
                        await super()._handle_post_request(scope, request, receive, send)
                    elif message.method == "initialize" or await self._validate_request_headers(
                        request, send
                    ):
                        await self._answer_in_json(message, request, scope, receive, send)
                return
        await super()._handle_post_request(scope, request, receive, send)

    # Reach (mcp 2.3.0, private ``_read_stream_writer`` and ``_request_streams``): a client
    # whose connection drops while its request runs (an HTTP read timeout, such as LangChain's
    # ``sse_read_timeout``) sends no notifications/cancelled, and the SDK runs the request on and
    # writes its answer to the closed connection; the dispatcher then counts that answer as
    # received (ToolCall.when_answered), and an identical retry would make a change again. No
    # upstream issue found; re-check on upgrade.
    @contextlib.asynccontextmanager
    async def _in_flight(self, request_id: RequestId, receive: Receive) -> AsyncIterator[None]:
        """While the body runs, its id is kept by its stream key (the SDK's ``str(id)``; the
        interrupted answer needs the id itself), and a client gone before its answer cancels it."""
        ids: dict[str, RequestId] = self.__dict__.setdefault("_request_ids", {})
        ids[str(request_id)] = request_id
        # A plain task, not an anyio task group: the group's cancel scope formats the task's repr
        # on every cancel, and the group cost about 50 µs of CPU per request against 18 µs. Unlike
        # the group's, a task's cancel() is not held off by an anyio shield, so the watcher is
        # cancelled only while it waits for the disconnect: a notifications/cancelled on its way
        # is sent whole, and waited for even when the request's own scope was cancelled.
        sending = asyncio.Event()
        watcher = asyncio.get_running_loop().create_task(self._cancel_when_gone(request_id, receive, sending))
        try:
            yield
        finally:
            ids.pop(str(request_id), None)
            if not sending.is_set():
                watcher.cancel()
            try:
                await asyncio.wait((watcher,))
            except asyncio.CancelledError:  # the request's scope was cancelled: wait all the same
                with anyio.CancelScope(shield=True):
                    await asyncio.wait((watcher,))
                raise
            if not watcher.cancelled() and (error := watcher.exception()) is not None:
                raise error

    async def _cancel_when_gone(
        self, request_id: RequestId, receive: Receive, sending: asyncio.Event
    ) -> None:
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
        sending.set()
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await writer.send(SessionMessage(cancel))

    def _answers_in_json(self, message: JSONRPCRequest, request: Request) -> bool:
        """Whether ``message`` can only ever be answered with its response: not when it carries a
        progress token, or is a tool call of a client that declared elicitation (a question to
        the person may come first). Else the SDK streams it, reading the body Starlette kept."""
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse):
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
                # A notification has no place in a JSON body (none comes without a progress token).
                logger.debug("dropped a message about request %s answered in JSON", request_id)
        except anyio.ClosedResourceError:
            pass  # the session was terminated while the request ran
        finally:
            await self._clean_up_memory_streams(request_id)
        if response is None and self.is_terminated:
            gone = "Session terminated before the request completed"
            response = self._create_error_response(gone, HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR)
        # Else only ``_terminate_unanswered_request`` ended the stream: a cancelled request is not answered.
        await (response or Response(status_code=HTTPStatus.ACCEPTED))(scope, receive, send)

    # Reach (mcp 2.3.0, private ``_terminate_unanswered_request``): the SDK's dispatcher no
    # longer answers a cancelled request (python-sdk issue #2480, PR #3188), but its 2025-era
    # HTTP transport still does, with -32800 ``Request cancelled``, so that a resuming client's
    # replay ends; cooked-mcp keeps no event store (nothing resumes), and clients report that
    # answer as one to an unknown request. No upstream issue for the 2025 transport found;
    # it goes with the 2026-07-28 protocol, whose transports must not answer.
    async def _terminate_unanswered_request(self, request_id: RequestId) -> None:
        """A request that settled without an answer (cancelled) gets none: its JSON POST ends
        with 202 and an empty body, its event stream ends without a message."""
        streams = self._request_streams.get(str(request_id))
        if streams is not None:
            await streams[0].aclose()

    # Reach (mcp 2.3.0, private ``_request_streams``): at shutdown the SDK cuts a request
    # still running off without an answer, though Cooked may have applied its change. No
    # upstream issue found; re-check on upgrade.
    async def interrupt_in_flight(self) -> int:
        """Answer every request still running with its one answer, ``protocol_guard.interrupted``
        (the request's stream ends at its first answer, so a late result is not sent after it);
        return how many there were."""
        answered = 0
        for key, request_id in list(self.__dict__.get("_request_ids", {}).items()):
            streams = self._request_streams.get(key)
            if streams is None:
                continue  # not started yet, or answered
            with (
                anyio.move_on_after(1),
                contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError),
            ):
                await streams[0].send(EventMessage(interrupted(request_id)))
                answered += 1
        return answered


class JsonWhenSilentSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, opening sessions on ``JsonWhenSilentTransport`` within the bounds
    of the module docstring."""

    def __init__(self, app: Any, **options: Any) -> None:
        options.setdefault("max_sessions", MAX_SESSIONS)
        options.setdefault("session_idle_timeout", SESSION_IDLE_SECONDS)
        super().__init__(app, **options)

    # Reach (mcp 2.3.0, private ``_admit_session``, ``_server_instances``, ``_session_owners``,
    # and a live object's class swapped): the manager builds its sessions' transports itself
    # with no way to choose their class, and at ``max_sessions`` it refuses a newcomer (503)
    # rather than close an idle session. No upstream issue found for either; a transport
    # factory argument would let the class swap go, an eviction policy the rest.
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

    def close_listening_streams(self) -> None:
        """End every session's standalone GET stream (for shutdown: it never ends by itself)."""
        for transport in list(self._server_instances.values()):
            transport.close_standalone_sse_stream()

    async def interrupt_in_flight(self) -> int:
        """Answer every request still running in any session (see ``protocol_guard``)."""
        answered = 0
        for transport in list(self._server_instances.values()):
            if isinstance(transport, JsonWhenSilentTransport):
                answered += await transport.interrupt_in_flight()
        return answered


# Reach (uvicorn 0.54, its h11 protocol's internals: ``connections``, ``cycle``, ``conn``,
# ``handle_events``, ``on_response_complete``, ``shutdown``): uvicorn has no head or body
# deadline and no connection cap with eviction (only ``limit_concurrency``, which answers 503
# to everyone once silent sockets fill it). Goes when uvicorn bounds them itself (encode/uvicorn
# discussions on slowloris; none merged as of 0.54).
class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines and a connection cap (``http_sockets``); ``cap`` and
    ``limits`` are set on the class by ``bounded_protocol``."""

    cap = MAX_CONNECTIONS
    limits = Limits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting_since = time.monotonic()  # waiting for a request head, or None while one runs
        self._busy = False
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.cap and not self._make_room():
            logger.warning("refused a connection: all %d connections are busy", self.cap)
            transport.write(_BUSY_503)
            transport.close()
            return
        self._wait_for_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        """At shutdown, close a connection whose request is not whole yet, as uvicorn already
        closes an idle one: nothing has been asked, and uvicorn would otherwise wait for the
        rest of its body until its graceful-shutdown timeout. A request being answered keeps
        its grace."""
        cycle = self.cycle
        if cycle is not None and cycle.more_body and not cycle.response_started:
            self._close("closed a connection whose request body was not complete at shutdown")
        else:
            super().shutdown()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and self.cycle is not None and not self.cycle.response_complete:
            self._busy = True
            self._arm(self.limits.http_body_seconds, self._body_overdue)

    def on_response_complete(self) -> None:
        self._busy = False
        if not self.transport.is_closing():
            self._wait_for_head()
        super().on_response_complete()  # may start a pipelined request (handle_events above)

    def _wait_for_head(self) -> None:
        self._waiting_since = time.monotonic()
        self._arm(self.limits.http_head_seconds, self._head_overdue)

    def _head_overdue(self) -> None:
        if not self._busy:
            self._close("no complete request head within %.1f s", self.limits.http_head_seconds)

    def _body_overdue(self) -> None:
        cycle = self.cycle
        if self._busy and cycle is not None and cycle.more_body and not cycle.response_started:
            self._close("request body not complete within %.1f s", self.limits.http_body_seconds)

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for a request; False if all are busy."""
        idle = [
            conn
            for conn in self.connections
            if isinstance(conn, BoundedH11Protocol) and conn is not self and not conn._busy
        ]
        if not idle:
            return False
        min(idle, key=lambda conn: conn._waiting_since)._close(
            "closed the longest-idle connection to make room for a new one (%d open)", self.cap
        )
        return True

    def _close(self, why: str, *figures: float) -> None:
        logger.info(why, *figures)
        self._disarm()
        if not self.transport.is_closing():
            if self.conn.our_state is not h11.ERROR:
                with contextlib.suppress(h11.LocalProtocolError):
                    self.conn.send(h11.ConnectionClosed())
            self.transport.close()
        # connection_lost follows from the event loop; drop it from the count now so the
        # newcomer that asked for room is not refused while the close is pending.
        self.connections.discard(self)

    def _arm(self, seconds: float, then: Any) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, then)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def bounded_protocol(open_files: int, limits: Limits) -> type[BoundedH11Protocol]:
    """The protocol class to serve with, its cap fitted to ``open_files``."""
    return type(
        "BoundedH11Protocol", (BoundedH11Protocol,), {"cap": connection_cap(open_files), "limits": limits}
    )


class GracefulServer(uvicorn.Server):
    """uvicorn, stopped by ``StopSignals``, with requests still running after the grace (or at a
    second signal) answered rather than cancelled: uvicorn's cancel answers a plain-text 500 to
    a call whose change Cooked may have applied, and its "force exit" at a second signal skips
    the application's shutdown, leaving tracebacks."""

    def __init__(
        self,
        config: uvicorn.Config,
        sessions: JsonWhenSilentSessionManager,
        stop: StopSignals,
        changes: Callable[[], Awaitable[None]],
        grace: float,
    ) -> None:
        super().__init__(config)
        self._grace = grace  # in-flight requests' (and open event streams') after a signal
        self._sessions = sessions
        self._stop = stop
        self._changes = changes

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        # sse_starlette (the SDK's event streams) otherwise ends every stream the moment a
        # signal arrives, a progress stream's answer included; here they end as below
        # (its documented switch; the attribute is what its untyped disable_…() sets).
        AppStatus.enable_automatic_graceful_drain = False
        async with anyio.create_task_group() as watching:
            watching.start_soon(self._exit_when_asked)
            await super().serve(sockets=sockets)
            watching.cancel_scope.cancel()

    async def _exit_when_asked(self) -> None:
        await self._stop.requested.wait()
        self.should_exit = True  # uvicorn's public way to stop serving

    # Reach (uvicorn 0.54, private ``_wait_tasks_to_complete``): uvicorn's only shutdown grace
    # is ``timeout_graceful_shutdown``, after which it cancels the requests (a plain-text 500);
    # there is no hook to answer them first. tests/http/test_http_shutdown.py fails if an
    # upgrade stops calling it.
    async def _wait_tasks_to_complete(self) -> None:
        self._sessions.close_listening_streams()  # they carry nothing cooked-mcp needs to finish
        with anyio.move_on_after(self._grace):
            async with anyio.create_task_group() as grace:
                grace.start_soon(cancel_when_set, self._stop.now, grace.cancel_scope)
                await super()._wait_tasks_to_complete()
                await self._changes()  # those still running in the background: the same grace
                grace.cancel_scope.cancel()
                return
        interrupted = await self._sessions.interrupt_in_flight()
        if interrupted:
            logger.warning(
                "shutting down: %d call(s) still running were answered as interrupted", interrupted
            )
        AppStatus.should_exit = True  # whatever stream is still open ends now
        await super()._wait_tasks_to_complete()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield
