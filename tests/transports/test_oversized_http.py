"""An endless MCP request body over HTTP is refused without being read whole.

test_http_serving.py already shows that a body declared too large, or a 5 MiB chunked one, gets 413
and that an unauthenticated one gets 401. What is added here is the resource side: the
client streams a chunked body that would go on for 256 MiB, and the server must answer (or
drop the connection) long before that, having read only a bounded prefix: the bytes the
client managed to send stay far below the total, and the server's peak memory (VmHWM) grows
by far less than the body.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hardening_support import FIGURES
from servers import HTTP_TOKEN as TOKEN
from servers import HttpServer

CHUNK = 64 * 1024
ENDLESS = 256 * 1024 * 1024  # what the client would send if nothing stopped it
#: Socket buffers on both sides absorb some data before the refusal lands; 4 MiB is the SDK limit.
MAX_SENT = 32 * 1024 * 1024
MAX_PEAK_GROWTH_KIB = 48 * 1024


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc status")


class Endless:
    """A chunked JSON-RPC body that never ends by itself; counts what was actually handed to the socket."""

    def __init__(self) -> None:
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        head = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
        self.sent += len(head)
        yield head
        chunk = b"x" * CHUNK
        while self.sent < ENDLESS:
            self.sent += CHUNK
            yield chunk
        yield b'"}}'


@pytest.mark.req("server.TRANSPORT.5", "server.SECURITY.7")
@pytest.mark.parametrize(
    ("authorized", "status"), [(True, 413), (False, 401)], ids=["with-token", "without-token"]
)
def test_an_endless_request_body_is_refused_after_a_bounded_prefix(
    server: HttpServer, authorized: bool, status: int
) -> None:
    before = peak_rss_kib(server.process.pid)
    body = Endless()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorized:
        headers["Authorization"] = f"Bearer {TOKEN}"
    try:
        response = httpx.post(server.url, headers=headers, content=body, timeout=30)
    except httpx.TransportError:
        answered = None  # the server refused and closed the connection while the body was still coming
    else:
        answered = response.status_code
    growth = peak_rss_kib(server.process.pid) - before

    assert answered in (status, None)
    assert body.sent < MAX_SENT, f"the server took {body.sent} bytes of an endless body"
    assert growth < MAX_PEAK_GROWTH_KIB, f"server peak memory grew by {growth} KiB"
    assert server.process.poll() is None, "the server died"
    # Still serving: a normal request right after gets its normal answer.
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    after = httpx.post(
        server.url, headers={**headers, "Authorization": f"Bearer {TOKEN}"}, json=ping, timeout=10
    )
    assert after.status_code in (200, 400), after.text  # 400: a ping before initialize, still an answer
    FIGURES.add("oversized_http", "endless_bodies_refused")
    FIGURES.note(f"oversized_http_bytes_accepted_{'with' if authorized else 'without'}_token", body.sent)
