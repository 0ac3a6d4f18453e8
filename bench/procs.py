"""Child processes: a clean environment, spawning and stopping them, and reading /proc about them.

Everything listens on and talks to 127.0.0.1 only. Every process started here is stopped in
a ``finally`` (terminate, bounded wait, kill) and also asked to die with the benchmark
(PR_SET_PDEATHSIG), so an interrupted run leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from tests.servers import COOKED_MCP, server_env

__all__ = [
    "COOKED_MCP",
    "PYTHON",
    "Child",
    "child_pids",
    "cpu_seconds",
    "die_with_parent",
    "free_port",
    "rss_kib",
    "server_env",
    "spawn",
    "wait_for_port",
]

PYTHON = sys.executable
HOST = "127.0.0.1"

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Child:
    """A process started by the benchmark; its stderr goes to ``log``."""

    def __init__(self, name: str, argv: Sequence[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self._log_file: IO[bytes] = log.open("ab")
        self.process = subprocess.Popen(
            list(argv),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log_file,
            preexec_fn=die_with_parent,  # only a prctl between fork and exec
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self, lines: int = 20) -> str:
        self._log_file.flush()
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._log_file.close()


@contextlib.contextmanager
def spawn(name: str, argv: Sequence[str], env: dict[str, str], log: Path) -> Iterator[Child]:
    child = Child(name, argv, env, log)
    try:
        yield child
    finally:
        child.stop()


def free_port() -> int:
    """A port nobody listens on right now (the OS picks it; a race is possible but harmless here)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def wait_for_port(child: Child, port: int, timeout: float = 30.0) -> None:
    """Block until ``child`` accepts TCP connections on 127.0.0.1:``port``, or raise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not child.alive():
            raise RuntimeError(f"{child.name} exited with {child.process.returncode}:\n{child.stderr_tail()}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.02)
    raise TimeoutError(f"{child.name} did not listen on {HOST}:{port} within {timeout:.0f} s")


# --- /proc ---------------------------------------------------------------------------------------


def child_pids(parent: int | None = None) -> set[int]:
    """PIDs whose parent is ``parent`` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and int(fields[1]) == parent:
            found.add(int(entry.name))
    return found


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def rss_kib(pid: int) -> int:
    """Resident set size (VmRSS) of ``pid`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    # After the comm field: state is fields[0], utime is field 14 of the full line, i.e. fields[11].
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")
