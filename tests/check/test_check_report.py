"""``--check --report FILE``: what a user attaches to a bug report holds shapes, never values."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from test_check_write import run_check

from cooked_fake import FakeCooked
from cooked_mcp import __version__
from cooked_mcp.cooked import endpoints

CANARY_LOGIN = "canary-login-3f9a@example.com"
CANARY_PASSWORD = "CANARY-password-77c1"
CANARY_USERNAME = "canaryuser5d2e"
CANARY_COOKIE = "CANARYcookie0b4d"
CANARY_TITLE = "Canary Stew 8e1f"
CANARY_TEXT = "CANARY-recipe-text-4a6c"
CANARIES = (CANARY_LOGIN, CANARY_PASSWORD, CANARY_USERNAME, CANARY_COOKIE, CANARY_TITLE, CANARY_TEXT)


def canary_fake(fake: FakeCooked) -> None:
    """An account whose every secret and recipe is a canary, and answers that echo them in odd places."""
    fake.use_account(
        login=CANARY_LOGIN, password=CANARY_PASSWORD, username=CANARY_USERNAME, session_token=CANARY_COOKIE
    )
    with fake.state.lock:
        fake.state.add_recipe(CANARY_TITLE, f"## {CANARY_TEXT}\n- 1 egg", 2)
    echo = {"title": CANARY_TITLE, "description": CANARY_TEXT, "owner": CANARY_USERNAME}
    # A list whose summaries lost their IDs, keyed oddly; a shopping list keyed by the username.
    fake.fail(method="GET", path=f"/api/user/{CANARY_USERNAME}/recipes", status=200, body={"items": [echo]})
    fake.fail(
        method="GET",
        path=f"/api/user/{CANARY_USERNAME}/shopping-list",
        status=200,
        body={CANARY_USERNAME: [echo], CANARY_TEXT: CANARY_PASSWORD, "aisles": "x"},
    )
    # An error whose message echoes secrets and recipe text.
    fake.fail(
        method="GET",
        path="/api/user/recipes/search",
        status=500,
        body={"code": "INTERNAL_ERROR", "message": f"{CANARY_TITLE} {CANARY_TEXT} {CANARY_PASSWORD}"},
    )


@pytest.mark.req("api-client.ERRORS.6", "authentication.SECRETS.3", "api-client.RESPONSES.3")
@pytest.mark.parametrize("mode", [(), ("--write", "--yes")], ids=["read-only", "write"])
def test_the_report_holds_shapes_and_verdicts_but_no_canary(tmp_path: Path, mode: tuple[str, ...]) -> None:
    report = tmp_path / "check-report.json"
    with FakeCooked(variants=["drifted"]) as fake:
        canary_fake(fake)
        if mode:  # every recipe read answers an error whose code and message are canaries
            fake.fail(
                method="GET",
                path_regex=r"^/api/saved/",
                status=410,
                body={"code": CANARY_TEXT, "message": CANARY_PASSWORD},
                times=None,
            )
        done = run_check(
            tmp_path, fake, *mode, "--report", str(report), login=CANARY_LOGIN, password=CANARY_PASSWORD
        )
    assert done.returncode == 1, done.stdout + done.stderr
    text = report.read_text()
    for canary in CANARIES:
        assert canary.casefold() not in text.casefold(), canary
    data = json.loads(text)
    assert data["cooked-mcp-version"] == __version__
    assert data["mode"] == ("write" if mode else "read-only")
    rows = {row["name"]: row for row in data["endpoints"]}
    assert [row["path"] for row in data["endpoints"]] == [e.path_template for e in endpoints.ENDPOINTS]
    assert all(
        row["source"] == e.provenance.source
        for row, e in zip(data["endpoints"], endpoints.ENDPOINTS, strict=True)
    )
    assert (
        rows["list recipes"]["problem"] == "the answer has an unexpected shape: items[0].id: field required"
    )
    assert rows["list recipes"]["answer-shape"] == {
        "items": ["array", {"title": "string", "description": "string", "owner": "string"}]
    }
    assert rows["get shopping list"]["answer-shape"] == {
        "<other key 1>": ["array", {"title": "string", "description": "string", "owner": "string"}],
        "<other key 2>": "string",
        "aisles": "string",
    }
    assert (rows["search recipes"]["status"], rows["search recipes"]["code"]) == (500, "INTERNAL_ERROR")
    assert rows["login"]["verdict"] == "ok" and rows["clear shopping list"]["verdict"] == "not checked"
    if mode:
        assert data["undo"]["complete"] is True
        assert rows["update recipe"]["answer-shape"] == {"id": "string"}
        assert rows["get recipe"]["status"] == 410 and "code" not in rows["get recipe"]
    assert f"Report written to {report}" in done.stdout


@pytest.mark.req("authentication.LOGIN.4", "authentication.SECRETS.3")
def test_a_rejected_login_is_reported_without_the_credentials(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    with FakeCooked(variants=["login-403"]) as fake:
        done = run_check(
            tmp_path, fake, "--report", str(report), login=CANARY_LOGIN, password=CANARY_PASSWORD
        )
    assert done.returncode == 1
    data = json.loads(report.read_text())
    login = data["endpoints"][0]
    assert (login["name"], login["verdict"], login["status"]) == ("login", "mismatch", 403)
    assert CANARY_PASSWORD not in done.stdout + done.stderr + report.read_text()
    assert CANARY_LOGIN not in report.read_text()


@pytest.mark.req("api-client.RESPONSES.3", "authentication.SECRETS.3")
def test_nothing_derived_from_a_secret_reaches_the_report(tmp_path: Path) -> None:
    """Issue 41 item 4: base32 of the password, echoed as an error code, looked like a code
    (capitals and digits) and was kept; in lower case, as a key of a wrong-shaped answer, it
    looked like a schema key."""
    report = tmp_path / "r.json"
    encoded = base64.b32encode(CANARY_PASSWORD.encode()).decode().rstrip("=")
    assert re.fullmatch(r"[A-Z][A-Z0-9_]*", encoded) and len(encoded) <= 64  # passes the code filter
    with FakeCooked() as fake:
        fake.use_account(login=CANARY_LOGIN, password=CANARY_PASSWORD, username=CANARY_USERNAME)
        fake.fail(path_regex=r"/recipes$", status=400, body={"code": encoded, "message": "no"})
        fake.fail(path_regex=r"/shopping-list$", status=200, body={encoded.lower(): 1, "aisles": "x"})
        done = run_check(
            tmp_path, fake, "--report", str(report), login=CANARY_LOGIN, password=CANARY_PASSWORD
        )
    assert done.returncode == 1
    rows = {row["name"]: row for row in json.loads(report.read_text())["endpoints"]}
    assert rows["list recipes"]["status"] == 400 and "code" not in rows["list recipes"]
    assert len(rows["get shopping list"]["answer-shape"]) == 2
    assert encoded.casefold() not in (report.read_text() + done.stdout).casefold()
