"""The rules the SDK's HTTP app lacks, as one plain ASGI layer in front of it: ``protocol_guard``'s
refusals; one answer per request (a stream that ends without it gets a JSON-RPC error saying why, a
request the client cancelled gets none, as the MCP spec says); a client whose connection drops before
its answer is cancelled for it, so a retry does not make the change again; room made for new sessions."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio
import mcp_types as types
import pydantic_core
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config.limits import Limits
from .protocol_guard import INTERRUPTED, StopSignals, make_answer, read_message, refusal

logger = logging.getLogger("cooked_mcp.transports.http")

_SESSION = "mcp-session-id"
SESSION_ENDED = "Session terminated before the request completed"
#: The start of an event carrying an answer, as the SDK writes one (pydantic keeps the field
#: order: a response or error puts ``result``/``error`` right after ``id``; a request, ``method``).
_ANSWER = re.compile(rb'data: ?\{"jsonrpc":"2\.0","id":(?:-?\d+|"(?:[^"\\]|\\.)*"),"(?:result|error)"')


@dataclass(eq=False)
class _Call:
    """One request being served; ``scope`` lets a stop cut off its stream."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    answered: bool = False
    cancelled: bool = False  # by the client
    started: bool = False
    event_stream: bool = False


@dataclass
class _Session:
    user: object  # who opened it (remote mode: the OAuth client), the only one the SDK lets end it
    last: float = field(default_factory=time.monotonic)
    busy: int = 0


class HttpGuard:
    def __init__(self, app: ASGIApp, max_sessions: int = Limits.MAX_SESSIONS) -> None:
        self.app, self.max_sessions = app, max_sessions
        self._running: dict[tuple[str, types.RequestId], _Call] = {}  # by session and id
        self._calls: set[_Call] = set()  # every request being served, sessions opening included
        self._streams: set[anyio.CancelScope] = set()  # GET event streams
        self._sessions: dict[str, _Session] = {}
        self._none_left: anyio.Event | None = None  # made by ``drain``: set once no call runs
        # Set at the end of ``drain``, which always starts first: only a stop makes uvicorn shut down.
        self.drained = anyio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        session = headers.get(_SESSION)
        tracked = self._sessions.get(session) if session else None
        if tracked is not None:
            tracked.busy += 1
        try:
            if scope["method"] == "POST":
                await self._post(scope, receive, send, headers, session)
            elif scope["method"] == "GET":
                await self._stream(scope, receive, send)
            else:
                await self.app(scope, receive, send)
                if scope["method"] == "DELETE" and session:
                    self._sessions.pop(session, None)
        finally:
            if tracked is not None:
                tracked.busy -= 1
                tracked.last = time.monotonic()

    async def _post(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, session: str | None
    ) -> None:
        # The body bound, applied here as the body is read once (the SDK's would read and copy it again).
        declared = headers.get("content-length", "")
        size, chunks = int(declared) if declared.isdigit() else 0, []
        read = 0
        while size <= Limits.MAX_MESSAGE_BYTES:
            part = await receive()
            if part["type"] != "http.request":  # nobody is left to answer, and the request was never whole
                logger.debug("a client went away before its request body was complete")
                return
            chunks.append(part.get("body", b""))
            read += len(chunks[-1])
            size = max(size, read)
            if not part.get("more_body", False):
                break
        if size > Limits.MAX_MESSAGE_BYTES:
            too_large = (
                f"Request body larger than {Limits.MAX_MESSAGE_BYTES} bytes; it was not read and nothing "
                f"was sent to Cooked: send a message of at most {Limits.MAX_MESSAGE_BYTES // 2**20} MiB"
            )
            await Response(too_large, 413)(scope, receive, send)
            return
        body = b"".join(chunks)
        # Without a session only a handshake-era request opens one (a 2026-07-28 one never does).
        version = headers.get("mcp-protocol-version", HANDSHAKE_PROTOCOL_VERSIONS[0])
        opens = session is None and version in HANDSHAKE_PROTOCOL_VERSIONS
        if opens and len(body) > Limits.MAX_INITIALIZE_BYTES:
            too_big = make_answer(None, f"initialize request larger than {Limits.MAX_INITIALIZE_BYTES} bytes")
            await _json(too_big, 413)(scope, receive, send)
            return
        message = read_message(body)
        refused = refusal(message, len(body), lambda request_id: (session or "", request_id) in self._running)
        if refused is not None:
            logger.info("refused a message: %s", refused.error.message)
            await _json(refused, 400)(scope, receive, send)
            return
        if isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            if isinstance(cancelled, int | str) and (call := self._running.get((session or "", cancelled))):
                call.cancelled = True
        if opens:
            await self._make_room(scope)
        unread: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
        gone = False

        async def replay() -> Message:
            nonlocal gone
            message = unread.pop() if unread else await receive()
            gone = gone or message["type"] == "http.disconnect"
            return message

        send = self._opening(scope, send) if session is None else send
        if not isinstance(message, types.JSONRPCRequest):
            await self.app(scope, replay, send)
            return
        call, key = _Call(), (session or "", message.id)
        if session is not None:
            self._running[key] = call
        self._calls.add(call)
        try:
            with call.scope:
                await self.app(scope, replay, self._watching(call, send))
        finally:
            self._calls.discard(call)
            if not self._calls and self._none_left is not None:
                self._none_left.set()
            if self._running.get(key) is call:
                del self._running[key]
        if call.answered or call.cancelled:
            return
        if gone:
            logger.info("a client went away before the answer to its request %r: it is cancelled", message.id)
            if session is not None:
                params = {"requestId": message.id, "reason": "the client's connection closed"}
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
                await self._send_inside(scope, "POST", session, pydantic_core.to_json(cancel))
            return
        why = INTERRUPTED if call.scope.cancel_called else SESSION_ENDED
        error = make_answer(message.id, why, types.INTERNAL_ERROR)
        if not call.started:
            await _json(error, 200)(scope, receive, send)
        elif call.event_stream:
            event = (
                f"event: message\r\ndata: {error.model_dump_json(by_alias=True, exclude_unset=True)}\r\n\r\n"
            )
            await send({"type": "http.response.body", "body": event.encode(), "more_body": False})

    def _watching(self, call: _Call, send: Send) -> Send:
        """``send``, noting whether the request's answer went out; the end of an event stream
        without it is held back, so that ``_post`` can still send one."""

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                call.started = True
                content_type = Headers(raw=message.get("headers", [])).get("content-type", "")
                call.event_stream = content_type.startswith("text/event-stream")
                call.answered = not call.event_stream  # a JSON or plain answer is the answer
            elif message["type"] == "http.response.body" and call.event_stream:
                chunk = message.get("body", b"")
                if _carries_answer(chunk):
                    if call.cancelled:
                        return  # the SDK's "Request cancelled": a cancelled request gets no answer
                    call.answered = True
                if not message.get("more_body", False) and not (call.answered or call.cancelled):
                    if not chunk:
                        return
                    message = {**message, "more_body": True}
            await send(message)

        return watched

    def _opening(self, scope: Scope, send: Send) -> Send:
        """For a request without a session: a refusal names no session, a session opened is kept."""

        async def opening(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(raw=list(message.get("headers", [])))
                if message["status"] >= 400 and _SESSION in headers:
                    del headers[_SESSION]
                    message = {**message, "headers": headers.raw}
                elif _SESSION in headers:
                    self._sessions[headers[_SESSION]] = _Session(scope.get("user"))
            await send(message)

        return opening

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A GET event stream, which a stop ends at once (it never ends by itself)."""
        started = ended = False

        async def watched(message: Message) -> None:
            nonlocal started, ended
            started = started or message["type"] == "http.response.start"
            ended = ended or (message["type"] == "http.response.body" and not message.get("more_body"))
            await send(message)

        with anyio.CancelScope() as stream:
            self._streams.add(stream)
            try:
                await self.app(scope, receive, watched)
            finally:
                self._streams.discard(stream)
        if started and not ended:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _make_room(self, scope: Scope) -> None:
        """End the longest-idle sessions until a new one fits (the SDK would refuse it), each as the
        client that opened it would; one already gone answers 404 and is forgotten too."""
        while len(self._sessions) >= self.max_sessions:
            idle = [(s.last, sid) for sid, s in self._sessions.items() if s.busy == 0]
            if not idle:
                return  # the SDK refuses the newcomer with 503
            _, victim = min(idle)
            owner = self._sessions.pop(victim).user
            await self._send_inside({**scope, "user": owner}, "DELETE", victim)
            logger.info("closed the longest-idle session to open a new one (%d open)", self.max_sessions)

    async def _send_inside(self, scope: Scope, method: str, session: str, body: bytes = b"") -> None:
        """A request made here, as the client would make it, on behalf of ``scope``'s client."""
        headers = MutableHeaders(raw=list(scope["headers"]))
        headers[_SESSION], headers["content-length"] = session, str(len(body))
        unread: list[Message] = [{"type": "http.request", "body": body}]

        async def receive() -> Message:
            return unread.pop() if unread else {"type": "http.disconnect"}

        async def discard(message: Message) -> None:
            pass

        with anyio.CancelScope(shield=True):
            await self.app({**scope, "method": method, "headers": headers.raw}, receive, discard)

    async def drain(self, stop: StopSignals, grace: float, changes: Callable[[], Awaitable[None]]) -> None:
        """At a stop: end every event stream now; give the calls and ``changes`` at Cooked the
        ``grace``, then answer each call still running as cut off."""
        self._none_left = none_left = anyio.Event()
        if not self._calls:
            none_left.set()
        for stream in list(self._streams):
            stream.cancel()
        await stop.within_grace(grace, none_left.wait, changes)
        if self._calls:
            logger.warning(
                "shutting down: %d call(s) still running were answered as interrupted", len(self._calls)
            )
        for call in list(self._calls):
            call.scope.cancel()
        self.drained.set()


def _json(message: types.JSONRPCError, status: int) -> Response:
    return Response(
        message.model_dump_json(by_alias=True, exclude_unset=True), status, media_type="application/json"
    )


def _carries_answer(chunk: bytes) -> bool:
    """Whether an event carries a response (not a notification, nor a question to the client): one
    anchored match settles the SDK's member order; any other order is parsed whole, slower, never wrong."""
    at = chunk.find(b"data:")
    if at < 0:
        return False
    if _ANSWER.match(chunk, at):
        return True
    if b'"result"' not in chunk and b'"error"' not in chunk:
        return False
    for line in chunk[at:].splitlines():
        if line.startswith(b"data:"):
            try:
                data = pydantic_core.from_json(line[5:])
            except ValueError:
                continue
            if isinstance(data, dict) and "method" not in data and ("result" in data or "error" in data):
                return True
    return False
