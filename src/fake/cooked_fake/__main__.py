"""``cooked-fake``: run the fake Cooked server by hand, for the demo, the benchmark or poking with curl."""

from __future__ import annotations

import argparse
import contextlib
import threading

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
    with FakeCooked(delay=args.delay_ms / 1000, port=args.port, variants=args.variant) as fake:
        print(f"fake Cooked at {fake.base_url}", flush=True)
        print(f"login: {SEED_LOGIN} / {SEED_PASSWORD}", flush=True)
        print(f"control: {fake.base_url}/_fake/ (requests, reset, expire-sessions, delay, fail)", flush=True)
        print("Ctrl-C to stop", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
