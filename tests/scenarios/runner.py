"""Agent journeys as data: load, validate and run tests/scenarios/*.yaml against the real server.

Why data: a journey (import a page, review the draft, save it, shop for it...) is a sequence of
tool calls whose later arguments come from earlier answers. Written as YAML, each journey reads
like the transcript an agent would produce, and the same file runs unchanged over every transport
against a fresh fake Cooked.

The file format is the pydantic models below (unknown keys are errors; top-level ``x-*`` keys are
homes for YAML anchors). A step is a tool ``call`` with expectations, or a ``fake`` action (also
allowed in ``setup``, applied before the server starts). Expectations:

- ``error`` (isError), ``text_contains`` / ``text_excludes`` (case-sensitive substrings);
- ``output`` (path -> value), ``output_absent`` (paths), ``output_len`` (path -> length), on the
  structured content; ``capture`` (name -> path) keeps a value for later steps;
- ``cooked``: what the fake received during the step: ``requests`` in order, each ``[METHOD,
  path]`` or a mapping that may also state ``status``, ``query`` (values as strings), ``json``
  (exact) and ``headers`` (lower-case name; null: absent); ``count``; ``logins``; ``with_logins``
  (``requests`` and ``count`` then include logins). Login bodies are never printed.

Paths are dotted keys with list indexes (``recipes[0].id``, ``product_groups[-1].aisle_id``).
A string that is exactly one reference (``"{draft.markdown}"``) is replaced by the captured value
itself; references inside a longer string by their text. Every reference must name a capture of
an earlier step, and every malformed file is refused on loading with a ScenarioError naming the
file, the step and the key: ``tests/scenarios/x.yaml: step 3: unknown key 'cal'``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal, TypeAlias

import mcp_types as types
import yaml
from generated_requirements import REQUIREMENTS
from mcp import Client
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    NonNegativeInt,
    StrictBool,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    model_validator,
)
from servers import server_env

from cooked_fake import FAULT_KINDS, FakeCooked, RecordedRequest
from cooked_mcp_generated.tools import TOOLS

SCENARIO_DIR: Final = Path(__file__).resolve().parent
ROOT: Final = SCENARIO_DIR.parent.parent
LOGIN_PATH: Final = "/api/public/login"

Connect: TypeAlias = Callable[[dict[str, str]], AbstractAsyncContextManager[Client]]
"""Starts cooked-mcp with this environment and yields a connected MCP client."""

_PATH_BODY = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[-?\d+\])*"
_PATH_TOKEN = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_]*)|\[(-?\d+)\]")
_REFERENCE = re.compile(r"\{(" + _PATH_BODY + r")\}")


class ScenarioError(Exception):
    """A scenario file that cannot be run as written; the message names file, step and key."""


class StepFailed(AssertionError):
    """A step's result or Cooked's requests did not match; the message is the whole report."""


# --- the file format ------------------------------------------------------------------------------


def _checked(check: Callable[[Any], bool], problem: str) -> AfterValidator:
    def validate(value: Any) -> Any:
        if not check(value):
            raise ValueError(problem.format(value=value))
        return value

    return AfterValidator(validate)


Text = Annotated[StrictStr, Field(min_length=1)]
DataPath = Annotated[
    StrictStr,
    _checked(lambda path: re.fullmatch(_PATH_BODY, path), "{value!r} is not a path like 'recipes[0].id'"),
]
Name = Annotated[StrictStr, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")]
Tool = Annotated[
    StrictStr, _checked(lambda tool: tool in {spec.name for spec in TOOLS}, "unknown tool {value!r}")
]
Requirement = Annotated[
    StrictStr, _checked(lambda rid: rid in REQUIREMENTS, "unknown requirement ID {value!r}")
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Request(_Strict):
    """One request Cooked should have received; parts left out are not compared."""

    method: Literal["GET", "POST", "PUT", "DELETE", "PATCH"]
    path: Annotated[StrictStr, Field(pattern="^/")]
    status: StrictInt | None = None
    query: dict[str, Any] | None = None
    json_body: Any = Field(None, alias="json")
    headers: dict[str, StrictStr | None] | None = None

    @model_validator(mode="before")
    @classmethod
    def _pair(cls, raw: Any) -> Any:
        """``[METHOD, path]`` is the short form."""
        if isinstance(raw, list):
            if len(raw) != 2:
                raise ValueError(f"write [METHOD, path] or a mapping with method and path, not {raw!r}")
            return {"method": raw[0], "path": raw[1]}
        return raw


class Cooked(_Strict):
    requests: list[Request] | None = None
    count: NonNegativeInt | None = None
    logins: NonNegativeInt | None = None
    with_logins: StrictBool = False


class Call(_Strict):
    call: Tool
    note: Text | None = None
    arguments: dict[str, Any] = {}
    error: StrictBool = False
    text_contains: list[StrictStr] = []
    text_excludes: list[StrictStr] = []
    output: dict[DataPath, Any] = {}
    output_absent: list[DataPath] = []
    output_len: dict[DataPath, StrictInt | StrictStr] = {}
    capture: dict[Annotated[StrictStr, Field(pattern=r"^[A-Za-z_]\w*$")], DataPath] = {}
    cooked: Cooked | None = None


class ImportResult(_Strict):
    url: Text
    result: Literal["saved", "draft", "fail"]


class Fail(_Strict):
    method: StrictStr | None = None
    path: StrictStr | None = None
    path_regex: StrictStr | None = None
    status: StrictInt = 500
    body: Any = None
    times: StrictInt | None = 1


class FailWith(_Strict):
    kind: Annotated[StrictStr, _checked(lambda kind: kind in FAULT_KINDS, "unknown fault kind {value!r}")]
    method: StrictStr | None = None
    path: StrictStr | None = None
    path_regex: StrictStr | None = None
    times: StrictInt | None = 1
    seconds: float = 5.0


#: Each fake action: how its argument is read, and what it does to the fake.
_FAKE_ACTIONS: Final[
    dict[str, tuple[type[BaseModel] | type[bool] | None, Callable[[FakeCooked, Any], None]]]
] = {
    "expire_sessions": (None, lambda fake, _: fake.expire_sessions()),
    "clear_faults": (None, lambda fake, _: fake.clear_faults()),
    "reject_sessions": (bool, lambda fake, on: setattr(fake, "reject_sessions", on)),
    "set_import_result": (ImportResult, lambda fake, arg: fake.set_import_result(arg.url, arg.result)),
    "fail": (Fail, lambda fake, arg: fake.fail(**arg.model_dump())),
    "fail_with": (FailWith, lambda fake, arg: fake.fail_with(**arg.model_dump())),
}


def _fake_action(raw: Any) -> tuple[str, Any]:
    """``name`` or ``{name: argument}``; a flag (``reject_sessions``) alone means true."""
    name, argument = (raw, None) if isinstance(raw, str) else next(iter(raw.items()), (None, None))
    if not isinstance(raw, str) and (not isinstance(raw, Mapping) or len(raw) != 1):
        raise ValueError(f"an action is a name or a one-key mapping {{name: argument}}, not {raw!r}")
    if name not in _FAKE_ACTIONS:
        raise ValueError(f"unknown fake action {name!r} (actions: {', '.join(sorted(_FAKE_ACTIONS))})")
    model, _ = _FAKE_ACTIONS[name]
    if model is None or model is bool:
        if argument is not None and (model is None or not isinstance(argument, bool)):
            raise ValueError(
                f"{name}: {'must be true or false' if model else 'takes no argument'}, not {argument!r}"
            )
        return name, argument is not False if model else None
    try:
        return name, model.model_validate(argument)
    except ValidationError as exc:
        raise ValueError(f"{name}.{_describe_error(exc.errors()[0])}") from None


FakeAction = Annotated[tuple[str, Any], BeforeValidator(_fake_action)]


class FakeStep(_Strict):
    fake: Annotated[list[FakeAction], BeforeValidator(lambda raw: raw if isinstance(raw, list) else [raw])]
    note: Text | None = None


def _step_kind(raw: Any) -> str:
    return "fake" if isinstance(raw, Mapping) and "fake" in raw and "call" not in raw else "call"


Step = Annotated[Annotated[Call, Tag("call")] | Annotated[FakeStep, Tag("fake")], Discriminator(_step_kind)]


class Scenario(_Strict):
    name: Name
    description: Text
    requirements: Annotated[list[Requirement], Field(min_length=1)]
    env: dict[str, StrictStr] = {}
    setup: list[FakeAction] = []
    steps: Annotated[list[Step], Field(min_length=1)]
    #: Where the scenario was read from, for messages (not a key of the file).
    source: Annotated[str, Field(exclude=True)] = ""


# --- loading --------------------------------------------------------------------------------------


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
    try:
        source = str(path.resolve().relative_to(ROOT))
    except ValueError:
        source = str(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{source}: not valid YAML: {' '.join(str(exc).split())}") from None
    return parse_scenario(data, source)


def parse_scenario(data: object, source: str) -> Scenario:
    """Validate one scenario document; ``source`` names it in every error message."""
    if not isinstance(data, Mapping):
        raise ScenarioError(f"{source}: the document: must be a mapping, not {type(data).__name__}")
    data = {key: value for key, value in data.items() if not str(key).startswith("x-")}
    if "source" in data:
        raise ScenarioError(f"{source}: unknown key 'source'")
    try:
        scenario = Scenario.model_validate(data).model_copy(update={"source": source})
    except ValidationError as exc:
        # Unknown keys first: a misspelt key also shows up as the missing one it was meant to be.
        first = min(exc.errors(), key=lambda error: error["type"] != "extra_forbidden")
        raise ScenarioError(f"{source}: {_describe_error(first)}") from None
    captured: set[str] = set()
    for number, step in enumerate(scenario.steps, 1):
        if isinstance(step, Call):
            checked = step.model_dump(by_alias=True, exclude={"call", "note", "capture", "output_absent"})
            unknown = [ref for ref in _references(checked) if _root(ref) not in captured]
            if unknown:
                raise ScenarioError(
                    f"{source}: step {number}: {{{unknown[0]}}} refers to a capture no earlier step makes "
                    f"(captured so far: {', '.join(sorted(captured)) or 'none'})"
                )
            captured.update(step.capture)
    return scenario


def _describe_error(error: Mapping[str, Any]) -> str:
    """``step 3: unknown key 'cooked.request'``, ``setup[0].set_import_result.result: ...``."""
    location = list(error["loc"])
    if "[key]" in location:  # a mapping's key: name the mapping, the message names the key
        location = location[: location.index("[key]") - 1]
    where = ""
    if location[:1] == ["steps"] and len(location) >= 2:
        where, location = f"step {int(location[1]) + 1}: ", location[3:]  # past the index and the tag
    key = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in location).lstrip(".")
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        return f"{where}unknown key '{key}'"
    if error["type"] == "missing":
        return f"{where}missing key '{key}'"
    shown = f" (got {error['input']!r})" if "input" in error and error["type"] != "value_error" else ""
    return f"{where}{key or ('the step' if where else 'the document')}: {message}{shown}"


# --- paths and templating -------------------------------------------------------------------------


class _Missing(LookupError):
    """A path that leads nowhere; the message says where it stopped."""


def _root(reference: str) -> str:
    return reference.split(".")[0].split("[")[0]


def resolve(data: Any, path: str) -> Any:
    """The value at ``path`` (``a.b[0].c``) inside JSON-like ``data``, or raise _Missing."""
    current, walked = data, ""
    for name, index in _PATH_TOKEN.findall(path):
        if not name:
            token = int(index)
            if not isinstance(current, list) or not -len(current) <= token < len(current):
                size = f"a list of {len(current)}" if isinstance(current, list) else type(current).__name__
                raise _Missing(f"{walked or 'the root'} is {size}, so [{token}] does not exist")
            walked, current = f"{walked}[{token}]", current[token]
        else:
            if not isinstance(current, Mapping) or name not in current:
                what = f"keys: {', '.join(map(str, current))}" if isinstance(current, Mapping) else ""
                raise _Missing(f"{walked or 'the root'} has no {name!r} ({what or type(current).__name__})")
            walked, current = f"{walked}.{name}" if walked else name, current[name]
    return current


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
        if whole := _REFERENCE.fullmatch(value):
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


def apply_actions(fake: FakeCooked, actions: Sequence[tuple[str, Any]]) -> None:
    for name, argument in actions:
        _FAKE_ACTIONS[name][1](fake, argument)


async def run_scenario(scenario: Scenario, connect: Connect, home: Path) -> None:
    """One journey against a fresh fake Cooked and a freshly started server process."""
    with FakeCooked() as fake:
        apply_actions(fake, scenario.setup)
        env = server_env(home, fake.base_url, **scenario.env)
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
    for number, step in enumerate(scenario.steps, 1):
        if isinstance(step, FakeStep):
            apply_actions(fake, step.fake)
        else:
            await _run_call(scenario, number, step, fake, client, captures)


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
    scenario: Scenario, number: int, step: Call, fake: FakeCooked, client: Client, captures: dict[str, Any]
) -> None:
    outcome = _Outcome(arguments=step.arguments, first_request=len(fake.requests))
    logins_before = fake.login_count

    def failed() -> StepFailed:
        return StepFailed(_report(scenario, number, step, fake, outcome))

    try:
        outcome.arguments = render(step.arguments, captures)
        # The expectations with every reference filled in (json_body under its file name, "json").
        stated = step.model_dump(by_alias=True, exclude_unset=True, exclude={"arguments"})
        expected = Call.model_validate(render(stated, captures))
    except _Missing as exc:
        outcome.problems.append(f"a reference in the step cannot be filled in: {exc}")
        raise failed() from None
    try:
        result = await client.call_tool(step.call, outcome.arguments)
    except Exception as exc:
        outcome.problems.append(f"the call itself failed: {type(exc).__name__}: {exc}")
        raise failed() from exc
    outcome.result = result
    outcome.text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
    outcome.output = result.structured_content
    outcome.problems += _check_result(expected, outcome)
    if expected.cooked is not None:
        received = fake.requests[outcome.first_request :]
        outcome.problems += _check_cooked(expected.cooked, received, fake.login_count - logins_before)
    for name, path in step.capture.items():
        try:
            captures[name] = resolve(outcome.output, path)
        except _Missing as exc:
            outcome.problems.append(f"capture {name} from {path}: {exc}")
    if outcome.problems:
        raise failed()


def _check_result(expected: Call, outcome: _Outcome) -> Iterator[str]:
    assert outcome.result is not None
    is_error = bool(outcome.result.is_error)
    if is_error != expected.error:
        yield f"expected {'an error' if expected.error else 'success'}, got isError={is_error}"
    yield from (f"text should contain {n!r}" for n in expected.text_contains if n not in outcome.text)
    yield from (f"text should not contain {n!r}" for n in expected.text_excludes if n in outcome.text)
    for path, value in expected.output.items():
        try:
            got = resolve(outcome.output, path)
        except _Missing as exc:
            yield f"output {path}: expected {value!r}, but {exc}"
            continue
        if got != value:
            yield f"output {path}: expected {value!r}, got {got!r}"
    for path in expected.output_absent:
        with suppress(_Missing):
            yield f"output {path}: should be absent, got {resolve(outcome.output, path)!r}"
    for path, size in expected.output_len.items():
        try:
            got = resolve(outcome.output, path)
        except _Missing as exc:
            yield f"output_len {path}: {exc}"
            continue
        if not hasattr(got, "__len__") or len(got) != size:
            yield f"output_len {path}: expected {size}, got {len(got) if hasattr(got, '__len__') else type(got).__name__}"


def _check_cooked(expected: Cooked, received: Sequence[RecordedRequest], logins: int) -> Iterator[str]:
    relevant = [r for r in received if expected.with_logins or not _is_login(r)]
    if expected.logins is not None and logins != expected.logins:
        yield f"Cooked saw {logins} login(s) in this step, expected {expected.logins}"
    if expected.count is not None and len(relevant) != expected.count:
        yield f"Cooked saw {len(relevant)} request(s) in this step, expected {expected.count}"
    if expected.requests is None:
        return
    wanted = [f"{r.method} {r.path}" for r in expected.requests]
    got = [f"{r.method} {r.path}" for r in relevant]
    if wanted != got:
        yield f"Cooked requests in this step: expected {wanted}, got {got}"
        return
    for i, (want, request) in enumerate(zip(expected.requests, relevant, strict=True)):
        yield from (f"Cooked request {i} ({want.method} {want.path}): {p}" for p in _diff(want, request))


def _diff(want: Request, request: RecordedRequest) -> Iterator[str]:
    if want.status is not None and request.status != want.status:
        yield f"status {request.status}, expected {want.status}"
    if want.query is not None:
        got = {key: values[0] if len(values) == 1 else values for key, values in request.query.items()}
        wanted = {key: value if isinstance(value, list) else str(value) for key, value in want.query.items()}
        if got != wanted:
            yield f"query {got}, expected {wanted}"
    if "json_body" in want.model_fields_set and request.json != want.json_body:
        yield f"JSON body {json.dumps(request.json)}, expected {json.dumps(want.json_body)}"
    for name, value in (want.headers or {}).items():
        got_header = request.headers.get(name.lower())
        if value is None and got_header is not None:
            yield f"header {name} should be absent, got one"
        elif value is not None and got_header != value:
            yield f"header {name} is {got_header!r}, expected {value!r}"


def _is_login(request: RecordedRequest) -> bool:
    return request.method == "POST" and request.path == LOGIN_PATH


# --- the failure report ---------------------------------------------------------------------------

_MAX_BODY_CHARS = 300
_MAX_TEXT_LINES = 60


def _report(scenario: Scenario, number: int, step: Call, fake: FakeCooked, outcome: _Outcome) -> str:
    """Everything needed to see why a step failed without rerunning it."""
    note = f" ({step.note})" if step.note else ""
    lines = [f"{scenario.source}: step {number}: call {step.call}{note} failed:"]
    lines += [f"  - {problem}" for problem in outcome.problems]
    lines.append(f"call: {step.call} {json.dumps(outcome.arguments, ensure_ascii=False, default=str)}")
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
        lines.append(f" {'>' if i >= outcome.first_request else ' '} {_describe(request)}")
    return "\n".join(lines)


def _describe(request: RecordedRequest) -> str:
    query = "&".join(f"{key}={value}" for key, values in request.query.items() for value in values)
    text = (
        f"{request.method} {f'{request.path}?{query}' if query else request.path} -> {request.status or '?'}"
    )
    if request.json is not None and not _is_login(request):  # a login body holds the password
        body = json.dumps(request.json, ensure_ascii=False)
        text += f" {body[:_MAX_BODY_CHARS]}{'...' if len(body) > _MAX_BODY_CHARS else ''}"
    return text
