"""``[mcp.limits]``: the transports' time bounds, set in the file and checked like every setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from config_support import PASSWORD, USERNAME, write

from cooked_mcp.config import load_settings
from cooked_mcp.config.limits import Limits
from cooked_mcp.exceptions import ConfigError

ENVIRON = {"COOKED_LOGIN_USERNAME": USERNAME, "COOKED_LOGIN_PASSWORD": PASSWORD}


@pytest.mark.req("server.CONFIG.2")
def test_limits_default_and_a_file_table_sets_some_of_them(home: Path, tmp_path: Path) -> None:
    assert load_settings(config_path=None, environ={**ENVIRON, "HOME": str(home)}).limits == Limits()
    path = write(tmp_path / "c.toml", "[mcp.limits]\nstop_grace_seconds = 0.5\nhttp_body_seconds = 2\n")
    limits = load_settings(config_path=str(path), environ=ENVIRON).limits
    assert (limits.stop_grace_seconds, limits.http_body_seconds) == (0.5, 2.0)
    assert limits.input_end_grace_seconds == Limits().input_end_grace_seconds == 120


@pytest.mark.req("server.CONFIG.2")
@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        (
            "[mcp.limits]\nstop_grace = 1",
            2,
            "unknown key mcp.limits.stop_grace: remove it or fix its spelling "
            "(known keys in [mcp.limits]: stop_grace_seconds, input_end_grace_seconds, http_head_seconds, "
            "http_body_seconds, kept_outcomes, kept_outcome_chars, confirm_answer_seconds, answers_in_flight_mib, answers_wait_seconds)",
        ),
        (
            "[mcp.limits]\nhttp_body_seconds = 2\nhttp_head_seconds = 0",
            3,
            "mcp.limits.http_head_seconds must be a number of seconds above 0 and at most 3600",
        ),
        (
            "[mcp.limits]\nhttp_body_seconds = 4000",
            2,
            "mcp.limits.http_body_seconds must be a number of seconds above 0 and at most 3600",
        ),
        (
            '[mcp.limits]\nstop_grace_seconds = "3"',
            2,
            "mcp.limits.stop_grace_seconds must be a number of seconds above 0 and at most 3600",
        ),
        (
            "[mcp]\nread_only = true\nlimits = { stop_grace_seconds = inf }",
            3,
            "mcp.limits.stop_grace_seconds must be a number of seconds above 0 and at most 3600",
        ),
        (
            "[mcp]\nlimits = 5",
            2,
            "mcp.limits must be a table ([mcp.limits]) holding stop_grace_seconds, "
            "input_end_grace_seconds, http_head_seconds, http_body_seconds, kept_outcomes, kept_outcome_chars, "
            "confirm_answer_seconds, answers_in_flight_mib, answers_wait_seconds",
        ),
        (
            "[mcp.limits]\nanswers_in_flight_mib = 4",
            2,
            "mcp.limits.answers_in_flight_mib must be a whole number of MiB from 8 (the largest answer "
            "read) to 4096",
        ),
    ],
)
def test_a_wrong_limit_is_one_line_naming_the_file_line_and_key(
    tmp_path: Path, text: str, line: int, expected: str
) -> None:
    path = write(tmp_path / "c.toml", f"{text}\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(config_path=str(path), environ=ENVIRON)
    assert str(refused.value) == f"{path}:{line}: {expected}"
