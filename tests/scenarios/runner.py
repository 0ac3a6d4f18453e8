"""Agent journeys as data: load, validate and run tests/scenarios/*.yaml against the real server.

Why data: a journey (import a page, review the draft, save it, shop for it...) is a
sequence of tool calls whose later arguments come from earlier answers. Written as
YAML, each journey reads like the transcript an agent would produce, and the same
file runs unchanged over every transport (stdio and HTTP) against a fresh fake Cooked.

Scenario file format
====================

Top-level keys (anything else is an error)::

    name: draft-import-to-shopping   # required; [a-z0-9_-]+, unique; the pytest id
    description: ...                 # required; what the journey shows, for humans
    requirements: [recipes.SAVE.5]   # required; the IDs the journey truly proves
    env: {COOKED_MCP_READ_ONLY: "1"} # optional; extra environment for the server process
    setup: [...]                     # optional; fake actions applied before the server starts
    steps: [...]                     # required; run in order, numbered from 1 in errors
    x-anything: ...                  # ignored: a place for YAML anchors (&name) to reuse

A step is either a tool call or a fake action. A call step::

    - call: save_recipe              # one of the five tools
      note: import the page          # optional; shown in failure reports
      arguments: {source: url, url: "https://example.org/x-draft"}
      error: false                   # expected isError (default false)
      text_contains: [DRAFT, NOT saved]   # case-sensitive substrings of the result text
      text_excludes: [thumbnail]
      output: {saved: false, draft.portions: 4}   # path -> value, equality on structuredContent
      output_absent: [recipe_id]     # paths that must not exist in structuredContent
      output_len: {draft.markdown: 120}           # path -> len() of the value there
      capture: {draft: draft}        # name -> path; later steps use {draft...}
      cooked:                        # what fake Cooked received during this step
        requests:                    # exact list, in order, login requests excluded
          - [POST, /api/new]
          - {method: GET, path: "/api/extract/{draft.draft_id}", status: 200,
             query: {page: "1"}, json: {...}, headers: {cookie: null}}
        count: 2                     # number of requests (login excluded)
        logins: 0                    # number of POST /api/public/login
        with_logins: false           # true: `requests` and `count` include logins too

    Request items compare only what they state: ``query`` values as strings, ``json``
    for exact equality with the parsed body, ``headers`` by lower-case name (null:
    the header must be absent). Login bodies are never printed in failure reports.

A fake step changes the fake Cooked mid-journey (so does each item of ``setup``)::

    - fake: expire_sessions                       # forget every session cookie
    - fake: {reject_sessions: true}               # every authenticated request answers 401
    - fake: {set_import_result: {url: "https://...", result: draft}}   # saved | draft | fail
    - fake: {fail: {method: GET, path: /api/saved/r-0001, status: 500, times: 1}}
    - fake: {fail_with: {kind: html_502, path: /api/new}}
    - fake: clear_faults
    - fake: [expire_sessions, {reject_sessions: true}]   # several at once

Paths (``output``, ``output_absent``, ``output_len``, ``capture``) are dotted keys with
list indexes: ``recipes[0].id``, ``draft.markdown``, ``product_groups[-1].aisle_id``.
Inside YAML flow collections (``{...}``, ``[...]``) quote a path that has brackets:
``output: {"recipes[0].id": r-0046}``; as a block mapping key it needs no quotes.

Templating: in ``arguments`` and in every expectation, a string that is exactly one
reference, ``"{name}"`` or ``"{name.path[0]}"``, is replaced by the captured value itself
(a list stays a list, a number a number); references inside a longer string are replaced
by their text (``"/api/saved/{recipe_id}"``). Only ``{identifier...}`` is a reference, so
other braces are left alone; there is no escape syntax. A reference must name a capture
made by an earlier step; that is checked when the file is loaded.

Every malformed file is rejected when it is loaded with a ScenarioError naming the file,
the step number and the key, e.g. ``tests/scenarios/x.yaml: step 3: unknown key 'cal'``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn, TypeAlias

import mcp_types as types
import yaml
from generated_requirements import REQUIREMENTS
from mcp import Client
from servers import server_env

from cooked_fake import FAULT_KINDS, SEED_LOGIN, SEED_PASSWORD, FakeCooked, RecordedRequest
from cooked_mcp_generated.tools import TOOLS

__all__ = [
    "SCENARIO_DIR",
    "CallStep",
    "Connect",
    "FakeAction",
    "FakeStep",
    "Scenario",
    "ScenarioError",
    "StepFailed",
    "load_all",
    "load_scenario",
    "parse_scenario",
    "run_scenario",
]

SCENARIO_DIR: Final = Path(__file__).resolve().parent
ROOT: Final = SCENARIO_DIR.parent.parent
LOGIN_PATH: Final = "/api/public/login"
TOOL_NAMES: Final = frozenset(spec.name for spec in TOOLS)
METHODS: Final = frozenset({"GET", "POST", "PUT", "DELETE", "PATCH"})
IMPORT_RESULTS: Final = ("saved", "draft", "fail")

Connect: TypeAlias = Callable[[dict[str, str]], AbstractAsyncContextManager[Client]]
"""Starts cooked-mcp with this environment and yields a connected MCP client."""

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH_BODY = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[-?\d+\])*"
_PATH = re.compile(_PATH_BODY)
_PATH_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]")
_REFERENCE = re.compile(r"\{(" + _PATH_BODY + r")\}")

_TOP_KEYS: Final = ("name", "description", "requirements", "env", "setup", "steps")
_REQUIRED_TOP_KEYS: Final = ("name", "description", "requirements", "steps")
_CALL_KEYS: Final = (
    "call",
    "note",
    "arguments",
    "error",
    "text_contains",
    "text_excludes",
    "output",
    "output_absent",
    "output_len",
    "capture",
    "cooked",
)
_FAKE_KEYS: Final = ("fake", "note")
_COOKED_KEYS: Final = ("requests", "count", "logins", "with_logins")
_REQUEST_KEYS: Final = ("method", "path", "status", "query", "json", "headers")


class ScenarioError(Exception):
    """A scenario file that cannot be run as written; the message names file, step and key."""


class StepFailed(AssertionError):
    """A step's result or Cooked's requests did not match; the message is the whole report."""


# --- the parsed model -----------------------------------------------------------------------------

PathTokens: TypeAlias = tuple[str | int, ...]


@dataclass(frozen=True)
class FakeAction:
    """One switch on the fake Cooked; ``argument`` is already validated for ``name``."""

    name: str
    argument: Any = None


@dataclass(frozen=True)
class RequestExpectation:
    """One request Cooked should have received; unset parts are not compared."""

    method: str
    path: str
    status: int | None = None
    query: Mapping[str, Any] | None = None
    json: Any = None
    has_json: bool = False
    headers: Mapping[str, str | None] | None = None


@dataclass(frozen=True)
class CookedExpectation:
    requests: tuple[RequestExpectation, ...] | None = None
    count: int | None = None
    logins: int | None = None
    with_logins: bool = False


@dataclass(frozen=True)
class CallStep:
    number: int
    tool: str
    arguments: Mapping[str, Any]
    error: bool = False
    note: str | None = None
    text_contains: tuple[str, ...] = ()
    text_excludes: tuple[str, ...] = ()
    output: Mapping[str, Any] = field(default_factory=dict)
    output_absent: tuple[str, ...] = ()
    output_len: Mapping[str, Any] = field(default_factory=dict)
    capture: Mapping[str, str] = field(default_factory=dict)
    cooked: CookedExpectation | None = None

    def title(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"step {self.number}: call {self.tool}{note}"


@dataclass(frozen=True)
class FakeStep:
    number: int
    actions: tuple[FakeAction, ...]
    note: str | None = None

    def title(self) -> str:
        names = ", ".join(action.name for action in self.actions)
        return f"step {self.number}: fake {names}"


Step: TypeAlias = CallStep | FakeStep


@dataclass(frozen=True)
class Scenario:
    source: str
    name: str
    description: str
    requirements: tuple[str, ...]
    steps: tuple[Step, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    setup: tuple[FakeAction, ...] = ()


# --- loading and validation -----------------------------------------------------------------------


def load_all(directory: Path = SCENARIO_DIR) -> list[Scenario]:
    """Every *.yaml in ``directory``, sorted by file name; duplicate names are an error."""
    scenarios = [load_scenario(path) for path in sorted(directory.glob("*.yaml"))]
    seen: dict[str, str] = {}
    for scenario in scenarios:
        if scenario.name in seen:
            raise ScenarioError(
                f"{scenario.source}: name {scenario.name!r} is already used by {seen[scenario.name]}"
            )
        seen[scenario.name] = scenario.source
    return scenarios


def load_scenario(path: Path) -> Scenario:
    source = _display(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{source}: not valid YAML: {_one_line(str(exc))}") from None
    return parse_scenario(data, source)


def parse_scenario(data: object, source: str) -> Scenario:
    """Validate one scenario document; ``source`` names it in every error message."""
    top = _Where(source)
    mapping = top.mapping(
        data, "the document", required=_REQUIRED_TOP_KEYS, allowed=_TOP_KEYS, extensions=True
    )
    name = top.string(mapping["name"], "name")
    if not _NAME.fullmatch(name):
        top.fail(f"name {name!r} must be lower-case letters, digits, '-' and '_'")
    description = top.string(mapping["description"], "description")
    requirements = tuple(top.strings(mapping["requirements"], "requirements", min_items=1))
    for rid in requirements:
        if rid not in REQUIREMENTS:
            top.fail(f"requirements: unknown requirement ID {rid!r}")
    env = top.string_map(mapping.get("env", {}), "env")
    setup = tuple(
        _fake_action(top, item, f"setup[{i}]")
        for i, item in enumerate(top.sequence(mapping.get("setup", []), "setup"))
    )
    raw_steps = top.sequence(mapping["steps"], "steps", min_items=1)
    captured: set[str] = set()
    steps: list[Step] = []
    for number, raw in enumerate(raw_steps, 1):
        where = _Where(source, f"step {number}")
        step = _step(where, number, raw, captured)
        steps.append(step)
        if isinstance(step, CallStep):
            captured.update(step.capture)
    return Scenario(source, name, description, requirements, tuple(steps), env, setup)


def _step(where: _Where, number: int, raw: object, captured: set[str]) -> Step:
    if isinstance(raw, Mapping) and "fake" in raw and "call" not in raw:
        mapping = where.mapping(raw, "a step", required=("fake",), allowed=_FAKE_KEYS)
        value = mapping["fake"]
        items = value if isinstance(value, list) else [value]
        if not items:
            where.fail("fake: give at least one action")
        actions = tuple(_fake_action(where, item, "fake") for item in items)
        note = where.optional_string(mapping.get("note"), "note")
        return FakeStep(number, actions, note)
    if isinstance(raw, Mapping) and "call" not in raw:
        unknown = [str(key) for key in raw if key not in _CALL_KEYS and key not in _FAKE_KEYS]
        hint = f"unknown key {unknown[0]!r}; " if unknown else ""
        where.fail(f"{hint}a step needs 'call' (a tool call) or 'fake' (a fake action)")
    mapping = where.mapping(raw, "a step", required=("call",), allowed=_CALL_KEYS)
    tool = where.string(mapping["call"], "call")
    if tool not in TOOL_NAMES:
        where.fail(f"call: unknown tool {tool!r} (tools: {', '.join(sorted(TOOL_NAMES))})")
    arguments = where.mapping(mapping.get("arguments", {}), "arguments")
    for key in arguments:
        if not isinstance(key, str):
            where.fail(f"arguments: key {key!r} must be a string")
    error = mapping.get("error", False)
    if not isinstance(error, bool):
        where.fail(f"error: must be true or false, not {error!r}")
    output = _path_map(where, mapping.get("output", {}), "output")
    output_len = _path_map(where, mapping.get("output_len", {}), "output_len")
    for path, expected in output_len.items():
        if not (isinstance(expected, int) and not isinstance(expected, bool)) and not _is_reference(expected):
            where.fail(f"output_len.{path}: must be a whole number, not {expected!r}")
    output_absent = tuple(where.strings(mapping.get("output_absent", []), "output_absent"))
    for path in output_absent:
        _check_path(where, path, "output_absent")
    capture: dict[str, str] = {}
    for name, path in where.mapping(mapping.get("capture", {}), "capture").items():
        if not isinstance(name, str) or not _IDENT.fullmatch(name):
            where.fail(f"capture: name {name!r} must be an identifier (letters, digits, '_')")
        capture[name] = where.string(path, f"capture.{name}")
        _check_path(where, capture[name], f"capture.{name}")
    cooked = _cooked(where, mapping["cooked"]) if "cooked" in mapping else None
    step = CallStep(
        number=number,
        tool=tool,
        arguments=dict(arguments),
        error=error,
        note=where.optional_string(mapping.get("note"), "note"),
        text_contains=tuple(where.strings(mapping.get("text_contains", []), "text_contains")),
        text_excludes=tuple(where.strings(mapping.get("text_excludes", []), "text_excludes")),
        output=output,
        output_absent=output_absent,
        output_len=output_len,
        capture=capture,
        cooked=cooked,
    )
    for key in ("arguments", "text_contains", "text_excludes", "output", "output_len", "cooked"):
        for reference in _references(mapping.get(key)):
            if reference.split(".")[0].split("[")[0] not in captured:
                where.fail(
                    f"{key}: {{{reference}}} refers to a capture no earlier step makes "
                    f"(captured so far: {', '.join(sorted(captured)) or 'none'})"
                )
    return step


def _cooked(where: _Where, raw: object) -> CookedExpectation:
    mapping = where.mapping(raw, "cooked", allowed=_COOKED_KEYS, key_prefix="cooked.")
    requests: tuple[RequestExpectation, ...] | None = None
    if "requests" in mapping:
        items = where.sequence(mapping["requests"], "cooked.requests")
        requests = tuple(_request(where, item, f"cooked.requests[{i}]") for i, item in enumerate(items))
    counts: dict[str, int | None] = {}
    for key in ("count", "logins"):
        value = mapping.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            where.fail(f"cooked.{key}: must be a whole number from 0, not {value!r}")
        counts[key] = value
    with_logins = mapping.get("with_logins", False)
    if not isinstance(with_logins, bool):
        where.fail(f"cooked.with_logins: must be true or false, not {with_logins!r}")
    return CookedExpectation(requests, counts["count"], counts["logins"], with_logins)


def _request(where: _Where, raw: object, key: str) -> RequestExpectation:
    if isinstance(raw, list):
        if len(raw) != 2 or not all(isinstance(part, str) for part in raw):
            where.fail(f"{key}: write [METHOD, path] or a mapping with method and path, not {raw!r}")
        method, path = raw
        raw = {"method": method, "path": path}
    mapping = where.mapping(
        raw, key, required=("method", "path"), allowed=_REQUEST_KEYS, key_prefix=f"{key}."
    )
    method = where.string(mapping["method"], f"{key}.method")
    if method not in METHODS:
        where.fail(f"{key}.method: {method!r} is not one of {', '.join(sorted(METHODS))}")
    path = where.string(mapping["path"], f"{key}.path")
    if not path.startswith("/"):
        where.fail(f"{key}.path: {path!r} must start with '/' (the query goes in 'query')")
    status = mapping.get("status")
    if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
        where.fail(f"{key}.status: must be an HTTP status number, not {status!r}")
    query = where.mapping(mapping["query"], f"{key}.query") if "query" in mapping else None
    headers = None
    if "headers" in mapping:
        headers = where.mapping(mapping["headers"], f"{key}.headers")
        for name, value in headers.items():
            if not isinstance(name, str) or (value is not None and not isinstance(value, str)):
                where.fail(f"{key}.headers.{name}: give a string value, or null for 'absent'")
        headers = {str(name).lower(): value for name, value in headers.items()}
    return RequestExpectation(method, path, status, query, mapping.get("json"), "json" in mapping, headers)


def _fake_action(where: _Where, raw: object, key: str) -> FakeAction:
    if isinstance(raw, str):
        name, argument = raw, None
    elif isinstance(raw, Mapping) and len(raw) == 1:
        ((name, argument),) = raw.items()
    else:
        where.fail(f"{key}: an action is a name or a one-key mapping {{name: argument}}, not {raw!r}")
    if name not in _FAKE_ACTIONS:
        where.fail(f"{key}: unknown fake action {name!r} (actions: {', '.join(sorted(_FAKE_ACTIONS))})")
    return FakeAction(name, _FAKE_ACTIONS[name].check(where, f"{key}.{name}", argument))


def _path_map(where: _Where, raw: object, key: str) -> dict[str, Any]:
    mapping = where.mapping(raw, key)
    for path in mapping:
        if not isinstance(path, str):
            where.fail(f"{key}: path {path!r} must be a string")
        _check_path(where, path, key)
    return {str(path): value for path, value in mapping.items()}


def _check_path(where: _Where, path: str, key: str) -> None:
    if not _PATH.fullmatch(path):
        where.fail(f"{key}: {path!r} is not a path like 'recipes[0].id' or 'draft.markdown'")


class _Where:
    """Builds errors that say where: ``<file>: step 3: <problem>``."""

    def __init__(self, source: str, step: str | None = None) -> None:
        self.prefix = f"{source}: {step}: " if step else f"{source}: "

    def fail(self, problem: str) -> NoReturn:
        raise ScenarioError(self.prefix + problem)

    def mapping(
        self,
        raw: object,
        what: str,
        *,
        required: Sequence[str] = (),
        allowed: Sequence[str] | None = None,
        key_prefix: str = "",
        extensions: bool = False,
    ) -> Mapping[Any, Any]:
        """``extensions``: also allow keys starting with ``x-`` (homes for YAML anchors)."""
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            self.fail(f"{what}: must be a mapping, not {type(raw).__name__}")
        if allowed is not None:
            for key in raw:
                if key not in allowed and not (extensions and str(key).startswith("x-")):
                    self.fail(f"unknown key '{key_prefix}{key}' (allowed: {', '.join(allowed)})")
        for key in required:
            if key not in raw:
                self.fail(f"missing key '{key_prefix}{key}'")
        return raw

    def sequence(self, raw: object, key: str, *, min_items: int = 0) -> list[Any]:
        if not isinstance(raw, list):
            self.fail(f"{key}: must be a list, not {type(raw).__name__}")
        if len(raw) < min_items:
            self.fail(f"{key}: needs at least {min_items} item{'s' if min_items != 1 else ''}")
        return raw

    def string(self, raw: object, key: str) -> str:
        if not isinstance(raw, str) or not raw.strip():
            self.fail(f'{key}: must be a non-empty string (quote numbers: "401"), not {raw!r}')
        return raw

    def optional_string(self, raw: object, key: str) -> str | None:
        return None if raw is None else self.string(raw, key)

    def strings(self, raw: object, key: str, *, min_items: int = 0) -> list[str]:
        items = self.sequence(raw, key, min_items=min_items)
        return [self.string(item, f"{key}[{i}]") for i, item in enumerate(items)]

    def string_map(self, raw: object, key: str) -> dict[str, str]:
        mapping = self.mapping(raw, key)
        for name, value in mapping.items():
            if not isinstance(name, str) or not isinstance(value, str):
                self.fail(f'{key}.{name}: must be a string (quote numbers: "1"), not {value!r}')
        return dict(mapping)


# --- fake actions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _FakeActionSpec:
    """How to validate an action's argument (at load time) and apply it (at run time)."""

    check: Callable[[_Where, str, Any], Any]
    apply: Callable[[FakeCooked, Any], None]


def _no_argument(where: _Where, key: str, argument: Any) -> None:
    if argument is not None:
        where.fail(f"{key}: takes no argument, got {argument!r}")


def _flag(where: _Where, key: str, argument: Any) -> bool:
    if argument is None:
        return True
    if not isinstance(argument, bool):
        where.fail(f"{key}: must be true or false, not {argument!r}")
    return argument


def _keywords(
    allowed: Sequence[str], required: Sequence[str] = ()
) -> Callable[[_Where, str, Any], dict[str, Any]]:
    def check(where: _Where, key: str, argument: Any) -> dict[str, Any]:
        mapping = where.mapping(argument, key, required=required, allowed=allowed, key_prefix=f"{key}.")
        return dict(mapping)

    return check


def _check_import_result(where: _Where, key: str, argument: Any) -> dict[str, Any]:
    mapping = _keywords(("url", "result"), ("url", "result"))(where, key, argument)
    if mapping["result"] not in IMPORT_RESULTS:
        where.fail(f"{key}.result: {mapping['result']!r} is not one of {', '.join(IMPORT_RESULTS)}")
    return mapping


def _check_fail_with(where: _Where, key: str, argument: Any) -> dict[str, Any]:
    allowed = ("kind", "method", "path", "path_regex", "times", "seconds")
    mapping = _keywords(allowed, ("kind",))(where, key, argument)
    if mapping["kind"] not in FAULT_KINDS:
        where.fail(f"{key}.kind: {mapping['kind']!r} is not one of {', '.join(sorted(FAULT_KINDS))}")
    return mapping


def _set_reject(fake: FakeCooked, value: Any) -> None:
    fake.reject_sessions = bool(value)


def _fail(fake: FakeCooked, argument: Any) -> None:
    fake.fail(**argument)


def _fail_with(fake: FakeCooked, argument: Any) -> None:
    options = dict(argument)
    fake.fail_with(options.pop("kind"), **options)


_FAKE_ACTIONS: Final[dict[str, _FakeActionSpec]] = {
    "expire_sessions": _FakeActionSpec(_no_argument, lambda fake, _: fake.expire_sessions()),
    "reject_sessions": _FakeActionSpec(_flag, _set_reject),
    "clear_faults": _FakeActionSpec(_no_argument, lambda fake, _: fake.clear_faults()),
    "set_import_result": _FakeActionSpec(
        _check_import_result, lambda fake, arg: fake.set_import_result(arg["url"], arg["result"])
    ),
    "fail": _FakeActionSpec(_keywords(("method", "path", "path_regex", "status", "body", "times")), _fail),
    "fail_with": _FakeActionSpec(_check_fail_with, _fail_with),
}


def apply_actions(fake: FakeCooked, actions: Sequence[FakeAction]) -> None:
    for action in actions:
        _FAKE_ACTIONS[action.name].apply(fake, action.argument)


# --- paths and templating -------------------------------------------------------------------------


class _Missing(LookupError):
    """A path that leads nowhere; the message says where it stopped."""


def _tokens(path: str) -> PathTokens:
    return tuple(name if name else int(index) for name, index in _PATH_TOKEN.findall(path))


def resolve(data: Any, path: str) -> Any:
    """The value at ``path`` (``a.b[0].c``) inside JSON-like ``data``, or raise _Missing."""
    current = data
    walked = ""
    for token in _tokens(path):
        if isinstance(token, int):
            if not isinstance(current, list) or not -len(current) <= token < len(current):
                size = f"a list of {len(current)}" if isinstance(current, list) else type(current).__name__
                raise _Missing(f"{walked or 'the root'} is {size}, so [{token}] does not exist")
            walked += f"[{token}]"
        else:
            if not isinstance(current, Mapping) or token not in current:
                keys = f"keys: {', '.join(map(str, current))}" if isinstance(current, Mapping) else ""
                what = keys or f"a {type(current).__name__}"
                raise _Missing(f"{walked or 'the root'} has no {token!r} ({what})")
            walked += f".{token}" if walked else token
        current = current[token]
    return current


def _is_reference(value: Any) -> bool:
    return isinstance(value, str) and _REFERENCE.fullmatch(value) is not None


def _references(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield from _REFERENCE.findall(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _references(key)
            yield from _references(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _references(item)


def render(value: Any, captures: Mapping[str, Any]) -> Any:
    """Replace references to captures (see the module docstring) anywhere inside ``value``."""
    if isinstance(value, str):
        whole = _REFERENCE.fullmatch(value)
        if whole:
            return resolve(captures, whole.group(1))
        return _REFERENCE.sub(lambda match: _as_text(resolve(captures, match.group(1))), value)
    if isinstance(value, Mapping):
        return {render(key, captures): render(item, captures) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [render(item, captures) for item in value]
    return value


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# --- running --------------------------------------------------------------------------------------


async def run_scenario(scenario: Scenario, connect: Connect, home: Path) -> None:
    """One journey against a fresh fake Cooked and a freshly started server process."""
    with FakeCooked() as fake:
        apply_actions(fake, scenario.setup)
        env = server_env(home, fake.base_url, login=SEED_LOGIN, password=SEED_PASSWORD, **scenario.env)
        failure: StepFailed | None = None
        async with connect(env) as client:
            try:
                await run_steps(scenario, fake, client)
            except StepFailed as exc:
                # Raised outside the client's task groups, so pytest shows the report
                # itself rather than nested ExceptionGroup tracebacks.
                failure = exc
        if failure is not None:
            raise StepFailed(str(failure)) from None


async def run_steps(scenario: Scenario, fake: FakeCooked, client: Client) -> None:
    captures: dict[str, Any] = {}
    for step in scenario.steps:
        if isinstance(step, FakeStep):
            apply_actions(fake, step.actions)
            continue
        await _run_call(scenario, step, fake, client, captures)


@dataclass
class _Outcome:
    """What one call produced, for checking and for the failure report."""

    arguments: Any
    result: types.CallToolResult | None = None
    text: str = ""
    output: Any = None
    first_request: int = 0
    problems: list[str] = field(default_factory=list)


async def _run_call(
    scenario: Scenario, step: CallStep, fake: FakeCooked, client: Client, captures: dict[str, Any]
) -> None:
    outcome = _Outcome(arguments=step.arguments, first_request=len(fake.requests))
    logins_before = fake.login_count
    try:
        outcome.arguments = render(step.arguments, captures)
        expected = _rendered_expectations(step, captures)
    except _Missing as exc:
        outcome.problems.append(f"a reference in the step cannot be filled in: {exc}")
        raise StepFailed(_report(scenario, step, fake, outcome)) from None
    try:
        result = await client.call_tool(step.tool, outcome.arguments)
    except Exception as exc:
        outcome.problems.append(f"the call itself failed: {type(exc).__name__}: {exc}")
        raise StepFailed(_report(scenario, step, fake, outcome)) from exc
    outcome.result = result
    outcome.text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    outcome.output = result.structured_content
    received = fake.requests[outcome.first_request :]
    outcome.problems += _check_result(step, expected, outcome)
    if step.cooked is not None:
        outcome.problems += _check_cooked(expected["cooked"], received, fake.login_count - logins_before)
    for name, path in step.capture.items():
        try:
            captures[name] = resolve(outcome.output, path)
        except _Missing as exc:
            outcome.problems.append(f"capture {name} from {path}: {exc}")
    if outcome.problems:
        raise StepFailed(_report(scenario, step, fake, outcome))


def _rendered_expectations(step: CallStep, captures: Mapping[str, Any]) -> dict[str, Any]:
    cooked = step.cooked
    if cooked is not None and cooked.requests is not None:
        cooked = CookedExpectation(
            tuple(
                RequestExpectation(
                    request.method,
                    render(request.path, captures),
                    request.status,
                    render(request.query, captures),
                    render(request.json, captures),
                    request.has_json,
                    render(request.headers, captures),
                )
                for request in cooked.requests
            ),
            cooked.count,
            cooked.logins,
            cooked.with_logins,
        )
    return {
        "text_contains": render(step.text_contains, captures),
        "text_excludes": render(step.text_excludes, captures),
        "output": render(step.output, captures),
        "output_len": render(step.output_len, captures),
        "cooked": cooked,
    }


def _check_result(step: CallStep, expected: Mapping[str, Any], outcome: _Outcome) -> list[str]:
    problems = []
    assert outcome.result is not None
    is_error = bool(outcome.result.is_error)
    if is_error != step.error:
        problems.append(f"expected {'an error' if step.error else 'success'}, got isError={is_error}")
    for needle in expected["text_contains"]:
        if str(needle) not in outcome.text:
            problems.append(f"text should contain {needle!r}")
    for needle in expected["text_excludes"]:
        if str(needle) in outcome.text:
            problems.append(f"text should not contain {needle!r}")
    for path, value in expected["output"].items():
        try:
            got = resolve(outcome.output, path)
        except _Missing as exc:
            problems.append(f"output {path}: expected {value!r}, but {exc}")
            continue
        if got != value:
            problems.append(f"output {path}: expected {value!r}, got {got!r}")
    for path in step.output_absent:
        try:
            got = resolve(outcome.output, path)
        except _Missing:
            continue
        problems.append(f"output {path}: should be absent, got {got!r}")
    for path, size in expected["output_len"].items():
        try:
            got = resolve(outcome.output, path)
        except _Missing as exc:
            problems.append(f"output_len {path}: {exc}")
            continue
        if not hasattr(got, "__len__") or len(got) != size:
            shown = len(got) if hasattr(got, "__len__") else f"a {type(got).__name__}"
            problems.append(f"output_len {path}: expected {size}, got {shown}")
    return problems


def _check_cooked(expected: CookedExpectation, received: Sequence[RecordedRequest], logins: int) -> list[str]:
    problems = []
    relevant = [r for r in received if expected.with_logins or not _is_login(r)]
    if expected.logins is not None and logins != expected.logins:
        problems.append(f"Cooked saw {logins} login(s) in this step, expected {expected.logins}")
    if expected.count is not None and len(relevant) != expected.count:
        problems.append(f"Cooked saw {len(relevant)} request(s) in this step, expected {expected.count}")
    if expected.requests is not None:
        wanted = [f"{r.method} {r.path}" for r in expected.requests]
        got = [f"{r.method} {r.path}" for r in relevant]
        if wanted != got:
            problems.append(f"Cooked requests in this step: expected {wanted}, got {got}")
        else:
            for i, (want, request) in enumerate(zip(expected.requests, relevant, strict=True)):
                problems += [
                    f"Cooked request {i} ({want.method} {want.path}): {p}" for p in _diff(want, request)
                ]
    return problems


def _diff(want: RequestExpectation, request: RecordedRequest) -> Iterator[str]:
    if want.status is not None and request.status != want.status:
        yield f"status {request.status}, expected {want.status}"
    if want.query is not None:
        got = {key: values[0] if len(values) == 1 else values for key, values in request.query.items()}
        wanted = {key: value if isinstance(value, list) else str(value) for key, value in want.query.items()}
        if got != wanted:
            yield f"query {got}, expected {wanted}"
    if want.has_json and request.json != want.json:
        yield f"JSON body {json.dumps(request.json)}, expected {json.dumps(want.json)}"
    for name, value in (want.headers or {}).items():
        got_header = request.headers.get(name)
        if value is None and got_header is not None:
            yield f"header {name} should be absent, got one"
        elif value is not None and got_header != value:
            yield f"header {name} is {got_header!r}, expected {value!r}"


def _is_login(request: RecordedRequest) -> bool:
    return request.method == "POST" and request.path == LOGIN_PATH


# --- the failure report ---------------------------------------------------------------------------

_MAX_BODY_CHARS = 300
_MAX_TEXT_LINES = 60


def _report(scenario: Scenario, step: CallStep, fake: FakeCooked, outcome: _Outcome) -> str:
    """Everything needed to see why a step failed without rerunning it."""
    lines = [f"{scenario.source}: {step.title()} failed:"]
    lines += [f"  - {problem}" for problem in outcome.problems]
    lines.append(f"call: {step.tool} {json.dumps(outcome.arguments, ensure_ascii=False, default=str)}")
    if outcome.result is not None:
        lines.append(f"isError: {bool(outcome.result.is_error)}")
        text_lines = outcome.text.splitlines() or [""]
        lines.append("result text:")
        lines += [f"  | {line}" for line in text_lines[:_MAX_TEXT_LINES]]
        if len(text_lines) > _MAX_TEXT_LINES:
            lines.append(f"  | ... {len(text_lines) - _MAX_TEXT_LINES} more lines")
        shown = json.dumps(outcome.output, indent=2, ensure_ascii=False) if outcome.output else "(none)"
        lines.append("structured output:")
        lines += [f"  {line}" for line in shown.splitlines()]
    lines.append("Cooked requests so far ('>' marks this step's):")
    for i, request in enumerate(fake.requests):
        mark = ">" if i >= outcome.first_request else " "
        lines.append(f" {mark} {_describe(request)}")
    return "\n".join(lines)


def _describe(request: RecordedRequest) -> str:
    query = "&".join(f"{key}={value}" for key, values in request.query.items() for value in values)
    target = f"{request.path}?{query}" if query else request.path
    text = f"{request.method} {target} -> {request.status or '?'}"
    if request.json is not None and not _is_login(request):  # a login body holds the password
        body = json.dumps(request.json, ensure_ascii=False)
        text += f" {body[:_MAX_BODY_CHARS]}{'...' if len(body) > _MAX_BODY_CHARS else ''}"
    return text


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _one_line(text: str) -> str:
    return " ".join(text.split())
