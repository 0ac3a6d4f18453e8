"""Run the shell commands behind ``*_cmd`` settings (user.name_cmd, user.password_cmd, mcp.http_token_cmd).

A command is how a user keeps a secret out of the config file (``pass show cooked``), so
everything here is built so that the secret it prints cannot escape: the output is returned
and nowhere else, stderr is thrown away unread, and every failure message says only which
setting failed and how. A command is also someone else's program, so its runtime and the
amount of output we are willing to hold are bounded.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time

from cooked_mcp.config import ConfigError

__all__ = ["ASCII_WHITESPACE", "CredentialCommandError", "run_secret_command"]

#: What the spec calls ASCII whitespace; str.strip() without arguments would also eat Unicode spaces.
ASCII_WHITESPACE = " \t\r\n\v\f"

_SHELL = "/bin/sh"
_CHUNK = 8192


class CredentialCommandError(ConfigError):
    """A ``*_cmd`` command could not produce a value; the message never holds its output."""

    def __init__(self, setting: str, problem: str) -> None:
        self.setting = setting
        self.problem = problem
        super().__init__(
            f"{setting} command {problem}; run the command in a shell to see what is wrong, then fix it"
        )


# implements: authentication.CREDENTIALS.7, authentication.CREDENTIALS.7-1, authentication.CREDENTIALS.7-2, authentication.CREDENTIALS.15, authentication.CREDENTIALS.16, authentication.CREDENTIALS.18, authentication.CREDENTIALS.19, authentication.CREDENTIALS.20, authentication.SECRETS.2
def run_secret_command(setting: str, command: str, *, timeout: float = 5.0, max_bytes: int = 65536) -> str:
    """Return the trimmed stdout of ``command`` run by ``/bin/sh -c``.

    ``setting`` (e.g. ``"user.password_cmd"``) is only used to say which command failed.
    The command runs in its own session so that a timeout can kill everything it started,
    not just the shell. stdout is read incrementally and never past ``max_bytes + 1``
    bytes: more than ``max_bytes`` is an error, not a truncation, because a cut secret
    would fail later in a far more confusing way.
    """
    try:
        process = subprocess.Popen(
            [_SHELL, "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise CredentialCommandError(
            setting, f"could not be started ({exc.strerror or 'OS error'})"
        ) from None

    deadline = time.monotonic() + timeout
    try:
        output = _read_bounded(process, setting, deadline, timeout, max_bytes)
        remaining = deadline - time.monotonic()
        try:
            returncode = process.wait(timeout=max(remaining, 0.0))
        except subprocess.TimeoutExpired:
            raise _timed_out(setting, timeout) from None
    except BaseException:
        _kill_group(process)
        raise
    finally:
        assert process.stdout is not None
        process.stdout.close()

    if returncode < 0:
        raise CredentialCommandError(setting, f"was killed by signal {-returncode}")
    if returncode != 0:
        raise CredentialCommandError(setting, f"failed with exit status {returncode}")
    try:
        text = output.decode("utf-8")
    except UnicodeDecodeError:
        raise CredentialCommandError(setting, "printed output that is not valid UTF-8") from None
    value = text.strip(ASCII_WHITESPACE)
    if not value:
        raise CredentialCommandError(setting, "produced no output")
    return value


# implements: authentication.CREDENTIALS.17
def _read_bounded(
    process: subprocess.Popen[bytes], setting: str, deadline: float, timeout: float, max_bytes: int
) -> bytes:
    """Read stdout until EOF, the deadline, or one byte past ``max_bytes``, whichever is first."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    chunks: list[bytes] = []
    total = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _timed_out(setting, timeout)
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            raise _timed_out(setting, timeout)
        chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise CredentialCommandError(setting, f"produced more than {_format_size(max_bytes)} of output")


def _timed_out(setting: str, timeout: float) -> CredentialCommandError:
    return CredentialCommandError(setting, f"timed out after {timeout:g} s")


def _format_size(size: int) -> str:
    if size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size} bytes"


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group: the shell's children may outlive the shell."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=1.0)
