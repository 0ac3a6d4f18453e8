"""``cooked-mcp --check`` against the fake Cooked, as a user would run it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from servers import COOKED_MCP, server_env

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, SEED_USERNAME, FakeCooked

CANARY_PASSWORD = "CANARY-check-pw-9c1e"


def run_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([COOKED_MCP, "--check"], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.req("api-client.RESPONSES.1")
def test_a_matching_cooked_passes_with_only_read_requests(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        done = run_check(server_env(tmp_path, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD))
        methods = {(r.method, r.path) for r in fake.requests}
    assert done.returncode == 0, done.stdout + done.stderr
    assert "All 5 checks passed" in done.stdout
    for step in ("log in", "list recipes", "search recipes", "read the shopping list", "read one recipe"):
        assert step in done.stdout
    assert {m for m, _ in methods} <= {"GET", "POST"}
    assert [p for m, p in methods if m == "POST"] == ["/api/public/login"]
    # Counts only: no recipe title, no password; the configured login only on its own "account:" line.
    assert f"account: {SEED_LOGIN}" in done.stdout.splitlines()
    report = done.stdout.replace(f"account: {SEED_LOGIN}", "")
    assert "Shakshuka" not in report and SEED_USERNAME not in report and SEED_PASSWORD not in done.stdout


@pytest.mark.req("api-client.RESPONSES.1", "api-client.RESPONSES.3")
def test_a_wrong_shape_is_reported_by_endpoint_and_field(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        fake.fail(
            method="GET",
            path=f"/api/user/{SEED_USERNAME}/recipes",
            status=200,
            body={"items": [{"title": "x"}]},
            times=None,
        )
        fake.fail_with(
            "wrong_shape", method="GET", path=f"/api/user/{SEED_USERNAME}/shopping-list", times=None
        )
        done = run_check(server_env(tmp_path, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD))
    assert done.returncode == 1
    lines = {
        line[2:24].strip(): line[24:].strip() for line in done.stdout.splitlines() if line.startswith("  ")
    }
    assert "FAILED" in lines["list recipes"] and "items[0].id" in lines["list recipes"]
    assert (
        "FAILED" in lines["read the shopping list"] and "not a JSON object" in lines["read the shopping list"]
    )
    assert lines["search recipes"].startswith("OK") and lines["read one recipe"].startswith("OK")
    assert "2 of 5 checks failed" in done.stdout


@pytest.mark.req("authentication.LOGIN.4", "authentication.SECRETS.3")
def test_a_rejected_login_stops_the_check_without_showing_the_password(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        done = run_check(server_env(tmp_path, fake.base_url, login=SEED_LOGIN, password=CANARY_PASSWORD))
        assert [r.path for r in fake.requests] == ["/api/public/login"]
    assert done.returncode == 1
    assert "log in" in done.stdout and "FAILED" in done.stdout and "COOKED_LOGIN_PASSWORD" in done.stdout
    assert CANARY_PASSWORD not in done.stdout + done.stderr


@pytest.mark.req("authentication.LOGIN.4", "authentication.CREDENTIALS.11", "authentication.SECRETS.3")
def test_check_names_the_account_and_where_each_setting_came_from(tmp_path: Path) -> None:
    """A stale variable in the shell beating the file's command is visible, and the login failure blames it."""
    config = tmp_path / "config.toml"
    config.write_text(f'[user]\nname_cmd = "echo bob"\n\npassword_cmd = "echo {CANARY_PASSWORD}"\n')
    config.chmod(0o600)
    with FakeCooked() as fake:
        env = server_env(tmp_path, fake.base_url, login=SEED_LOGIN, password="")
        del env["COOKED_LOGIN_PASSWORD"]
        done = subprocess.run(
            [COOKED_MCP, "--check", "--config", str(config)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert f"account: {SEED_LOGIN}" in lines
    assert (
        f"  username   from the environment variable COOKED_LOGIN_USERNAME (overriding user.name_cmd in {config}:2)"
        in lines
    )
    assert f"  password   from user.password_cmd in {config}:4" in lines
    assert "  base URL   from the environment variable COOKED_BASE_URL" in lines
    failure = next(line for line in lines if line.lstrip().startswith("log in"))
    assert (
        f"check the username from the environment variable COOKED_LOGIN_USERNAME and the password from "
        f"user.password_cmd in {config}:4" in failure
    )
    assert "user.name /" not in failure  # not the generic list of every place a credential could be
    assert CANARY_PASSWORD not in done.stdout + done.stderr
    assert done.stderr == ""  # the account goes to the terminal, never to the log
