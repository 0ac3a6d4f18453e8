"""Every scenario in tests/scenarios/*.yaml against the real cooked-mcp process over stdio, and three
of them over Streamable HTTP too.

Why HTTP for some: an agent reaches the same tools over stdio (desktop clients) and Streamable
HTTP (with a bearer token). The journeys in ``OVER_HTTP_TOO`` run over both: between them they
call every tool in most of its modes (URL imports that end in a draft and in a failure, raw text,
updates, the shopping list), get tool errors and refused arguments back, and make many calls on
one MCP session, which is what the transport carries. The other five add tool modes (paged and
searched listings, a save of prepared markdown) and Cooked's behaviour below the tools (logins,
retries, 401s, ownership): what the transport carries for them is the same kind of call and
answer, so running them over HTTP too cost a process start each (~0.6 s CPU) and proved nothing
the three do not. Each run gets a fresh fake Cooked and a fresh process, so scenarios never share
state.

The runner's own checks (malformed files, the failure report) are tooling tests at the
bottom; they run in memory and prove no product requirement.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from mcp import Client
from runner import (
    Connect,
    Scenario,
    ScenarioError,
    StepFailed,
    load_all,
    load_scenario,
    parse_scenario,
    render,
    run_scenario,
    run_steps,
)
from servers import http_client, http_server, stdio_client
from sessions import cooked_session

from cooked_fake import FakeCooked

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def over_stdio(env: dict[str, str]) -> AsyncIterator[Client]:
    """The default transport: no --transport flag, as a desktop client starts it."""
    async with stdio_client(env) as client:
        yield client


@asynccontextmanager
async def over_http(env: dict[str, str]) -> AsyncIterator[Client]:
    """--transport http on a free 127.0.0.1 port (--http-addr), every request with the bearer token.

    One request without the token first must be refused, so the journey that follows
    shows the token from COOKED_MCP_HTTP_TOKEN is both required and accepted.
    """
    token = secrets.token_urlsafe(16)
    with http_server({**env, "COOKED_MCP_HTTP_TOKEN": token}) as server:
        async with httpx2.AsyncClient(timeout=10) as http:
            refused = await http.post(server.url, json=PING, headers=MCP_HEADERS)
        assert refused.status_code == 401, f"no token: {refused.status_code} {refused.text[:200]}"
        async with http_client(server.url, token) as client:
            yield client


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

#: What running a whole journey over each transport proves about the transport itself.
TRANSPORTS: dict[str, tuple[Connect, tuple[str, ...]]] = {
    "stdio": (over_stdio, ("server.TRANSPORT.1",)),
    "http": (
        over_http,
        (
            "server.TRANSPORT.2",
            "server.TRANSPORT.2-2",
            "server.TRANSPORT.3",
            "server.TRANSPORT.5",
            "server.CONFIG.8",
            "server.SECURITY.3",
            "server.SECURITY.4",
            "server.SECURITY.6",
        ),
    ),
}


#: The journeys run over HTTP as well as stdio (see the module's docstring for the choice).
OVER_HTTP_TOO = frozenset({"draft-import-to-shopping", "raw-text-lifecycle", "invalid-arguments"})


def _params() -> list[Any]:
    return [
        pytest.param(
            scenario,
            transport,
            id=f"{scenario.name}-{transport}",
            marks=pytest.mark.req(*dict.fromkeys((*scenario.requirements, *proves))),
        )
        for scenario in load_all()
        for transport, (_, proves) in TRANSPORTS.items()
        if transport == "stdio" or scenario.name in OVER_HTTP_TOO
    ]


@pytest.mark.tooling
def test_the_journeys_chosen_for_http_exist() -> None:
    """A renamed or deleted scenario would silently leave HTTP with fewer journeys than chosen."""
    assert {scenario.name for scenario in load_all()} >= OVER_HTTP_TOO


@pytest.mark.parametrize(("scenario", "transport"), _params())
async def test_scenario(scenario: Scenario, transport: str, tmp_path: Path) -> None:
    connect, _ = TRANSPORTS[transport]
    await run_scenario(scenario, connect, tmp_path)


# --- the runner itself ---------------------------------------------------------------------------

MINIMAL: dict[str, Any] = {
    "name": "x",
    "description": "a valid scenario to break in one place",
    "requirements": ["recipes.READ.1"],
    "steps": [
        {"call": "read", "arguments": {"target": "recipes"}, "capture": {"first": "recipes[0]"}},
        {"fake": "expire_sessions"},
        {"call": "read", "arguments": {"target": "recipe", "recipe_id": "{first.id}"}},
    ],
}


def _broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(yaml.safe_dump(MINIMAL))  # a deep copy
    change(data)
    return data


def _set_step(index: int, step: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["steps"][index] = step

    return change


MALFORMED = [
    pytest.param(
        _broken(_set_step(2, {"cal": "read"})),
        "x.yaml: step 3: unknown key 'cal'",
        id="typo-in-call",
    ),
    pytest.param(
        _broken(_set_step(0, {"call": "read", "argumnets": {}})),
        "x.yaml: step 1: unknown key 'argumnets'",
        id="typo-in-step-key",
    ),
    pytest.param(
        _broken(_set_step(0, {"call": "search_recipes"})),
        "x.yaml: step 1: call: unknown tool 'search_recipes'",
        id="unknown-tool",
    ),
    pytest.param(
        _broken(_set_step(2, {"call": "read", "arguments": {"recipe_id": "{draft.id}"}})),
        "x.yaml: step 3: {draft.id} refers to a capture no earlier step makes",
        id="reference-before-capture",
    ),
    pytest.param(
        _broken(_set_step(1, {"fake": "expire_session"})),
        "x.yaml: step 2: fake[0]: unknown fake action 'expire_session'",
        id="unknown-fake-action",
    ),
    pytest.param(
        _broken(_set_step(0, {"call": "read", "cooked": {"requests": [["GET"]]}})),
        "x.yaml: step 1: cooked.requests[0]: write [METHOD, path]",
        id="short-request",
    ),
    pytest.param(
        _broken(_set_step(0, {"call": "read", "cooked": {"request": []}})),
        "x.yaml: step 1: unknown key 'cooked.request'",
        id="typo-in-cooked",
    ),
    pytest.param(
        _broken(_set_step(0, {"call": "read", "output": {"recipes..id": 1}})),
        "x.yaml: step 1: output: 'recipes..id' is not a path",
        id="bad-path",
    ),
    pytest.param(
        _broken(_set_step(0, {"call": "read", "error": "yes"})),
        "x.yaml: step 1: error: Input should be a valid boolean",
        id="error-not-bool",
    ),
    pytest.param(
        _broken(lambda data: data.update(requirements=["recipes.READ.99"])),
        "x.yaml: requirements[0]: unknown requirement ID 'recipes.READ.99'",
        id="unknown-requirement",
    ),
    pytest.param(
        _broken(lambda data: data.update(stpes=[])),
        "x.yaml: unknown key 'stpes'",
        id="typo-top-level",
    ),
    pytest.param(
        _broken(lambda data: data.pop("description")),
        "x.yaml: missing key 'description'",
        id="missing-description",
    ),
    pytest.param(
        _broken(lambda data: data.update(setup=[{"set_import_result": {"url": "u", "result": "maybe"}}])),
        "x.yaml: setup[0]: set_import_result.result: Input should be 'saved', 'draft' or 'fail'",
        id="bad-import-result",
    ),
    pytest.param(
        _broken(lambda data: data.update(env={"COOKED_MCP_READ_ONLY": 1})),
        "x.yaml: env.COOKED_MCP_READ_ONLY: Input should be a valid string",
        id="env-not-string",
    ),
    pytest.param(["not", "a", "mapping"], "x.yaml: the document: must be a mapping", id="not-a-mapping"),
]


@pytest.mark.tooling
@pytest.mark.parametrize(("data", "message"), MALFORMED)
def test_malformed_scenarios_name_the_file_step_and_key(data: Any, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(data, "x.yaml")
    assert str(caught.value).startswith(message), str(caught.value)


@pytest.mark.tooling
def test_the_minimal_scenario_is_valid() -> None:
    """The base of the malformed cases must itself be valid, or they prove nothing."""
    scenario = parse_scenario(MINIMAL, "x.yaml")
    assert len(scenario.steps) == 3 and scenario.source == "x.yaml"


@pytest.mark.tooling
def test_invalid_yaml_and_duplicate_names_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.yaml: not valid YAML"):
        load_scenario(bad)
    bad.unlink()
    for file in ("a.yaml", "b.yaml"):
        (tmp_path / file).write_text(yaml.safe_dump(MINIMAL), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"b\.yaml: name 'x' is already used by .*a\.yaml"):
        load_all(tmp_path)


@pytest.mark.tooling
def test_references_keep_whole_values_and_fill_text() -> None:
    captures = {"groups": ["pg-01", "pg-02"], "draft": {"portions": 4, "id": "x-9"}}
    assert render("{groups}", captures) == ["pg-01", "pg-02"]
    assert render(["{groups[1]}", "{draft.portions}"], captures) == ["pg-02", 4]
    assert render({"path": "/api/extract/{draft.id}/save"}, captures) == {"path": "/api/extract/x-9/save"}
    assert render('{"not": "a reference"} {draft.portions}', captures) == '{"not": "a reference"} 4'


@pytest.mark.tooling
async def test_a_failing_step_reports_call_result_and_cooked_requests() -> None:
    """In memory (no process): the report must be enough to debug a journey without rerunning it."""
    scenario = parse_scenario(
        {
            "name": "report",
            "description": "a step whose expectations are wrong on purpose",
            "requirements": ["recipes.READ.5"],
            "steps": [
                {
                    "call": "read",
                    "note": "open the first recipe",
                    "arguments": {"target": "recipe", "recipe_id": "r-0001"},
                    "text_contains": ["Pancakes"],
                    "output": {"recipe.portions": 3},
                    "cooked": {"requests": [["GET", "/api/saved/r-0002"]], "logins": 0},
                }
            ],
        },
        "tests/scenarios/report.yaml",
    )
    with FakeCooked() as fake:
        async with cooked_session(fake) as client:
            with pytest.raises(StepFailed) as caught:
                await run_steps(scenario, fake, client)
    report = str(caught.value)
    for part in (
        "tests/scenarios/report.yaml: step 1: call read (open the first recipe) failed:",
        "text should contain 'Pancakes'",
        "output recipe.portions: expected 3, got 2",
        "Cooked requests in this step: expected ['GET /api/saved/r-0002'], got ['GET /api/saved/r-0001']",
        "Cooked saw 1 login(s) in this step, expected 0",
        'call: read {"target": "recipe", "recipe_id": "r-0001"}',
        "isError: False",
        "  | ## Ingredients",
        '"title": "Shakshuka"',
        "> POST /api/public/login -> 200",
        "> GET /api/saved/r-0001 -> 200",
    ):
        assert part in report, f"{part!r} missing from:\n{report}"
    assert "correct horse" not in report  # the login body (the password) is never shown
