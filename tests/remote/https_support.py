"""A test CA and an https server on 127.0.0.1 serving client metadata documents.

The documents live at ``https://client.test:PORT/...``; the fetcher under test is told, by the
test alone, that ``client.test`` is 127.0.0.1 and that this CA is trusted.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HOST = "client.test"


@dataclass
class Answer:
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Documents:
    """What the server answers, by path; ``hits`` counts the requests per path."""

    answers: dict[str, Answer] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)
    port: int = 0

    def url(self, path: str) -> str:
        return f"https://{HOST}:{self.port}{path}"

    def document(self, path: str, **fields: object) -> str:
        """Serve a client metadata document at ``path`` naming its own URL; return the URL."""
        url = self.url(path)
        body = {
            "client_id": url,
            "client_name": "Test client",
            "redirect_uris": ["http://127.0.0.1:9/callback"],
        }
        self.answers[path] = Answer(json.dumps({**body, **fields}).encode())
        return url


def make_ca(folder: Path) -> tuple[ssl.SSLContext, Path, Path]:
    """A CA trusted by the returned client context, and a certificate for HOST and 127.0.0.1 it signed."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cooked-mcp test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(HOST), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    cert_path, key_path, ca_path = folder / "cert.pem", folder / "key.pem", folder / "ca.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return ssl.create_default_context(cafile=str(ca_path)), cert_path, key_path


@contextlib.contextmanager
def https_documents(folder: Path) -> Iterator[tuple[Documents, ssl.SSLContext]]:
    """Serve ``Documents`` over https on 127.0.0.1 until the block ends."""
    trust, cert, key = make_ca(folder)
    documents = Documents()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            documents.hits[self.path] = documents.hits.get(self.path, 0) + 1
            answer = documents.answers.get(self.path, Answer(b"not found", 404))
            time.sleep(answer.delay)
            try:
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
            except OSError:
                pass  # the fetcher hung up (too big, too slow): what the test wanted

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    documents.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield documents, trust
    finally:
        server.shutdown()
        server.server_close()
