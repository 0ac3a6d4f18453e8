"""``cooked-mcp --check --write`` against the fake: the round trip, its undo, its prompt and its report."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from servers import COOKED_MCP, run_main, server_env
from sessions import client_for

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp.check import check_account
from cooked_mcp.cooked import endpoints

WRITE_ENDPOINTS = {
    endpoints.PREVIEW_RECIPE,
    endpoints.SAVE_RECIPE,
    endpoints.UPDATE_RECIPE,
    endpoints.DELETE_RECIPE,
    endpoints.ADD_INGREDIENTS,
    endpoints.SET_SELECTED,
    endpoints.UPDATE_PRODUCT_GROUP,
    endpoints.REMOVE_PRODUCT_GROUPS,
}


def run_check(
    tmp_path: Path,
    fake: FakeCooked,
    *args: str,
    stdin: str = "",
    login: str = SEED_LOGIN,
    password: str = SEED_PASSWORD,
    process: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``cooked-mcp --check ARGS``: in this process (run_main), or with ``process`` a real one
    whose stdin is ``stdin``."""
    env = server_env(tmp_path, fake.base_url, login=login, password=password)
    if not process:
        return run_main(env, "--check", *args, stdin=stdin)
    return subprocess.run(
        [COOKED_MCP, "--check", *args], env=env, input=stdin, capture_output=True, text=True, timeout=90
    )


def verdict_lines(stdout: str) -> dict[str, str]:
    """``"PUT /api/saved/{recipe_id}"`` -> the rest of its line in the endpoint summary."""
    lines: dict[str, str] = {}
    for endpoint in endpoints.ENDPOINTS:
        prefix = f"  {endpoint.method:<6} {endpoint.path_template} "
        line = next(line for line in stdout.splitlines() if line.startswith(prefix))
        lines[f"{endpoint.method} {endpoint.path_template}"] = line[len(prefix) :].strip()
    return lines


@pytest.mark.req("api-client.RESPONSES.1", "api-client.RESPONSES.2", "recipes.SAVE.1", "shopping-list.ADD.1")
@pytest.mark.parametrize(
    "variants", [(), ("bare-lists",), ("question-flags",), ("extract-id",), ("login-403",), ("observed",)]
)
def test_the_round_trip_passes_and_leaves_the_account_byte_identical(
    tmp_path: Path, variants: tuple[str, ...]
) -> None:
    with FakeCooked(variants=variants) as fake:
        before = fake.account_snapshot()
        done = run_check(tmp_path, fake, "--write", "--yes")
        after = fake.account_snapshot()
        called = {(r.method, r.path.split("/")[2]) for r in fake.requests}
    assert done.returncode == 0, done.stdout + done.stderr
    assert after == before
    assert "18 of 18 checks passed" in done.stdout
    assert {"PUT", "DELETE"} <= {method for method, _ in called}
    lines = verdict_lines(done.stdout)
    for endpoint in WRITE_ENDPOINTS:
        assert lines[f"{endpoint.method} {endpoint.path_template}"].endswith("OK")
    # Every row says where it comes from, and only what the public sources show is confirmed.
    confirmed = {key for key, line in lines.items() if line.startswith("confirmed")}
    assert confirmed == {"POST /api/public/login", "GET /api/user/recipes/search", "POST /api/new"}


@pytest.mark.req(
    "api-client.RESPONSES.1", "api-client.RESPONSES.3", "api-client.ERRORS.2", "api-client.ERRORS.3"
)
def test_a_different_contract_is_named_difference_by_difference(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    with FakeCooked(variants=["drifted"]) as fake:
        before = fake.account_snapshot()
        done = run_check(tmp_path, fake, "--write", "--yes", "--report", str(report))
        assert fake.account_snapshot() == before
    assert done.returncode == 1
    lines = verdict_lines(done.stdout)
    assert "MISMATCH in 'update the recipe'" in lines["PUT /api/saved/{recipe_id}"]
    assert "recipe-id: field required" in lines["PUT /api/saved/{recipe_id}"]
    assert lines["GET /api/saved/{recipe_id}"].endswith(
        "MISMATCH in 'read the deleted recipe (expect not found)': answered 410 GONE, expected 404 NOT_FOUND"
    )  # the status and code once
    assert "the answer is empty [204]" in lines["PUT /api/user/{username}/shopping-list/selected"]
    assert lines["DELETE /api/saved/{recipe_id}"].endswith("OK")
    assert "4 of 18 checks failed" in done.stdout
    rows = {row["name"]: row for row in json.loads(report.read_text())["endpoints"]}
    assert rows["update recipe"]["answer-shape"] == {"id": "string"}
    assert rows["update recipe"]["status"] == 200 and rows["update recipe"]["verdict"] == "mismatch"
    assert (rows["get recipe"]["status"], rows["get recipe"]["code"]) == (410, "GONE")
    assert (
        rows["set selection"]["problem"] == "the answer is empty" and rows["set selection"]["status"] == 204
    )


@pytest.mark.req("api-client.RESPONSES.1")
def test_without_yes_it_asks_first_and_a_no_sends_nothing(tmp_path: Path) -> None:
    """Through the real process, the no: the answer is read from its stdin, a pipe. The yes, read by
    the same code, runs the entry point in this process."""
    with FakeCooked() as fake:
        declined = run_check(tmp_path, fake, "--write", stdin="no\n", process=True)
        assert fake.requests == []
        accepted = run_check(tmp_path, fake, "--write", stdin="yes\n")
        assert any(r.method == "DELETE" for r in fake.requests)
    assert declined.returncode == 1
    assert "Type 'yes' to go ahead" in declined.stdout and "Nothing was sent to Cooked" in declined.stdout
    assert accepted.returncode == 0, accepted.stdout


@pytest.mark.req("api-client.RESPONSES.1")
def test_it_shows_the_account_and_what_it_will_create_and_remove_before_it_asks(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        declined = run_check(tmp_path, fake, "--write", stdin="no\n")
        base_url = fake.base_url
    asked = declined.stdout.index("Type 'yes' to go ahead")
    before = declined.stdout[:asked]
    assert before.startswith(f"cooked-mcp --check (with --write) against {base_url}\n")
    assert f"account: {SEED_LOGIN}\n" in before and "  base URL:  http://127.0.0.1:" in before
    token = re.search(r"creates the recipe 'cooked-mcp check ([0-9a-f]{8})'", before)
    assert token, before
    assert "then deletes it" in before
    assert f"adds the shopping-list line '1 cooked-mcp check item {token.group(1)}'" in before
    assert "then removes it" in before


@pytest.mark.req("api-client.RESPONSES.1")
@pytest.mark.parametrize("reply", ["y", "Y", "YES", "yes please", ""])
def test_only_the_word_the_question_asks_for_goes_ahead(tmp_path: Path, reply: str) -> None:
    with FakeCooked() as fake:
        done = run_check(tmp_path, fake, "--write", stdin=f"{reply}\n")
        assert fake.requests == []
    assert done.returncode == 1 and "Nothing was sent to Cooked" in done.stdout


@pytest.mark.req("api-client.RESPONSES.1")
def test_it_says_which_endpoints_it_did_not_check_and_why(tmp_path: Path) -> None:
    with FakeCooked() as fake:
        done = run_check(tmp_path, fake, "--write", "--yes")
    assert done.returncode == 0, done.stdout
    lines = verdict_lines(done.stdout)
    assert lines["POST /api/new"].endswith("NOT CHECKED (a URL import makes Cooked fetch a web page)")
    for path in ("GET /api/extract/{extraction_id}", "POST /api/extract/{extraction_id}/save"):
        assert lines[path].endswith("NOT CHECKED (drafts come only from a URL import)")
    assert lines["DELETE /api/user/{username}/shopping-list"].endswith(
        "NOT CHECKED (it would empty your whole shopping list)"
    )
    assert done.stdout.endswith(
        "18 of 18 checks passed: 13 of the 17 endpoints answered as cooked-mcp expects; "
        "4 were not checked (each row says why).\n"
    )
    # The legend's document is in the repository, and the URL printed is where it is published.
    assert "https://github.com/cooked-mcp/cooked-mcp/blob/main/docs/cooked-api.md" in done.stdout
    assert (Path(__file__).resolve().parents[2] / "docs" / "cooked-api.md").is_file()


class FailOnce(httpx.AsyncBaseTransport):
    """Fails the ``nth`` request: ``refused`` before Cooked sees it, ``lost`` after Cooked acted."""

    def __init__(self, nth: int, mode: str) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.nth, self.mode, self.count = nth, mode, 0
        self.failed: str | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.count += 1
        if self.count != self.nth:
            return await self.inner.handle_async_request(request)
        self.failed = f"{request.method} {request.url.path}"
        if self.mode == "lost":
            response = await self.inner.handle_async_request(request)
            await response.aread()
            return httpx.Response(200, json={"zz-not-the-answer": True}, request=request)
        return httpx.Response(500, json={"code": "INTERNAL_ERROR", "message": "injected"}, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def check_with(fake: FakeCooked, transport: httpx.AsyncBaseTransport | None = None) -> Any:
    client = client_for(fake, transport=transport)
    async with client:
        return await check_account(client, write=True)


@pytest.mark.req("api-client.RESPONSES.3", "api-client.ERRORS.1")
@pytest.mark.parametrize("mode", ["refused", "lost"])
@pytest.mark.anyio
async def test_a_failure_at_any_step_is_undone_byte_for_byte(fake: FakeCooked, mode: str) -> None:
    fake.clear_requests()
    assert (await check_with(fake)).passed
    steps = len(fake.requests)
    assert steps >= 18
    for nth in range(1, steps + 1):
        fake.reset()
        before = fake.account_snapshot()
        transport = FailOnce(nth, mode)
        result = await check_with(fake, transport)
        failed = [o for o in result.outcomes if not o.ok]
        assert fake.account_snapshot() == before, (nth, transport.failed)
        assert failed and not result.passed, (nth, transport.failed)
        assert result.roundtrip is None or result.roundtrip.undo_complete, (nth, transport.failed)
        method, _, path = (transport.failed or "").partition(" ")
        template = re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(failed[0].endpoint.path_template))
        assert failed[0].endpoint.method == method, (nth, transport.failed, failed[0])
        assert re.fullmatch(template, path), (nth, transport.failed, failed[0])


class FailFrom(FailOnce):
    """Refuses the ``nth`` request and every one after it: a step fails, and so does its undo."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.count += 1
        if self.count < self.nth:
            return await self.inner.handle_async_request(request)
        return httpx.Response(500, json={"code": "INTERNAL_ERROR", "message": "injected"}, request=request)


@pytest.mark.req("api-client.ERRORS.1")  # closest: a failed undo becomes a note a person can act on
@pytest.mark.parametrize(
    ("nth", "by_hand"),
    [
        (9, "could not delete the check's recipe: delete the recipe titled 'cooked-mcp check "),
        (14, "could not clean up the shopping list: remove the line 'cooked-mcp check item "),
    ],
    ids=["recipe", "shopping-list line"],
)
@pytest.mark.anyio
async def test_an_undo_that_fails_too_names_what_to_remove_by_hand(
    fake: FakeCooked, nth: int, by_hand: str
) -> None:
    """From the recipe's update on (the 9th request) or the added line's read (the 14th), Cooked
    refuses everything: the undo cannot finish, and says what is left."""
    fake.reset()
    result = await check_with(fake, FailFrom(nth, "refused"))
    assert not result.passed and result.roundtrip is not None
    assert not result.roundtrip.undo_complete
    [note] = result.roundtrip.undo_notes
    assert note.startswith(by_hand) and note.endswith(
        ("' by hand", "' by hand and check which items are ticked")
    )
    assert result.roundtrip.token in note


@pytest.mark.req("server.CONFIG.1")  # closest: flags are checked before anything runs
@pytest.mark.parametrize("flag", ["--write", "--yes", "--report=r.json"])
def test_the_check_flags_need_check(tmp_path: Path, flag: str) -> None:
    with FakeCooked() as fake:
        env = server_env(tmp_path, fake.base_url)
        if flag == "--write":  # through the real process once
            done = subprocess.run([COOKED_MCP, flag], env=env, capture_output=True, text=True, timeout=30)
        else:
            done = run_main(env, flag)
        assert fake.requests == []
    assert done.returncode == 2
    assert "--write, --yes and --report only go with --check" in done.stderr
