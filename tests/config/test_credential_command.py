"""run_secret_command: the one resolver behind user.name_cmd, user.password_cmd and mcp.http_token_cmd."""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import signal
import time
from pathlib import Path

import pytest
from config_support import PASSWORD

from cooked_mcp.credential_command import run_secret_command
from cooked_mcp.exceptions import ConfigError, CredentialCommandError

SETTING = "user.password_cmd"
STDERR_CANARY = "STDERR-CANARY-88aa"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it has exited all the same.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.req("authentication.CREDENTIALS.7", "authentication.CREDENTIALS.15")
def test_the_command_runs_in_a_shell_and_its_stdout_is_the_value() -> None:
    assert run_secret_command(SETTING, "printf 'CANARY-PW-' && echo 7f3a | tr -d '\\n'") == PASSWORD


@pytest.mark.req(
    "authentication.CREDENTIALS.7-1",
    "authentication.CREDENTIALS.18",
)
@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo secret", "secret"),
        ("printf 'secret\\r\\n\\n'", "secret"),
        ("printf ' \\t\\v\\f secret with  inner space \\n'", "secret with  inner space"),
        ("printf '\\302\\240secret\\302\\240\\n'", "\u00a0secret\u00a0"),  # NBSP is not ASCII whitespace
    ],
)
def test_only_leading_and_trailing_ascii_whitespace_is_trimmed(command: str, expected: str) -> None:
    assert run_secret_command(SETTING, command) == expected


@pytest.mark.req("authentication.CREDENTIALS.7-2")
@pytest.mark.parametrize("command", ["true", "printf ''", "printf ' \\n\\t\\n'", "cat"])
def test_empty_output_is_rejected(command: str) -> None:
    """``cat`` proves stdin is /dev/null: it ends at once instead of waiting for input."""
    with pytest.raises(CredentialCommandError) as caught:
        run_secret_command(SETTING, command)

    assert str(caught.value).startswith("user.password_cmd command produced no output")


@pytest.mark.req("authentication.CREDENTIALS.20", "authentication.CREDENTIALS.19")
def test_a_failing_command_reports_its_exit_status_and_nothing_it_printed() -> None:
    command = f"echo {PASSWORD}; echo {STDERR_CANARY} >&2; exit 3"
    with pytest.raises(CredentialCommandError) as caught:
        run_secret_command(SETTING, command)

    message = str(caught.value)
    assert message.startswith("user.password_cmd command failed with exit status 3")
    assert PASSWORD not in message and STDERR_CANARY not in message
    assert PASSWORD not in repr(caught.value) and STDERR_CANARY not in repr(caught.value)
    assert isinstance(caught.value, ConfigError)
    assert "\n" not in message


@pytest.mark.req("authentication.CREDENTIALS.19", "authentication.SECRETS.1")
def test_stderr_is_never_logged_or_shown(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    value = run_secret_command(SETTING, f"echo {STDERR_CANARY} >&2; echo {PASSWORD}")

    assert value == PASSWORD
    out, err = capfd.readouterr()
    assert STDERR_CANARY not in out + err  # not even inherited by our own stderr
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert STDERR_CANARY not in logged and PASSWORD not in logged


@pytest.mark.req("authentication.CREDENTIALS.20")
def test_a_command_killed_by_a_signal_is_reported_as_such() -> None:
    with pytest.raises(CredentialCommandError, match="was killed by signal 9"):
        run_secret_command(SETTING, "kill -9 $$")


@pytest.mark.req("authentication.CREDENTIALS.16", "authentication.SECRETS.2")
def test_the_default_time_limit_is_5_seconds() -> None:
    assert inspect.signature(run_secret_command).parameters["timeout"].default == 5.0


@pytest.mark.req("authentication.CREDENTIALS.16", "authentication.SECRETS.2")
def test_a_command_that_runs_too_long_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"sleep 30 & echo $! > {pidfile}; echo partial-output; wait"
    started = time.monotonic()
    with pytest.raises(CredentialCommandError) as caught:
        run_secret_command(SETTING, command, timeout=0.5)
    elapsed = time.monotonic() - started

    assert str(caught.value).startswith("user.password_cmd command timed out after 0.5 s")
    assert "partial-output" not in str(caught.value)
    assert elapsed < 3
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 2
    while _process_alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _process_alive(child)


@pytest.mark.req("authentication.CREDENTIALS.16", "authentication.SECRETS.2")
def test_a_command_that_closes_stdout_but_keeps_running_still_times_out() -> None:
    with pytest.raises(CredentialCommandError, match=r"timed out after 0\.3 s"):
        run_secret_command(SETTING, "echo value; exec >&-; sleep 30", timeout=0.3)


@pytest.mark.req("authentication.CREDENTIALS.7", "authentication.CREDENTIALS.16")
def test_the_value_is_read_when_the_shell_exits_not_when_a_background_child_closes_stdout(
    tmp_path: Path,
) -> None:
    """``(agent &); echo pw`` leaves a child holding stdout: waiting for EOF would time out."""
    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    try:
        value = run_secret_command(SETTING, f"(sleep 30 & echo $! > {pidfile}) ; echo {PASSWORD}")
        elapsed = time.monotonic() - started
    finally:
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert value == PASSWORD
    assert elapsed < 4  # well inside the 5 s limit the command would otherwise run into


@pytest.mark.req("authentication.CREDENTIALS.20")
def test_a_command_not_found_says_so_and_asks_for_an_absolute_path() -> None:
    with pytest.raises(CredentialCommandError) as caught:
        run_secret_command(SETTING, "no-such-password-manager-5e1 show cooked")

    message = str(caught.value)
    assert message.startswith("user.password_cmd command was not found (exit status 127)")
    assert "absolute path" in message and "PATH" in message
    assert "run the command in a shell" not in message


@pytest.mark.req("authentication.CREDENTIALS.20")
def test_a_command_that_cannot_be_run_says_so(tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho pw\n")
    script.chmod(0o600)
    with pytest.raises(CredentialCommandError) as caught:
        run_secret_command(SETTING, str(script))
    assert "could not be run (exit status 126)" in str(caught.value) and "chmod +x" in str(caught.value)


@pytest.mark.req("authentication.CREDENTIALS.17")
def test_output_of_exactly_64_kib_is_accepted() -> None:
    value = run_secret_command(SETTING, "head -c 65536 /dev/zero | tr '\\0' 'a'")
    assert value == "a" * 65536


@pytest.mark.req("authentication.CREDENTIALS.17")
def test_output_over_64_kib_is_an_error_not_a_truncation() -> None:
    with pytest.raises(CredentialCommandError) as caught:
        run_secret_command(SETTING, "head -c 65537 /dev/zero | tr '\\0' 'a'")

    assert str(caught.value).startswith("user.password_cmd command produced more than 64 KiB of output")
    assert "aaaa" not in str(caught.value)


@pytest.mark.req("authentication.CREDENTIALS.17", "authentication.SECRETS.2")
def test_endless_output_stops_at_the_cap_without_waiting_for_the_command() -> None:
    started = time.monotonic()
    with pytest.raises(CredentialCommandError, match="more than 64 KiB"):
        run_secret_command(SETTING, "yes CANARY-PW-7f3a", timeout=10)

    assert time.monotonic() - started < 3


@pytest.mark.req("authentication.CREDENTIALS.17")
def test_the_cap_is_configurable_and_named_in_the_error() -> None:
    assert run_secret_command(SETTING, "printf abcd", max_bytes=4) == "abcd"
    with pytest.raises(CredentialCommandError, match="more than 4 bytes"):
        run_secret_command(SETTING, "printf abcde", max_bytes=4)


@pytest.mark.req("authentication.CREDENTIALS.20", "authentication.SECRETS.1")
def test_output_that_is_not_utf8_is_refused_without_quoting_it() -> None:
    with pytest.raises(CredentialCommandError) as caught:
        run_secret_command(SETTING, "printf 'CANARY\\377'")

    assert "not valid UTF-8" in str(caught.value) and "CANARY" not in str(caught.value)
