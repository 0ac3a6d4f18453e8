"""``cooked-fake``: run the fake Cooked server by hand, for the demo, the benchmark or poking with curl."""

from __future__ import annotations

import argparse
import contextlib
import threading

from .fake import FakeCooked
from .seed import SEED_LOGIN, SEED_PASSWORD
from .variants import VARIANTS


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
        if fake.variants:
            print(f"answering in the variants: {', '.join(sorted(fake.variants))}", flush=True)
        print(f"login: {SEED_LOGIN} / {SEED_PASSWORD}", flush=True)
        print(
            f"control: {fake.base_url}/_fake/ (requests, reset, expire-sessions, delay, fail, variants)",
            flush=True,
        )
        print("Ctrl-C to stop", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


def add_variant_option(parser: argparse.ArgumentParser) -> None:
    """``--variant NAME`` (repeatable), shared with the demo."""
    names = ["observed", *VARIANTS]
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        choices=names,
        metavar="NAME",
        help="answer as Cooked is seen to vary (repeatable): "
        + "; ".join(f"{n}: {d}" for n, d in VARIANTS.items())
        + "; observed: every variant but drifted",
    )


if __name__ == "__main__":
    raise SystemExit(main())
