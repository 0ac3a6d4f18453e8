"""A client whose HTTP connection drops before its answer (a read timeout, such as LangChain's
``sse_read_timeout``) sends no notifications/cancelled: the real ``cooked-mcp --transport http``
process treats the drop as the cancellation, so the answer it never got is not counted as received
and the identical retry gets the kept outcome instead of making the change again (handlers/writes.py).

Raw HTTP, so that the client can time out without cancelling; one server for the module, the fake
reset before each case. Each waits on the fake's request log, never on a guessed sleep.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from servers import HttpServer, bearer, open_session
from writes_support import LIST_CHANGES, NEWEST, RECIPE_CHANGES, Change

from cooked_fake import FakeCooked

URL = Change("url", "save_recipe", {"source": "url", "url": ""}, "POST", "/api/new", NEWEST)
CHANGES = {**RECIPE_CHANGES, "url": URL, **LIST_CHANGES}
PROVES = {
    "raw_text": "recipes.SAVE.1",
    "prepared": "recipes.SAVE.2",
    "draft": "recipes.SAVE.7",
    "existing": "recipes.SAVE.8",
    "delete": "recipes.DELETE.1",
    "url": "recipes.SAVE.3",
    "add": "shopping-list.ADD.1",
    "remove": "shopping-list.REMOVE.1",
    "clear": "shopping-list.CLEAR.1",
}
#: How long Cooked takes, and when the client gives up on the call (well before).
COOKED_SECONDS = 1.5
CLIENT_SECONDS = 0.5


def session(server: HttpServer) -> dict[str, str]:
    return open_session(server.url, bearer())


def answer_text(response: httpx.Response) -> str:
    """The tool result's text, from the event stream's answer (or a JSON body)."""
    body = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        body = next(
            line.removeprefix("data:")
            for line in body.splitlines()
            if line.startswith("data:") and '"id"' in line
        )
    result: dict[str, Any] = json.loads(body)["result"]
    return "\n".join(part["text"] for part in result["content"])


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "with-progress"])
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(change, id=label, marks=pytest.mark.req(PROVES[label], "tools.RESPONSES.6"))
        for label, change in CHANGES.items()
    ],
)
def test_a_client_that_times_out_without_cancelling_gets_the_kept_outcome_on_its_retry(
    fake: FakeCooked, server: HttpServer, change: Change, streamed: bool
) -> None:
    """with-progress: the call carries a progress token, so progress notifications share its stream."""
    arguments = change.arguments
    if change is URL:  # a page is imported once in any case; each case its own page
        arguments = {**arguments, "url": f"https://example.org/recipes/timed-out-stew-{streamed}"}
    params: dict[str, Any] = {"name": change.tool, "arguments": arguments}
    if streamed:
        params["_meta"] = {"progressToken": "p"}
    headers = session(server)
    fake.fail_with("slow", change.method, change.path, seconds=COOKED_SECONDS)

    with httpx.Client(headers=headers) as http, pytest.raises(httpx.ReadTimeout):
        http.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params},
            timeout=CLIENT_SECONDS,
        )
    deadline = time.monotonic() + 20
    while change.carried_out(fake) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    with httpx.Client(headers=headers, timeout=20) as http:
        retry = http.post(
            server.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
        )

    text = answer_text(retry).lower()
    assert change.sent(fake) == 1, text
    assert "nothing was sent to cooked again" in text or "not imported again" in text, text
