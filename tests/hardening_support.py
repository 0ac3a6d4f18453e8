"""Shared pieces of the hardening suites: the tool operations, result checks and the run's figures.

Imported by name (test folders are not packages). The figures every suite records end up in
build/hardening.json at the end of the run, so SECURITY.md can quote numbers a real run
produced instead of numbers someone typed.
"""

from __future__ import annotations

import json
import shlex
import ssl
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import mcp_types as types
from canaries import spellings
from mcp import Client, StdioServerParameters
from servers import COOKED_MCP
from sessions import cooked_session, text_of

from cooked_fake import DRAFT_ID, SEED_USERNAME, FakeCooked

ROOT = Path(__file__).resolve().parents[1]
FIGURES_FILE = ROOT / "build" / "hardening.json"
LOGIN_PATH = "/api/public/login"

#: No tool error may be longer than this: an agent's context is not a place for proxy pages.
MAX_ERROR_CHARS = 1000


# --- the run's figures -----------------------------------------------------------------------


@dataclass
class Figures:
    """Counters per suite; thread-safe because hypothesis and the fake run on other threads."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, suite: str, key: str, n: int = 1) -> None:
        with self._lock:
            self.counts.setdefault(suite, Counter())[key] += n

    def note(self, key: str, value: Any) -> None:
        with self._lock:
            self.notes[key] = value

    def write(self, path: Path = FIGURES_FILE) -> None:
        """Merge into the file so a partial run keeps the other suites' last figures."""
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            previous = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            previous = {}
        with self._lock:
            suites = {name: dict(sorted(counter.items())) for name, counter in self.counts.items()}
            notes = dict(self.notes)
        merged = {**previous.get("suites", {}), **suites}
        data = {"suites": dict(sorted(merged.items())), "notes": {**previous.get("notes", {}), **notes}}
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


FIGURES = Figures()


class Guard:
    """What the hardening package's network guard (hardening/conftest.py) refused, for assertions."""

    def __init__(self) -> None:
        self.refused: list[str] = []


# --- tool operations -------------------------------------------------------------------------

USER = f"/api/user/{SEED_USERNAME}"
IMPORT_URL = "https://example.org/recipes/hardening-stew"
DRAFT_URL = "https://example.org/recipes/hardening-draft-stew"


@dataclass(frozen=True)
class Operation:
    """One tool call and the one Cooked request of it that a fault is aimed at.

    ``label`` is ``tool:mode@step`` when a call makes more than one request and the step
    matters. ``path_regex`` (matched against the raw path) is used when the path is only
    known at run time (a fresh draft ID).
    """

    label: str
    tool: str
    arguments: dict[str, Any]
    method: str
    path: str | None = None
    path_regex: str | None = None

    @property
    def changes(self) -> bool:
        """Whether the aimed request asks Cooked to change the account (so a lost answer is ambiguous)."""
        return self.method != "GET" and self.path not in (LOGIN_PATH, "/api/recipes/preview")

    def aim(self) -> dict[str, Any]:
        """Keyword arguments for fake.fail / fake.fail_with that hit exactly this request."""
        return {"method": self.method, "path": self.path, "path_regex": self.path_regex}


OPERATIONS: tuple[Operation, ...] = (
    Operation("read:recipes", "read", {"target": "recipes"}, "GET", f"{USER}/recipes"),
    Operation(
        "read:recipes+query",
        "read",
        {"target": "recipes", "query": "soup"},
        "GET",
        "/api/user/recipes/search",
    ),
    Operation("read:recipe", "read", {"target": "recipe", "recipe_id": "r-0001"}, "GET", "/api/saved/r-0001"),
    Operation("read:shopping_list", "read", {"target": "shopping_list"}, "GET", f"{USER}/shopping-list"),
    Operation(
        "preview_recipe_text",
        "preview_recipe_text",
        {"title": "Stew", "text": "2 carrots\n1 onion\nSimmer."},
        "POST",
        "/api/recipes/preview",
    ),
    Operation(
        "save_recipe:raw_text@preview",
        "save_recipe",
        {"source": "raw_text", "title": "Stew", "text": "2 carrots\n1 onion\nSimmer."},
        "POST",
        "/api/recipes/preview",
    ),
    Operation(
        "save_recipe:raw_text@save",
        "save_recipe",
        {"source": "raw_text", "title": "Stew", "text": "2 carrots\n1 onion\nSimmer."},
        "POST",
        "/api/recipes",
    ),
    Operation(
        "save_recipe:prepared",
        "save_recipe",
        {"source": "prepared", "title": "Stew", "markdown": "## Ingredients\n- 2 carrots", "portions": 2},
        "POST",
        "/api/recipes",
    ),
    Operation(
        "save_recipe:url@import", "save_recipe", {"source": "url", "url": IMPORT_URL}, "POST", "/api/new"
    ),
    Operation(
        "save_recipe:url@draft",
        "save_recipe",
        {"source": "url", "url": DRAFT_URL},
        "GET",
        path_regex=r"^/api/extract/[^/]+$",
    ),
    Operation(
        "save_recipe:draft",
        "save_recipe",
        {"source": "draft", "draft_id": DRAFT_ID, "markdown": "## Ingredients\n- 1 egg", "portions": None},
        "POST",
        f"/api/extract/{DRAFT_ID}/save",
    ),
    Operation(
        "save_recipe:existing",
        "save_recipe",
        {"source": "existing", "recipe_id": "r-0001", "markdown": "## Ingredients\n- 5 eggs", "portions": 3},
        "PUT",
        "/api/saved/r-0001",
    ),
    Operation("delete_recipe", "delete_recipe", {"recipe_id": "r-0001"}, "DELETE", "/api/saved/r-0001"),
    Operation(
        "change_shopping_list:add",
        "change_shopping_list",
        {"action": "add", "ingredients": "2 onions\n1 lemon"},
        "POST",
        f"{USER}/shopping-list/ingredients",
    ),
    Operation(
        "change_shopping_list:update_item@read",
        "change_shopping_list",
        {"action": "update_item", "product_group_id": "pg-01", "name": "Tomatoes, tinned"},
        "GET",
        f"{USER}/shopping-list",
    ),
    Operation(
        "change_shopping_list:update_item@write",
        "change_shopping_list",
        {"action": "update_item", "product_group_id": "pg-01", "name": "Tomatoes, tinned"},
        "PUT",
        f"{USER}/shopping-list/product-groups/pg-01",
    ),
    Operation(
        "change_shopping_list:replace_selection",
        "change_shopping_list",
        {"action": "replace_selection", "product_group_ids": ["pg-01"]},
        "PUT",
        f"{USER}/shopping-list/selected",
    ),
    Operation(
        "change_shopping_list:add_selection@read",
        "change_shopping_list",
        {"action": "add_selection", "product_group_ids": ["pg-01"]},
        "GET",
        f"{USER}/shopping-list",
    ),
    Operation(
        "change_shopping_list:add_selection@write",
        "change_shopping_list",
        {"action": "add_selection", "product_group_ids": ["pg-01"]},
        "PUT",
        f"{USER}/shopping-list/selected",
    ),
    Operation(
        "change_shopping_list:remove_selection@write",
        "change_shopping_list",
        {"action": "remove_selection", "product_group_ids": ["pg-02"]},
        "PUT",
        f"{USER}/shopping-list/selected",
    ),
    Operation(
        "change_shopping_list:remove",
        "change_shopping_list",
        {"action": "remove", "product_group_ids": ["pg-01"]},
        "POST",
        f"{USER}/shopping-list/remove",
    ),
    Operation(
        "change_shopping_list:clear",
        "change_shopping_list",
        {"action": "clear"},
        "DELETE",
        f"{USER}/shopping-list",
    ),
    # Any tool's first call logs in; a fault there must be just as recoverable.
    Operation("login (via read:shopping_list)", "read", {"target": "shopping_list"}, "POST", LOGIN_PATH),
)

TOOL_NAMES = ("read", "preview_recipe_text", "save_recipe", "delete_recipe", "change_shopping_list")
assert {op.tool for op in OPERATIONS} == set(TOOL_NAMES)


# --- calling and checking --------------------------------------------------------------------


def error_text(result: types.CallToolResult) -> str:
    """The text of a tool error, after the checks every tool error must pass."""
    text = text_of(result)
    assert result.is_error, f"expected a tool error, got: {text[:300]}"
    assert text, "a tool error must say something"
    assert len(text) <= MAX_ERROR_CHARS, f"tool error of {len(text)} chars: {text[:200]}…"
    assert "Traceback" not in text and "<html" not in text.lower()
    # The dispatcher's catch-all: an exception no handler expected, i.e. a bug, not a handled failure.
    assert "failed inside cooked-mcp" not in text, text
    return text


def recoverable_error(result: types.CallToolResult) -> str:
    """A tool error that tells the agent what to do next."""
    text = error_text(result)
    assert "Next step:" in text, f"no next step in: {text}"
    return text


def succeeded(result: types.CallToolResult) -> str:
    text = text_of(result)
    assert not result.is_error, f"expected success, got: {text[:500]}"
    return text


def api_paths(fake: FakeCooked) -> list[str]:
    """Raw paths of every request but login, as the fake received them."""
    return [request.path for request in fake.api_requests()]


def path_is_contained(raw_path: str) -> bool:
    """The path stays under /api/ after one round of percent-decoding, and no segment is a dot segment."""
    decoded = unquote(raw_path)
    if not (raw_path.startswith("/api/") and decoded.startswith("/api/")):
        return False
    return all(segment not in (".", "..") for segment in raw_path.split("/"))


# --- sessions --------------------------------------------------------------------------------

#: Building an SSL context (loading the CA bundle) costs ~0.2 s per CookedClient; the fake is
#: plain HTTP, so hundreds of sessions share one instead of each loading its own.
_SSL_CONTEXT = ssl.create_default_context()


def session(fake: FakeCooked, *, read_only_from: str | None = None, **client_options: Any) -> Any:
    """``cooked_session`` with the default httpx transport built on a shared SSL context."""
    transport = httpx.AsyncHTTPTransport(verify=_SSL_CONTEXT)
    return cooked_session(fake, read_only_from=read_only_from, transport=transport, **client_options)


# --- canaries --------------------------------------------------------------------------------


def find_canaries(outputs: dict[str, str], canaries: dict[str, str]) -> list[str]:
    """Every (canary, output) pair where some spelling of the canary shows up, counted in the figures."""
    leaks = [
        f"{name} in {where}"
        for where, text in outputs.items()
        for name, canary in canaries.items()
        if any(form in text for form in spellings(canary))
    ]
    FIGURES.add("secrets", "outputs_scanned", len(outputs))
    FIGURES.add("secrets", "characters_scanned", sum(len(text) for text in outputs.values()))
    FIGURES.add("secrets", "canary_checks", len(outputs) * len(canaries))
    FIGURES.add("secrets", "canaries_leaked", len(leaks))
    return leaks


def traced_stdio_client(env: dict[str, str], folder: Path, *args: str) -> tuple[Client, Path, Path]:
    """cooked-mcp over stdio with its raw stdout and stderr also kept in files.

    A shell pipeline tees stdout (so every byte the server wrote there can be checked to be
    JSON-RPC) and appends stderr to a log file. The MCP client kills the whole process group
    on exit, shell and tee included.
    """
    stdout, stderr = folder / "stdout.jsonl", folder / "stderr.log"
    script = f'"$0" "$@" 2>>{shlex.quote(str(stderr))} | tee -a {shlex.quote(str(stdout))}'
    params = StdioServerParameters(command="/bin/sh", args=["-c", script, COOKED_MCP, *args], env=env)
    return Client(params, read_timeout_seconds=30), stdout, stderr


def non_json_rpc_lines(stdout: str) -> list[str]:
    """Lines on stdout that are not one JSON-RPC 2.0 message each."""
    bad = []
    for line in stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            bad.append(line[:200])
            continue
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            bad.append(line[:200])
    return bad
