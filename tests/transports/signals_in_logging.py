"""Signals landing at the worst moments for logging, run in a process of its own (issue 30 item 2).

``python signals_in_logging.py ROUNDS`` configures cooked-mcp's logging as the server does
(stderr through the redaction filter) and watches SIGINT/SIGTERM as both transports do
(``StopSignals``). Each round delivers SIGTERM twice:

* while the redaction filter adds a secret on the thread that is about to log (its length
  is asked for: the signal lands there, and a record is logged);
* while a log record is being written: stderr is a pipe kept full, so the write blocks,
  and the signal is sent to the main thread while it is inside that write.

Each time, the stop must be seen by the event loop within ``STOP_SECONDS``. It prints one
JSON line: the rounds done, how many signals landed inside a write (the thread was seen
blocked in it), the slowest stop and what was written to stderr. Before issue
30 the first case hung for ever (a handler that logged waited on the filter's lock, gone since) and the
second printed "--- Logging error --- RuntimeError: reentrant call".
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import signal
import sys
import threading
import time

import anyio

from cooked_mcp.logging_setup import configure_logging
from cooked_mcp.transports.protocol_guard import StopSignals

STOP_SECONDS = 2.0
SECRET = "canary-secret-W3k"
#: The number of ``write`` on this machine's Linux, to see a thread blocked in it.
_WRITE_SYSCALL = {"x86_64": 1, "aarch64": 64}.get(platform.machine())


class SignalInLen(str):
    """A would-be secret whose length, asked for while the filter adds it, sends SIGTERM and
    logs; it says it is too short to keep, so it is asked for only once."""

    __slots__ = ()

    def __len__(self) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # Python runs pending signal handlers between bytecodes: here
            pass
        logging.getLogger("harness").warning("logged while a secret is added: %s", SECRET)
        return 0


def _blocked_in_write(thread_id: int) -> bool:
    with open(f"/proc/self/task/{thread_id}/syscall") as status:
        return status.read().split()[0] == str(_WRITE_SYSCALL)


def _drain(fd: int, into: bytearray, done: threading.Event) -> None:
    os.set_blocking(fd, False)
    while not done.is_set():
        with contextlib.suppress(BlockingIOError):
            into += os.read(fd, 1 << 16)
        time.sleep(0.001)
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 1 << 16):
            into += chunk


def _fill(fd: int) -> None:
    os.set_blocking(fd, False)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(fd, b"." * 4096)
    os.set_blocking(fd, True)


async def _one_stop(
    deliver: str, stderr_write: int, stderr_read: int, written: bytearray, inside: list[bool]
) -> float:
    stop = StopSignals()
    async with anyio.create_task_group() as watching:
        await watching.start(stop.watch)
        started = time.monotonic()
        if deliver == "lock held":
            redaction = logging.getLogger().handlers[0].filters[0]
            redaction.add(SignalInLen("another-secret"))  # type: ignore[attr-defined]
        else:
            main, done = threading.get_native_id(), threading.Event()
            _fill(stderr_write)

            def signal_inside_the_write() -> None:
                deadline = time.monotonic() + STOP_SECONDS
                while _WRITE_SYSCALL is not None and not _blocked_in_write(main):
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.001)
                inside.append(_WRITE_SYSCALL is not None and _blocked_in_write(main))
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
                _drain(stderr_read, written, done)

            helper = threading.Thread(target=signal_inside_the_write, daemon=True)
            helper.start()
            logging.getLogger("harness").warning("a record being written %s", "x" * 8192)
            done.set()
            helper.join()
        with anyio.fail_after(STOP_SECONDS):
            await stop.requested.wait()
        watching.cancel_scope.cancel()
    return time.monotonic() - started


def main(rounds: int) -> None:
    stderr_read, stderr_write = os.pipe()
    sys.stderr = open(stderr_write, "w", closefd=False)  # noqa: SIM115 - lives as long as the process
    configure_logging("info", secrets=[SECRET])
    written = bytearray()
    inside: list[bool] = []
    slowest = 0.0
    for _ in range(rounds):
        for deliver in ("lock held", "write"):
            slowest = max(slowest, anyio.run(_one_stop, deliver, stderr_write, stderr_read, written, inside))
    sys.stderr.flush()
    os.set_blocking(stderr_read, False)
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(stderr_read, 1 << 16):
            written += chunk
    text = written.replace(b".", b"").decode(errors="replace")
    print(json.dumps({"rounds": rounds, "inside_a_write": sum(inside), "slowest": slowest, "stderr": text}))


if __name__ == "__main__":
    main(int(sys.argv[1]))
