"""Fixtures for the settings tests: an isolated HOME so no test ever reads a real user's config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from config_support import PASSWORD, UNREACHABLE, USERNAME


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    """A minimal environment with working credentials; tests add or remove variables."""
    return {"HOME": str(home), "COOKED_LOGIN_USERNAME": USERNAME, "COOKED_LOGIN_PASSWORD": PASSWORD}


@pytest.fixture
def bare_env(home: Path) -> dict[str, str]:
    """Only HOME: every setting must come from a file or a default."""
    return {"HOME": str(home)}


@pytest.fixture
def proc_env(home: Path) -> dict[str, str]:
    """For the real process: no inherited COOKED_* variables, an empty HOME, a harmless base URL."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "COOKED_BASE_URL": UNREACHABLE,
        "COOKED_LOGIN_USERNAME": USERNAME,
        "COOKED_LOGIN_PASSWORD": PASSWORD,
    }
