"""The one validation step between a client's JSON arguments and a handler.

A tool with a mode parameter (read's target, save_recipe's source, change_shopping_list's
action) has one generated model per mode, holding only that mode's parameters. The
served inputSchema stays one flat object (strict clients reject a top-level oneOf), so
what a flat schema cannot say is enforced here, from rules generated out of the table:

- the mode value picks the model; an unknown or missing one names the allowed values;
- null means "not given", for every parameter in every mode: strict-mode clients (every
  property required) send it for what they leave out. Only a parameter a mode requires and
  whose model allows null (save_recipe's portions: unknown) takes null as a value; any other
  required parameter refuses it;
- a parameter the mode does not use is dropped, too, when its value is the plainest of its
  type: "", [], false or its declared default (a strict model must put something in every
  property, and not every client sends null); any other value is refused, since it would
  mean something the mode ignores;
- an integer sent as a numeric string ("5") is read as that integer, as LLMs often do, and
  one sent as a number with a zero fraction (10.0) too: JSON Schema counts that as an integer,
  so a client that checked its arguments against the served schema may send it;
- a boolean sent as "true" or "false" and a list sent as its JSON text ('["pg-10"]') are read
  as that boolean and that list: the MCP Inspector 0.15 form sends every value of a
  ["T", "null"] parameter as a string. Every bound applies to the value read.

Everything else wrong is reported, one clause per parameter, before any handler runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import BaseModel, ValidationError

from .results import ToolError

_MAX_SHOWN_VALUE = 60
# Unknown parameter names and tool names come from the caller and may be megabytes long or hold
# line breaks; what an error repeats of them, and the error itself, stay bounded.
_MAX_SHOWN_NAME = 100
_MAX_SHOWN_UNKNOWN = 3
_MAX_SHOWN_PROBLEMS = 5
_MAX_PROBLEMS_CHARS = 800
# Digits enough for any bound in the table, few enough that int() stays cheap.
_NUMERIC_STRING = re.compile(r"\s*[+-]?\d{1,15}\s*")


class ArgumentError(ValueError):
    """Arguments that passed type checks but break a per-mode rule."""


class InvalidArguments(ToolError):
    """Arguments rejected before any handler ran; the message names every problem."""

    def __init__(self, message: str, parameters: Collection[str]) -> None:
        super().__init__(message)
        #: The parameters the message names (the mode parameter when the mode itself is wrong).
        self.parameters = tuple(parameters)


def shown_name(name: str) -> str:
    """A caller-supplied name quoted on one line, shortened past _MAX_SHOWN_NAME characters."""
    quoted = repr(name)
    return quoted if len(quoted) <= _MAX_SHOWN_NAME else quoted[: _MAX_SHOWN_NAME - 2] + "…" + quoted[-1]


@dataclass(frozen=True)
class ModeRules:
    """Which parameters each value of a tool's mode parameter requires or accepts.

    Read off the mode's models (``ModeRules.of``): a required field is required, any other
    accepted. ``requires_one_of`` lists, per mode, parameters of which at least one must be
    given (update_item with nothing to change would write the same values back); ``hints``
    adds, per mode and parameter, the sentence an agent needs to recover from a problem with it.
    """

    param: str
    #: Mode value -> the model of that mode, in the order of the mode parameter's enum.
    models: Mapping[str, type[BaseModel]]
    requires_one_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hints: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    requires: Mapping[str, tuple[str, ...]] = field(init=False)
    accepts: Mapping[str, tuple[str, ...]] = field(init=False)

    @classmethod
    def of(
        cls,
        arguments: Any,
        *,
        requires_one_of: Mapping[str, tuple[str, ...]] | None = None,
        hints: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ModeRules:
        """The rules of ``Annotated[ModelA | ModelB | ..., Field(discriminator=param)]``."""
        union, info = get_args(arguments)
        param = info.discriminator
        models = {get_args(model.model_fields[param].annotation)[0]: model for model in get_args(union)}
        return cls(param, models, requires_one_of or {}, hints or {})

    def __post_init__(self) -> None:
        used = {
            mode: [(name, f.is_required()) for name, f in model.model_fields.items() if name != self.param]
            for mode, model in self.models.items()
        }
        requires = {
            mode: tuple(name for name, required in fields if required) for mode, fields in used.items()
        }
        accepts = {
            mode: tuple(name for name, required in fields if not required) for mode, fields in used.items()
        }
        object.__setattr__(self, "requires", requires)
        object.__setattr__(self, "accepts", accepts)

    def check_one_of(self, mode: str, given: Collection[str]) -> None:
        """Called by the mode's model: a mode that changes something needs something to change."""
        names = self.requires_one_of.get(mode, ())
        if names and not set(names) & set(given):
            listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
            raise ArgumentError(
                f"{self.param} {mode!r} needs at least one field to change: {listed} "
                "(fields left out keep their current values)"
            )

    def hint(self, mode: str, name: str) -> str:
        return self.hints.get(mode, {}).get(name, "")


@dataclass(frozen=True)
class ArgumentRules:
    """Everything the validation step knows about one tool, generated from the table."""

    tool: str
    #: The served inputSchema: parameter names, types and defaults are read from it, not repeated.
    input_schema: Mapping[str, Any]
    #: Mode value -> the model of that mode; a tool without modes has one model under "".
    models: Mapping[str, type[BaseModel]]
    modes: ModeRules | None = None
    #: What a parameter with a pattern must look like, in words (never the regular expression).
    pattern_hints: Mapping[str, str] = field(default_factory=dict)
    parameters: tuple[str, ...] = field(init=False)
    integers: frozenset[str] = field(init=False)
    booleans: frozenset[str] = field(init=False)
    lists: frozenset[str] = field(init=False)
    #: Parameter -> the values that, for a mode not using it, mean "not given" besides null.
    blanks: Mapping[str, tuple[object, ...]] = field(init=False)

    def __post_init__(self) -> None:
        properties: Mapping[str, Mapping[str, Any]] = self.input_schema["properties"]
        types = {name: _types(schema) for name, schema in properties.items()}
        object.__setattr__(self, "parameters", tuple(properties))
        object.__setattr__(self, "integers", frozenset(n for n, t in types.items() if "integer" in t))
        object.__setattr__(self, "booleans", frozenset(n for n, t in types.items() if "boolean" in t))
        object.__setattr__(self, "lists", frozenset(n for n, t in types.items() if "array" in t))
        blanks = {
            name: tuple(_BLANKS[t] for t in types[name] if t in _BLANKS)
            + ((schema["default"],) if "default" in schema else ())
            for name, schema in properties.items()
        }
        object.__setattr__(self, "blanks", blanks)

    def validate(self, arguments: Mapping[str, Any] | None) -> BaseModel:
        """The mode's model for ``arguments``, or InvalidArguments naming every problem."""
        given = dict(arguments or {})
        problems: dict[str, str] = {}  # parameter -> what is wrong with it, in the order found
        unknown = [name for name in given if name not in self.parameters]
        if unknown:
            problems[unknown[0]] = self._unknown(unknown)
        mode, model = self._mode(given, problems)
        if model is None:
            raise InvalidArguments(self._message(problems), problems)
        cleaned: dict[str, Any] = {}
        for name, raw in given.items():
            if name in unknown:
                continue
            value = self._read(name, raw)
            used = model.model_fields.get(name)
            if used is None:
                if value is None or any(_same(value, blank) for blank in self.blanks[name]):
                    continue
                problems[name] = self._unused(mode, name)
            elif value is None and not used.is_required():
                continue
            elif value is None and type(None) not in get_args(used.annotation):
                problems[name] = f"{name} must not be null: it is required{self._when(mode)}"
            else:
                cleaned[name] = value
        try:
            parsed = model.model_validate(cleaned)
        except ValidationError as exc:
            for name, problem in self._describe(exc, mode):
                problems.setdefault(name, problem)
        if problems:
            raise InvalidArguments(self._message(problems), problems)
        return parsed

    def _read(self, name: str, raw: Any) -> Any:
        """An integer, boolean or list sent as a string, as that value; anything else unchanged."""
        if name in self.integers and _is_numeric(raw):
            return int(raw)
        if not isinstance(raw, str):
            return raw
        if name in self.booleans and raw in _BOOLEAN_TEXTS:
            return _BOOLEAN_TEXTS[raw]
        if name in self.lists and raw.lstrip().startswith("["):
            try:
                decoded = json.loads(raw)
            except (ValueError, RecursionError):
                return raw
            return decoded if isinstance(decoded, list) else raw
        return raw

    # --- the mode --------------------------------------------------------------------------------

    def _mode(self, given: Mapping[str, Any], problems: dict[str, str]) -> tuple[str, type[BaseModel] | None]:
        if self.modes is None:
            return "", self.models[""]
        param = self.modes.param
        value = given.get(param)
        if isinstance(value, str) and value in self.models:
            return value, self.models[value]
        # Only a call that gets the mode wrong pays for spelling out the allowed values.
        *others, last = self.models
        values = ", ".join(map(repr, others)) + f" or {last!r}"
        if value is None:
            problems[param] = f"{param} is required: one of {values}"
        else:
            shown = repr(value)
            got = f" (got {shown})" if len(shown) <= _MAX_SHOWN_VALUE else ""
            problems[param] = f"{param} must be one of {values}{got}"
        return "", None

    def _when(self, mode: str) -> str:
        return f" when {self.modes.param} is {mode!r}" if self.modes is not None else ""

    def _hinted(self, mode: str, name: str, problem: str) -> str:
        hint = self.modes.hint(mode, name) if self.modes is not None else ""
        return f"{problem}; {hint}" if hint else problem

    # --- problems, in words --------------------------------------------------------------------

    def _unknown(self, unknown: list[str]) -> str:
        names = ", ".join(shown_name(name) for name in unknown[:_MAX_SHOWN_UNKNOWN])
        more = len(unknown) - _MAX_SHOWN_UNKNOWN
        noun = "unknown parameter" if len(unknown) == 1 else "unknown parameters"
        return (
            f"{noun} {names}{f' and {more} more' if more > 0 else ''}; allowed: {', '.join(self.parameters)}"
        )

    def _unused(self, mode: str, name: str) -> str:
        return (
            self._hinted(mode, name, f"{name} is not used{self._when(mode)}") + "; remove it (or send null)"
        )

    def _describe(self, error: ValidationError, mode: str) -> list[tuple[str, str]]:
        """(parameter, problem) per pydantic error; a rule of the whole mode is under the mode parameter."""
        problems = []
        for item in error.errors(include_url=False):
            loc = item["loc"]
            name = str(loc[0]) if loc else (self.modes.param if self.modes is not None else "arguments")
            location = ".".join(str(part) for part in loc) or "arguments"
            ctx = item.get("ctx", {})
            if item["type"] == "missing":
                problem = f"{location} is required{self._when(mode)}"
            elif item["type"] == "value_error" and isinstance(ctx.get("error"), ArgumentError):
                problem = str(ctx["error"])
            else:
                problem = (
                    f"{location} {_in_words(item['type'], ctx, item['msg'], self.pattern_hints.get(name))}"
                )
                shown = repr(item.get("input"))
                short = len(shown) <= _MAX_SHOWN_VALUE
                wanted = _WANTED_TYPE.get(item["type"])
                if wanted is not None:  # name the JSON type that came: "got a string, not a list"
                    value = f": {shown}" if short else ""
                    problem += f" (got {_json_type(item.get('input'))}, not {wanted}{value})"
                elif short:
                    problem += f" (got {shown})"
            problems.append((name, self._hinted(mode, name, problem)))
        return problems

    def _message(self, by_parameter: Mapping[str, str]) -> str:
        """At most _MAX_SHOWN_PROBLEMS clauses and _MAX_PROBLEMS_CHARS characters, whatever was sent."""
        problems = list(by_parameter.values())
        hidden = len(problems) - _MAX_SHOWN_PROBLEMS
        text = "; ".join(problems[:_MAX_SHOWN_PROBLEMS]) + (
            f"; and {hidden} more problems" if hidden > 0 else ""
        )
        if len(text) > _MAX_PROBLEMS_CHARS:
            text = text[: _MAX_PROBLEMS_CHARS - 1] + "…"
        return f"Invalid arguments for {self.tool}: {text}. Nothing was sent to Cooked."


#: The plainest value of each JSON type: what a strict model fills a property it must not leave out with.
_BLANKS: dict[str, object] = {"string": "", "array": [], "boolean": False}


#: The texts a client that sends every value as a string uses for a boolean.
_BOOLEAN_TEXTS: dict[str, bool] = {"true": True, "false": False}

#: Pydantic's wrong-type errors -> the JSON type that was wanted, named beside the one that came.
_WANTED_TYPE: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "string_type": "a string",
    "list_type": "a list",
}


def _json_type(value: object) -> str:
    """The JSON type of a value as parsed from JSON, with its article."""
    match value:
        case None:
            return "null"
        case bool():
            return "a boolean"
        case int():
            return "an integer"
        case float():
            return "a number"
        case str():
            return "a string"
        case list() | tuple():
            return "a list"
        case dict():
            return "an object"
    return "a value of another type"


def _types(schema: Mapping[str, Any]) -> tuple[str, ...]:
    kind = schema.get("type", ())
    return (kind,) if isinstance(kind, str) else tuple(kind)


def _is_numeric(value: object) -> bool:
    if type(value) is float:
        return value.is_integer() and abs(value) < 1e15
    return isinstance(value, str) and _NUMERIC_STRING.fullmatch(value) is not None


def _same(value: object, default: object) -> bool:
    """Equal and of the same type: True is not the default 1."""
    return type(value) is type(default) and value == default


def _in_words(kind: str, ctx: Mapping[str, Any], message: str, pattern_hint: str | None) -> str:
    """What pydantic found wrong, said as what is wanted; regular expressions are never shown."""
    match kind:
        case "string_pattern_mismatch":
            return f"must be {pattern_hint or 'in the form its description gives'}"
        case "string_too_short":
            least = ctx.get("min_length", 1)
            return "must not be empty" if least == 1 else f"must be at least {least} characters long"
        case "string_too_long":
            return f"is too long: at most {ctx.get('max_length')} characters"
        case "too_short":
            return f"needs at least {ctx.get('min_length')} item(s)"
        case "too_long":
            return f"takes at most {ctx.get('max_length')} items"
        case "greater_than_equal":
            return f"must be at least {ctx.get('ge')}"
        case "less_than_equal":
            return f"must be at most {ctx.get('le')}"
        case "int_type" | "int_parsing" | "int_from_float":
            return "must be a whole number"
        case "bool_type" | "bool_parsing":
            return "must be true or false"
        case "string_type":
            return "must be a string"
        case "list_type":
            return "must be a list of strings"
    return f"is invalid: {message}"
