"""Helpers for the settings tests (imported by name: test directories are not packages)."""

from __future__ import annotations

from pathlib import Path

PASSWORD = "CANARY-PW-7f3a"
USERNAME = "CANARY-user-2c9d@example.com"
TOKEN = "CANARY-TOKEN-c0de"
CANARIES = (PASSWORD, USERNAME, TOKEN)
UNREACHABLE = "http://127.0.0.1:9"  # discard port: nothing answers, nothing real is contacted


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
