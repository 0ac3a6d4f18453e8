"""Over HTTP, a tool call's answer holds its room in the answer budget until it has been written.

``cooked_mcp_runtime.results.ANSWERS`` bounds the bytes of Cooked's answers that tool calls hold.
Handing an answer to the SDK does not free its memory yet: it becomes JSON on its way to the
client, and a client that reads slowly keeps it in this process. So each HTTP request gets a
``HandedOver`` in its ASGI scope where the dispatcher leaves the calls it answered that hold
``Limits.SMALL_ANSWER_BYTES`` or more (a smaller answer is freed at once); they are
freed when the request's response has been written, or the client went away (a call ending
after that is freed at once). Pure ASGI: it works whatever serves the endpoint underneath.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cooked_mcp_runtime.results import ANSWERS, HANDED_OVER, HandedOver


# implements: extensions.MEMORY.1
class AnswersInFlight:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handed = HandedOver()
        if scope["type"] == "http":
            scope[HANDED_OVER] = handed

        async def written(message: Message) -> None:
            if not handed.calls or message["type"] != "http.response.body" or message.get("more_body"):
                await send(message)
                return
            # The server waits for a slow client before each part it sends, not after the last:
            # an empty last part returns only once the socket has taken the answer.
            await send({**message, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        try:
            await self.app(scope, receive, written)
        finally:
            handed.written = True
            for call in handed.calls:
                ANSWERS.release(call)
