"""Helpers for the settings tests (imported by name: test directories are not packages)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PASSWORD = "CANARY-PW-7f3a"
USERNAME = "CANARY-user-2c9d@example.com"
TOKEN = "CANARY-TOKEN-c0de"
CANARIES = (PASSWORD, USERNAME, TOKEN)
COMMAND = [sys.executable, "-m", "cooked_mcp"]
UNREACHABLE = "http://127.0.0.1:9"  # discard port: nothing answers, nothing real is contacted


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def assert_no_canary(*texts: object) -> None:
    for text in texts:
        for canary in CANARIES:
            assert canary not in str(text), f"canary {canary!r} leaked into {text!r}"


def run_cli(
    args: list[str], env: dict[str, str], *, command: list[str] = COMMAND, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """The real ``cooked-mcp`` process with exactly ``env`` (see the ``proc_env`` fixture) and no stdin."""
    return subprocess.run(
        [*command, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
