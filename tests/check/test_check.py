"""``cooked-mcp --check`` against the fake Cooked, as a user would run it."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import time
from pathlib import Path

import pytest
from servers import COOKED_MCP, run_main, server_env

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, SEED_USERNAME, FakeCooked
from cooked_mcp.check import REPORT_ADVICE

CANARY_PASSWORD = "CANARY-check-pw-9c1e"


def run_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """In this process (run_main): the streaming test (``..._while_cooked_keeps_quiet``) runs the real one."""
    return run_main(env, "--check")


@pytest.mark.req("api-client.RESPONSES.1")
def test_a_matching_cooked_passes_with_only_read_requests(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        done = run_check(server_env(tmp_path, fake.base_url))
        methods = {(r.method, r.path) for r in fake.requests}
    assert done.returncode == 0, done.stdout + done.stderr
    # What was checked and what was not, never "all" of something that was not.
    assert (
        "5 of 5 checks passed: 5 of the 17 endpoints answered as cooked-mcp expects; "
        "12 were not checked (each row says why)." in done.stdout
    )
    # The page size first: "5 recipes on the first page" read as "the account has 5 recipes".
    assert "list recipes ... OK - page of 5: 5 recipes" in done.stdout
    assert "search recipes ... OK - first page of the search for 'a': 20 matches" in done.stdout
    assert "--report" not in done.stdout  # nothing to report
    assert "All " not in done.stdout
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
        done = run_check(server_env(tmp_path, fake.base_url))
    assert done.returncode == 1
    lines = dict(line[2:].split(" ... ", 1) for line in done.stdout.splitlines() if " ... " in line)
    assert "FAILED" in lines["list recipes"] and "items[0].id" in lines["list recipes"]
    assert (
        "FAILED" in lines["read the shopping list"] and "not a JSON object" in lines["read the shopping list"]
    )
    assert lines["search recipes"].startswith("OK") and lines["read one recipe"].startswith("OK")
    assert (
        "2 of 5 checks failed: 3 of the 17 endpoints answered as cooked-mcp expects, 2 did not" in done.stdout
    )
    # A person, not an agent, reads this: no "retry once; … needs an update", a report to attach.
    assert "Next step" not in done.stdout and "retry" not in done.stdout
    assert done.stdout.endswith(
        "To report it: run the same command again with --report FILE and attach FILE to a bug report "
        "(it holds no secrets or recipes).\n"
    )


@pytest.mark.req("api-client.RESPONSES.1")
def test_a_login_answered_in_another_shape_asks_for_a_report_not_a_retry(tmp_path: Path) -> None:
    """Issue 42 item 13 for the first step too: the login line said "retry once; if it happens
    again, … cooked-mcp needs an update" and nothing said how to report it."""
    with FakeCooked() as fake:
        fake.fail(method="POST", path="/api/public/login", status=200, body={"weird": 1}, times=None)
        done = run_check(server_env(tmp_path, fake.base_url))
    assert done.returncode == 1
    assert "log in ... FAILED - Cooked's answer has an unexpected shape" in done.stdout
    assert "Next step" not in done.stdout and "retry" not in done.stdout
    assert done.stdout.splitlines()[-1] == REPORT_ADVICE


@pytest.mark.req("api-client.ERRORS.1", "api-client.RESPONSES.1")
def test_a_refused_request_reads_as_cookeds_answer_without_the_agents_next_step(tmp_path: Path) -> None:
    """Issue 42 item 13: a 404 on an endpoint said "Next step: check the ID; read the recipe
    list …", advice for an agent; the person is asked for a report instead."""
    with FakeCooked() as fake:
        fake.fail(method="GET", path="/api/user/recipes/search", status=404, times=None)
        done = run_check(server_env(tmp_path, fake.base_url))
    line = next(line for line in done.stdout.splitlines() if line.startswith("  search recipes ... "))
    assert line == (
        "  search recipes ... FAILED - Cooked rejected the search recipes request (404 NOT_FOUND). "
        "Cooked says: Injected fault 404."
    )
    assert "run the same command again with --report FILE" in done.stdout.splitlines()[-1]


@pytest.mark.req("authentication.LOGIN.4", "authentication.SECRETS.3")
def test_a_rejected_login_stops_the_check_without_showing_the_password(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        done = run_check(server_env(tmp_path, fake.base_url, login=SEED_LOGIN, password=CANARY_PASSWORD))
        assert [r.path for r in fake.requests] == ["/api/public/login"]
    assert done.returncode == 1
    # One line says what it is, the code once, what to check; no endpoint table of things not tried.
    failure = next(line for line in done.stdout.splitlines() if line.startswith("  log in ... "))
    assert failure == (
        "  log in ... FAILED - Cooked rejected the username or password (401 INVALID_AUTHENTICATION): "
        "check the username from the environment variable COOKED_LOGIN_USERNAME and the password from "
        "the environment variable COOKED_LOGIN_PASSWORD; social-login and passwordless Cooked accounts "
        "are not supported"
    )
    assert done.stdout.endswith("Nothing else was checked: every other request needs a logged-in session.\n")
    assert "NOT CHECKED" not in done.stdout and "restart" not in done.stdout
    assert CANARY_PASSWORD not in done.stdout + done.stderr


@pytest.mark.req("api-client.ERRORS.1", "api-client.VERIFICATION.1")
def test_a_refused_connection_is_said_to_be_one_and_nothing_else_is_listed(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a free port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = run_check(server_env(tmp_path, f"http://127.0.0.1:{port}"))
    assert done.returncode == 1
    failure = next(line for line in done.stdout.splitlines() if line.startswith("  log in ... "))
    assert "FAILED - Cooked at" in failure and "the connection was refused" in failure
    assert "MISMATCH" not in done.stdout and "NOT CHECKED" not in done.stdout and "restart" not in done.stdout
    assert done.stdout.endswith("Nothing else was checked: every other request needs a logged-in session.\n")


@pytest.mark.req("api-client.VERIFICATION.1")
def test_each_line_is_shown_as_soon_as_it_is_known_while_cooked_keeps_quiet(tmp_path: Path) -> None:
    """A Cooked that accepts connections and never answers: the account and the step waited on are on
    the screen (a pipe, so only a flush gets them there) long before the request gives up."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel accepts connections; nothing ever reads or answers them
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        env = server_env(tmp_path, base_url)
        process = subprocess.Popen(
            [COOKED_MCP, "--check"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            seen = _read_until(process, b"  log in ... ", seconds=20)
            assert process.poll() is None  # still waiting for the login's answer
        finally:
            process.kill()
            process.wait()
    text = seen.decode()
    assert text.startswith(f"cooked-mcp --check (read-only) against {base_url}\n")
    assert (
        f"account: {SEED_LOGIN}\n" in text and "  password:  set, not shown (the environment variable" in text
    )
    assert "checks (each waits at most 40 s for Cooked's answer):\n  log in ... " in text


def _read_until(process: subprocess.Popen[bytes], marker: bytes, seconds: float) -> bytes:
    """What the process wrote to stdout up to ``marker``; fails if it takes ``seconds``."""
    assert process.stdout is not None
    seen = b""
    deadline = time.monotonic() + seconds
    while marker not in seen:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([process.stdout], [], [], max(left, 0))
        assert ready, f"nothing more within {seconds} s; so far: {seen!r}"
        chunk = os.read(process.stdout.fileno(), 4096)
        assert chunk, f"stdout closed before {marker!r}: {seen!r}"
        seen += chunk
    return seen


@pytest.mark.req("authentication.LOGIN.4", "authentication.CREDENTIALS.11", "authentication.SECRETS.3")
def test_check_names_the_account_and_where_each_setting_came_from(tmp_path: Path) -> None:
    """A stale variable in the shell beating the file's command is visible, and the login failure blames it.

    Which source won is decided while loading the settings, before anything runs: the entry point
    in this process (``run_main``) shows it as the real process would."""
    config = tmp_path / "config.toml"
    config.write_text(f'[user]\nname_cmd = "echo bob"\n\npassword_cmd = "echo {CANARY_PASSWORD}"\n')
    config.chmod(0o600)
    with FakeCooked() as fake:
        base_url = fake.base_url
        env = server_env(tmp_path, base_url, login=SEED_LOGIN, password="")
        del env["COOKED_LOGIN_PASSWORD"]
        done = run_main(env, "--check", "--config", str(config))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert f"account: {SEED_LOGIN}" in lines
    assert (
        "  username:  the account above (the environment variable COOKED_LOGIN_USERNAME, "
        f"overriding user.name_cmd in {config}:2)" in lines
    )
    assert f"  password:  set, not shown (user.password_cmd in {config}:4)" in lines
    assert f"  base URL:  {base_url} (the environment variable COOKED_BASE_URL)" in lines
    assert "  read-only: off (default)" in lines
    failure = next(line for line in lines if line.lstrip().startswith("log in"))
    assert (
        f"check the username from the environment variable COOKED_LOGIN_USERNAME (overriding user.name_cmd "
        f"in {config}:2) and the password from user.password_cmd in {config}:4" in failure
    )
    assert "user.name /" not in failure  # not the generic list of every place a credential could be
    assert CANARY_PASSWORD not in done.stdout + done.stderr
    assert done.stderr == ""  # the account goes to the terminal, never to the log


@pytest.mark.req("api-client.RESPONSES.1")
def test_an_account_without_recipes_shows_the_recipe_read_skipped_on_its_own_line(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        fake.fail(
            method="GET",
            path=f"/api/user/{SEED_USERNAME}/recipes",
            status=200,
            body={"items": []},
            times=None,
        )
        fake.fail(method="GET", path="/api/user/recipes/search", status=200, body={"items": []}, times=None)
        done = run_check(server_env(tmp_path, fake.base_url))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  read one recipe ... OK - skipped: the account has no saved recipes\n" in done.stdout
