"""Run the shell commands behind ``*_cmd`` settings: the output, a secret, is only returned; stderr
is discarded unread, failures name only the setting; runtime and size are bounded."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time

from cooked_mcp.exceptions import CredentialCommandError
from cooked_mcp.text import ASCII_WHITESPACE

_SHELL_ADVICE = "run the command in a shell to see what is wrong, then fix it"
_CHUNK = 8192
#: How often the reader looks whether the shell has exited while a descendant keeps stdout open.
_EXIT_POLL_SECONDS = 0.05

#: POSIX shells exit 127 when the command is not found: under a desktop client's short PATH
#: (Claude Desktop starts servers with a minimal one) that is the usual failure.
_NOT_FOUND_ADVICE = (
    "write the command with its absolute path (as `command -v NAME` prints it in your shell): "
    "cooked-mcp may run with a shorter PATH than your terminal"
)


# implements: authentication.CREDENTIALS.7, authentication.CREDENTIALS.7-1, authentication.CREDENTIALS.7-2, authentication.CREDENTIALS.15, authentication.CREDENTIALS.16, authentication.CREDENTIALS.18, authentication.CREDENTIALS.19, authentication.CREDENTIALS.20, authentication.SECRETS.2
def run_secret_command(
    setting: str, command: str, *, where: str | None = None, timeout: float = 5.0, max_bytes: int = 65536
) -> str:
    """The trimmed stdout of ``/bin/sh -c command``, in its own session so a timeout kills all it started.
    More than ``max_bytes`` is an error (a cut secret fails later, confusingly); the value is what was
    printed when the shell exits (a left-behind background process may hold stdout open)."""

    def fail(problem: str, advice: str = _SHELL_ADVICE) -> CredentialCommandError:
        return CredentialCommandError(f"{where + ': ' if where else ''}{setting} command {problem}; {advice}")

    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise fail(f"could not be started ({exc.strerror or 'OS error'})") from None

    timed_out = fail(f"timed out after {timeout:g} s")
    size = f"{max_bytes // 1024} KiB" if max_bytes % 1024 == 0 else f"{max_bytes} bytes"
    deadline = time.monotonic() + timeout
    output, exited = bytearray(), False
    assert process.stdout is not None
    fd = process.stdout.fileno()
    try:
        # implements: authentication.CREDENTIALS.17
        while True:  # until EOF or the shell's exit, the deadline, or one byte past max_bytes
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise timed_out
            ready, _, _ = select.select([fd], [], [], min(remaining, _EXIT_POLL_SECONDS))
            if not ready:
                if exited:
                    # The shell is gone and nothing more is buffered: whoever still holds stdout is a
                    # background descendant, whose later output is not the value.
                    break
                # One more look after the exit is seen, so output written just before it is not lost.
                exited = process.poll() is not None
                continue
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - len(output)))
            if not chunk:
                break
            output += chunk
            if len(output) > max_bytes:
                raise fail(f"produced more than {size} of output")
        try:
            returncode = process.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            raise timed_out from None
    except BaseException:
        # Kill the command's whole process group: the shell's children may outlive the shell.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=1.0)
        raise
    finally:
        process.stdout.close()

    if returncode < 0:
        raise fail(f"was killed by signal {-returncode}")
    if returncode == 127:
        raise fail("was not found (exit status 127)", _NOT_FOUND_ADVICE)
    if returncode == 126:
        raise fail(
            "was found but could not be run (exit status 126)", "check that the file is executable (chmod +x)"
        )
    if returncode != 0:
        raise fail(f"failed with exit status {returncode}")
    try:
        text = output.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("printed output that is not valid UTF-8") from None
    value = text.strip(ASCII_WHITESPACE)
    if not value:
        raise fail("produced no output")
    return value
