"""HTTP plumbing only: turns sockets into Incoming values and Reply values back into bytes."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .exchange import Incoming, Reply, error_reply

App = Callable[[Incoming], Reply]


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], app: App) -> None:
        super().__init__(address, Handler)
        self.app = app
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._open_lock:
            (self._open.add if alive else self._open.discard)(conn)

    def drop_connections(self) -> None:
        """Keep-alive connections outlive serve_forever(); cut them so a stopped fake really stops."""
        with self._open_lock:
            conns, self._open = list(self._open), set()
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real service; the benchmark depends on it
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms delayed-ACK stalls
    server: Server
    timeout = 60

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        self.server.track(self.connection, False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests and the demo print what they need from the request record instead."""

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():
                pass  # trailers
            return b"".join(parts)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _serve(self) -> None:
        path, _, query = self.path.partition("?")
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        incoming = Incoming(self.command, path, query, headers, self._read_body())
        try:
            reply = self.server.app(incoming)
        except Exception as exc:  # a bug in the fake must still answer, and say so
            reply = error_reply(500, "INTERNAL_ERROR", f"fake Cooked crashed: {exc!r}")
        self._write(reply)

    def _write(self, reply: Reply) -> None:
        if reply.hang_up:
            self.close_connection = True
            return
        try:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            if isinstance(reply.body, bytes):
                length = len(reply.body) if reply.content_length is None else reply.content_length
                chunks: Any = [reply.body]
            else:
                length, chunks = reply.content_length or 0, reply.body
            self.send_header("Content-Length", str(length))
            if reply.close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)
            self.wfile.flush()
        except OSError:  # the client hung up, e.g. after reading a bounded prefix of a huge body
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve
