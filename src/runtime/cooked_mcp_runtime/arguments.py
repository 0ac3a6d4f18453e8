"""The one validation step between a client's JSON arguments and a handler.

A tool with a mode parameter (read's target, save_recipe's source, change_shopping_list's
action) has one generated model per mode, holding only that mode's parameters. The
served inputSchema stays one flat object (strict clients reject a top-level oneOf), so
what a flat schema cannot say is enforced here, from rules generated out of the table:

- the mode value picks the model; an unknown or missing one names the allowed values;
- a parameter the mode does not use is dropped when its value is null or its declared
  default (clients that fill in every property send those), and refused otherwise;
- null for a parameter the mode uses keeps its meaning where the schema allows null,
  counts as left out where the parameter is optional, and is refused where it is required;
- an integer sent as a numeric string ("5") is read as that integer, as LLMs often do.

Everything else wrong is reported, one clause per parameter, before any handler runs.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

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

    ``requires_one_of`` lists, per mode, parameters of which at least one must be given
    (update_item with nothing to change would write the same values back); ``hints`` adds,
    per mode and parameter, the sentence an agent needs to recover from a problem with it.
    """

    param: str
    requires: Mapping[str, tuple[str, ...]]
    accepts: Mapping[str, tuple[str, ...]]
    requires_one_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hints: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

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
    parameters: tuple[str, ...]
    #: Mode value -> the model of that mode; a tool without modes has one model under "".
    models: Mapping[str, type[BaseModel]]
    modes: ModeRules | None = None
    defaults: Mapping[str, object] = field(default_factory=dict)
    integers: frozenset[str] = frozenset()
    nullable: frozenset[str] = frozenset()
    #: What a parameter with a pattern must look like, in words (never the regular expression).
    pattern_hints: Mapping[str, str] = field(default_factory=dict)

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
            value = int(raw) if name in self.integers and _is_numeric(raw) else raw
            used = model.model_fields.get(name)
            if used is None:
                if value is None or _same(value, self.defaults.get(name, _ABSENT)):
                    continue
                problems[name] = self._unused(mode, name)
            elif value is None and name not in self.nullable:
                if used.is_required():
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
                if len(shown) <= _MAX_SHOWN_VALUE:
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


_ABSENT = object()


def _is_numeric(value: object) -> bool:
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
