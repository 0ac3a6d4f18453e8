"""``cooked-fake``: run the fake Cooked server by hand, for the demo, the benchmark or poking with curl."""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys
import threading

from .control import ENDPOINTS
from .fake import FakeCooked
from .seed import SEED_LOGIN, SEED_PASSWORD
from .variants import add_variant_option


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cooked-fake", description="Serve a fake Cooked API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    parser.add_argument(
        "--delay-ms", type=float, default=0.0, help="milliseconds to wait before every answer"
    )
    add_variant_option(parser)
    args = parser.parse_args(argv)
    fake = FakeCooked(delay=args.delay_ms / 1000, port=args.port, variants=args.variant)
    try:
        fake.start()
    except OSError as exc:
        # A busy port is the usual mistake (a fake from an earlier run still going): one line, not a traceback.
        problem = (
            "is already in use" if exc.errno == errno.EADDRINUSE else f"cannot be opened ({exc.strerror})"
        )
        print(
            f"cooked-fake: port {args.port} on 127.0.0.1 {problem}: stop what holds it, "
            "or pick another with --port (0 picks a free one)",
            file=sys.stderr,
        )
        return 1
    # Ctrl-C stops it cleanly also while the banner is printed (a script reads the first lines
    # and may interrupt at once).
    with fake, contextlib.suppress(KeyboardInterrupt):
        print(f"fake Cooked at {fake.base_url}", flush=True)
        print(f"login: {SEED_LOGIN} / {SEED_PASSWORD}", flush=True)
        names = ", ".join(name for _, name in ENDPOINTS if name)
        print(f"control: GET {fake.base_url}/_fake/ lists the endpoints ({names})", flush=True)
        print("Ctrl-C to stop", flush=True)
        threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
