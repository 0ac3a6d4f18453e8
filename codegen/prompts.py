"""Reads the prompt table (features/prompts.yaml) and checks its texts against the tool table.

A journey's steps tell the agent which tools to call with which arguments; checked here, a
renamed tool, parameter or enum value fails the build instead of leaving a prompt that calls
something that does not exist. The rule is in the table's header comment.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .spec import Table, Tool, check_citations, child_mapping, only_keys, required_text
from .yaml_lines import Located, SpecError, load

#: A word that can only be a name of the tool table: snake_case with at least one underscore.
SNAKE = re.compile(r"^[a-z]+(?:_[a-z]+)+$")
PAIR = re.compile(r"^(\w+)=(\w+)$")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str
    required: bool
    recipe: bool
    missing: str
    ask: str


@dataclass(frozen=True)
class Journey:
    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]
    request: str
    steps: str
    changes_account: bool


@dataclass(frozen=True)
class _Names:
    """What a journey's text may name, gathered once from the tool table for every text checked."""

    tools: dict[str, Tool]
    known: frozenset[str]

    @classmethod
    def of(cls, table: Table) -> _Names:
        tools = {t.name: t for t in table.tools}
        known = {*tools, *(f.name for t in table.types for f in t.fields)}
        for t in table.tools:
            known |= (
                {p.name for p in t.params}
                | {v for p in t.params for v in p.enum}
                | {f.name for f in t.output}
            )
        return cls(tools, frozenset(known))


@dataclass(frozen=True)
class Prompts:
    steps_heading: str
    journeys: tuple[Journey, ...]


def load_prompts(path: Path, table: Table, requirement_ids: set[str]) -> Prompts:
    """The prompt table at ``path``, its texts checked against the tool table."""
    if not path.exists():
        raise SpecError(path, None, "the prompt table is missing: codegen reads it beside the tool table")
    doc = load(path)
    only_keys(doc, {"steps_heading", "implements", "prompts"})
    journeys_map = child_mapping(doc, "prompts")
    names = _Names.of(table)
    journeys = tuple(_journey(str(name), body, journeys_map, names) for name, body in journeys_map.items())
    check_citations(doc, requirement_ids)
    return Prompts(required_text(doc, "steps_heading"), journeys)


def _journey(name: str, body: Any, parent: Located, names: _Names) -> Journey:
    if not isinstance(body, Located):
        raise parent.error(name, f"prompt {name} must be a mapping")
    only_keys(
        body, {"title", "description", "implements", "changes_account", "arguments", "request", "steps"}
    )
    arguments_map = child_mapping(body, "arguments")
    arguments = tuple(_argument(str(a), abody, arguments_map) for a, abody in arguments_map.items())
    # implements: extensions.PROMPTS.3
    required = [a.name for a in arguments if a.required]
    if len(required) > 1:
        raise body.error(
            "arguments", f"prompt {name}: at most one argument may be required, not {', '.join(required)}"
        )
    placeholders = {a.name for a in arguments} | {f"{a.name}_ask" for a in arguments}
    texts = {key: required_text(body, key) for key in ("request", "steps")}
    for key in texts:
        _check_text(name, body, key, placeholders, names)
    return Journey(
        name=name,
        title=required_text(body, "title"),
        description=required_text(body, "description"),
        arguments=arguments,
        request=texts["request"],
        steps=texts["steps"],
        changes_account=_flag(body, "changes_account", True),
    )


def _argument(name: str, body: Any, parent: Located) -> PromptArgument:
    if not isinstance(body, Located):
        raise parent.error(name, f"argument {name} must be a mapping")
    only_keys(body, {"description", "required", "recipe", "missing", "ask"})
    return PromptArgument(
        name=name,
        description=required_text(body, "description"),
        required=_flag(body, "required", False),
        recipe=_flag(body, "recipe", False),
        missing=required_text(body, "missing") if "missing" in body else "",
        ask=required_text(body, "ask") if "ask" in body else "",
    )


def _flag(node: Located, key: str, default: bool) -> bool:
    value = node.get(key, default)
    if not isinstance(value, bool):
        raise node.error(key, f"{key!r} must be true or false")
    return value


def _check_text(prompt: str, body: Located, key: str, placeholders: set[str], vocabulary: _Names) -> None:
    """``{placeholders}`` name arguments; snake_case words are names of the tool table; each
    ``NAME=VALUE`` is a parameter and value of the tool named right before it."""

    def refuse(message: str) -> SpecError:
        return body.error(key, f"prompt {prompt}: {message}")

    text = body[key]
    try:
        fields = {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}
    except ValueError as exc:
        raise refuse(f"{exc} (write {{{{ or }}}} for a brace)") from None
    unknown = sorted(fields - placeholders)
    if unknown:
        allowed = ", ".join(f"{{{p}}}" for p in sorted(placeholders)) or "none"
        raise refuse(f"{{{unknown[0]}}} names no argument; it may use {allowed}")
    tools, known = vocabulary.tools, vocabulary.known
    names = ", ".join(tools)
    for line in PLACEHOLDER.sub(" ", text).splitlines():
        tool, gap, recent = None, 2, ["", ""]
        for raw in line.split():
            word = raw.strip(".,;:()'\"")
            pair = PAIR.match(word)
            if pair:
                if tool is None or gap > 1:
                    raise refuse(
                        f"{word} follows no tool: {' '.join(recent).strip()!r} names none of {names}"
                    )
                name, value = pair.groups()
                param = tool.params_by_name.get(name)
                if param is None:
                    raise refuse(
                        f"{tool.name} has no parameter {name!r}; it takes {', '.join(tool.params_by_name)}"
                    )
                if param.enum and value not in param.enum:
                    raise refuse(
                        f"{value!r} is no {name} of {tool.name}; it is one of {', '.join(param.enum)}"
                    )
                gap = 0
            elif word in tools:
                tool, gap = tools[word], 0
            elif SNAKE.match(word) and word not in known:
                raise refuse(
                    f"{word!r} is no tool, parameter, value or field of the tool table; tools: {names}"
                )
            else:
                gap += 1
            recent = [recent[1], word]
