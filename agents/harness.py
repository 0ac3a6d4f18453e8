"""What every driver shares: the modes, strict filling, the fake's request log and the verdicts.

Standard library only: each driver runs in its library's own virtualenv (build/agents/NAME),
and imports this file by path. A driver supplies one thing, ``Library``: how the library
connects (stdio from the docs/agent-frameworks.md snippet as written, or HTTP with the bearer token), what
schema its own conversion gives each tool, and how its own call path calls one. ``run``
drives every mode with the plain arguments and again with the strict-filled ones, and checks
that Cooked received exactly the same requests.

To add a case (e.g. a slow import that a short client timeout gives up on), add a function
to CASES: it gets the connected library and the fake, and returns a problem or None.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import traceback
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parent.parent
#: The page whose snippets each driver runs as written.
SNIPPETS = ROOT / "docs" / "agent-frameworks.md"
LOGIN_PATH = "/api/public/login"
MARKDOWN = "## Ingredients\n- 2 eggs\n\n## Steps\n1. Scramble the eggs"
#: Stands for the URL of each import call: plain and strict calls import different pages, since
#: the server answers a repeated import of one URL from memory without asking Cooked again.
URL = "https://example.org/recipes/agents-{variant}"


@dataclass(frozen=True)
class Mode:
    tool: str
    label: str
    arguments: dict[str, Any]
    #: (method, path) of each request Cooked must get, logins left out; <new> is an ID Cooked made.
    requests: tuple[tuple[str, str], ...]


PG = "/api/user/alice/shopping-list/product-groups"
MODES: tuple[Mode, ...] = (
    Mode(
        "read",
        "target=recipes",
        {"target": "recipes", "query": "soup"},
        (("GET", "/api/user/recipes/search"),),
    ),
    Mode(
        "read", "target=recipe", {"target": "recipe", "recipe_id": "r-0001"}, (("GET", "/api/saved/r-0001"),)
    ),
    Mode(
        "read",
        "target=shopping_list",
        {"target": "shopping_list"},
        (("GET", "/api/user/alice/shopping-list"),),
    ),
    Mode(
        "preview_recipe_text",
        "preview",
        {"title": "Eggs", "text": "2 eggs\nScramble them."},
        (("POST", "/api/recipes/preview"),),
    ),
    Mode(
        "save_recipe",
        "source=raw_text",
        {"source": "raw_text", "title": "Eggs", "text": "2 eggs\nScramble them."},
        (("POST", "/api/recipes/preview"), ("POST", "/api/recipes")),
    ),
    Mode(
        "save_recipe",
        "source=prepared",
        {"source": "prepared", "title": "Eggs", "markdown": MARKDOWN, "portions": None},
        (("POST", "/api/recipes"),),
    ),
    Mode("save_recipe", "source=url", {"source": "url", "url": URL}, (("POST", "/api/new"),)),
    Mode(
        "save_recipe",
        "source=draft",
        {"source": "draft", "draft_id": "x-0001", "markdown": MARKDOWN, "portions": 2},
        (("POST", "/api/extract/x-0001/save"),),
    ),
    Mode(
        "save_recipe",
        "source=existing",
        {"source": "existing", "recipe_id": "r-0001", "markdown": MARKDOWN, "portions": 2},
        (("PUT", "/api/saved/r-0001"),),
    ),
    Mode("delete_recipe", "delete", {"recipe_id": "r-0005"}, (("DELETE", "/api/saved/r-0005"),)),
    Mode(
        "change_shopping_list",
        "action=add",
        {"action": "add", "ingredients": "4 eggs\n1 lemon"},
        (("POST", "/api/user/alice/shopping-list/ingredients"),),
    ),
    # A rename only: the strict call's null quantity, aisle_id and selected must keep them.
    Mode(
        "change_shopping_list",
        "action=update_item",
        {"action": "update_item", "product_group_id": "pg-01", "name": "Tomatoes"},
        (("GET", "/api/user/alice/shopping-list"), ("PUT", f"{PG}/pg-01")),
    ),
    Mode(
        "change_shopping_list",
        "action=replace_selection",
        {"action": "replace_selection", "product_group_ids": ["pg-01", "pg-03"]},
        (("PUT", "/api/user/alice/shopping-list/selected"),),
    ),
    Mode(
        "change_shopping_list",
        "action=add_selection",
        {"action": "add_selection", "product_group_ids": ["pg-05"]},
        (("GET", "/api/user/alice/shopping-list"), ("PUT", "/api/user/alice/shopping-list/selected")),
    ),
    Mode(
        "change_shopping_list",
        "action=remove_selection",
        {"action": "remove_selection", "product_group_ids": ["pg-01"]},
        (("GET", "/api/user/alice/shopping-list"), ("PUT", "/api/user/alice/shopping-list/selected")),
    ),
    Mode(
        "change_shopping_list",
        "action=remove",
        {"action": "remove", "product_group_ids": ["pg-06"]},
        (("POST", "/api/user/alice/shopping-list/remove"),),
    ),
    Mode(
        "change_shopping_list",
        "action=clear",
        {"action": "clear"},
        (("DELETE", "/api/user/alice/shopping-list"),),
    ),
)


class Library(Protocol):
    """One library's own conversion and call path, connected to one running cooked-mcp."""

    #: Tool name -> the parameter schema the library's conversion produced (its strict one when it
    #: has a strict mode), as JSON Schema: what a model is shown and must fill in.
    schemas: dict[str, dict[str, Any]]

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call through the library; the result as the library hands it to a model, or raise."""
        ...


# --- strict filling -----------------------------------------------------------------------------


def allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        (isinstance(kind, list) and "null" in kind)
        or kind == "null"
        or any(option.get("type") == "null" for option in schema.get("anyOf", []))
        or schema.get("nullable") is True
    )


def plainest(schema: dict[str, Any]) -> Any:
    """The plainest value of a property's type: what a strict model sends for 'nothing'."""
    if "default" in schema:
        return schema["default"]
    kinds = schema.get("type") or [o.get("type") for o in schema.get("anyOf", [])]
    kind = next(k for k in ([kinds] if isinstance(kinds, str) else kinds) if k != "null")
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}[kind]


def strict_filled(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Every property the converted schema has, the plain call's value or null / the plainest value."""
    filled = dict(arguments)
    for name, prop in schema.get("properties", {}).items():
        if name not in filled:
            filled[name] = None if allows_null(prop) else plainest(prop)
    return filled


# --- the fake Cooked ------------------------------------------------------------------------------


@dataclass
class Fake:
    url: str

    def post(self, action: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(  # noqa: S310 - the fake on 127.0.0.1
            f"{self.url}/_fake/{action}",
            data=json.dumps(body or {}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - 127.0.0.1 only
            return json.load(answer)

    def requests(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/_fake/requests", timeout=10) as answer:  # noqa: S310
            return list(json.load(answer)["requests"])


_ID = re.compile(r"(?<![\w-])[a-z]+-\d{2,}(?![\w-])")


def cooked_requests(fake: Fake, arguments: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """What Cooked got besides logins and the 401s that sent the server to log in: method, path,
    query and body, with IDs Cooked made in this call (not among the arguments) as <new>."""
    given = json.dumps(arguments)
    url = arguments.get("url")

    def same_words(text: str) -> str:
        if isinstance(url, str):
            text = text.replace(url, "<url>").replace(json.dumps(url)[1:-1], "<url>")
        return _ID.sub(lambda m: m.group(0) if m.group(0) in given else "<new>", text)

    return [
        (
            r["method"],
            same_words(r["path"]),
            same_words(json.dumps(r["query"], sort_keys=True)),
            same_words(r["body"]),
        )
        for r in fake.requests()
        if r["path"] != LOGIN_PATH and r["status"] != 401
    ]


# --- running ----------------------------------------------------------------------------------------


@dataclass
class Row:
    library: str
    transport: str
    case: str
    variant: str
    ok: bool
    detail: str = ""

    def line(self) -> str:
        return json.dumps(self.__dict__)


@dataclass
class Run:
    library: str
    transport: str
    fake: Fake
    rows: list[Row] = field(default_factory=list)

    def add(self, case: str, variant: str, problem: str | None) -> None:
        row = Row(self.library, self.transport, case, variant, problem is None, problem or "")
        self.rows.append(row)
        print(row.line(), flush=True)


async def drive_modes(run: Run, lib: Library) -> None:
    for mode in MODES:
        label = f"{mode.tool} {mode.label}"
        plain = _concrete(mode.arguments, f"{run.library}-{run.transport}-plain")
        strict_args = _concrete(mode.arguments, f"{run.library}-{run.transport}-strict")
        strict_args = strict_filled(lib.schemas[mode.tool], strict_args)
        sent: dict[str, list[tuple[str, str, str, str]]] = {}
        for variant, arguments in (("plain", plain), ("strict", strict_args)):
            run.fake.post("reset")
            try:
                await lib.call(mode.tool, arguments)
            except Exception as exc:
                run.add(label, variant, f"refused {json.dumps(arguments)[:200]}: {_short(exc)}")
                continue
            sent[variant] = cooked_requests(run.fake, arguments)
            wanted = [(m, p) for m, p in mode.requests]
            got = [(m, p) for m, p, _, _ in sent[variant]]
            if variant == "plain" and got != wanted:
                run.add(label, variant, f"Cooked got {got}, not {wanted}")
            elif variant == "strict" and "plain" in sent and sent["strict"] != sent["plain"]:
                run.add(label, variant, f"Cooked got {sent['strict']}, the plain call sent {sent['plain']}")
            else:
                run.add(label, variant, None)


#: How an error result opens (for libraries that hand the model the text and drop isError).
_FAILED = re.compile(
    r"^(Invalid arguments for \w+:|Cooked (rejected|failed)|The [\w -]+ request failed:|Nothing was (sent|changed)|"
    r"\w+ failed inside cooked-mcp|cooked-mcp could not)"
)


def succeeded(text: str) -> str:
    """``text``, or an exception when it is an error result in words."""
    if _FAILED.match(text):
        raise RuntimeError(text)
    return text


def _concrete(arguments: dict[str, Any], variant: str) -> dict[str, Any]:
    return {
        k: v.format(variant=variant) if isinstance(v, str) and v == URL else v for k, v in arguments.items()
    }


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text[:300]


#: Extra cases beyond the modes: name -> async (library, fake) -> problem or None.
CASES: dict[str, Callable[[Library, Fake], Awaitable[str | None]]] = {}


def readme_snippet(name: str) -> str:
    """The python block right after ``<!-- make agents: NAME -->`` in docs/agent-frameworks.md, exactly as written."""
    lines = SNIPPETS.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"<!-- make agents: {name} -->")
    fence = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```python"))
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[fence + 1 : end]) + "\n"


def run_snippet(name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"readme_{name.replace('-', '_')}"}
    exec(compile(readme_snippet(name), f"docs/agent-frameworks.md ({name})", "exec"), namespace)  # noqa: S102 - our docs
    return namespace


def main(library: str, connect: Callable[[argparse.Namespace], Any]) -> None:
    """``connect(args)``: an async context manager giving a Library for args.transport."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=("stdio", "http"), required=True)
    parser.add_argument("--fake", required=True)
    parser.add_argument("--url", help="cooked-mcp's HTTP endpoint")
    parser.add_argument("--token", help="its bearer token")
    args = parser.parse_args()
    run = Run(library, args.transport, Fake(args.fake))

    async def go() -> None:
        try:
            async with connect(args) as lib:
                run.add("connect and convert", "", None)
                await drive_modes(run, lib)
                for name, case in CASES.items():
                    run.fake.post("reset")
                    try:
                        run.add(name, "", await case(lib, run.fake))
                    except Exception as exc:
                        run.add(name, "", _short(exc))
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            run.add("connect and convert", "", _short(exc))

    asyncio.run(go())
    sys.exit(0 if all(row.ok for row in run.rows) else 1)
