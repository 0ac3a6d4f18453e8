"""The requirement map: from each requirement ID to the code that implements it and the tests that prove it.

Code says which requirements it implements with a comment on its own line
right above the def, class or statement it describes::

    # implements: recipes.SAVE.4, recipes.SAVE.5
    async def save_from_url(...):

The rows of features/tools.yaml and features/prompts.yaml that cite an ID under
``implements`` count as code too (the generated layer is rendered from them). docs/requirements.md is
rendered from both and from the collected tests; the gate checks that it is
current and that every annotation names a known ID, as it does for test
citations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from codegen.yaml_lines import Located, load

ROOT = Path(__file__).resolve().parent.parent
DOC_FILE = ROOT / "docs" / "requirements.md"
TABLE_FILES = (ROOT / "features" / "tools.yaml", ROOT / "features" / "prompts.yaml")
#: The seed's features (one file per feature, named after it); the rest are cooked-mcp's own.
SEED_FEATURES = frozenset(
    path.name.removesuffix(".feature.yaml")
    for path in (ROOT / "features" / "cooked-mcp").glob("*.feature.yaml")
)
# Hand-written code lives under src/ (but never in src/generated, which is output) and codegen/;
# the test network guard is code that implements the "tests do not contact Cooked" requirements.
CODE_ROOTS = (ROOT / "src", ROOT / "codegen", ROOT / "tests" / "netguard.py")
SKIPPED_DIRS = {ROOT / "src" / "generated"}
CODE_SUFFIXES = {".py", ".j2"}

ANNOTATION = re.compile(r"^\s*(?:#|\{#)\s*implements\s*:(?P<ids>.*?)(?:#\})?\s*$")
# "Implements recipes.SAVE.4" or "implement: ..." would be silently ignored; prose comments are not.
NEAR_MISS = re.compile(
    r"^\s*#\s*implement(?:s|ed)?\b(?!\s*:)\W*[a-z-]+\.[A-Z_]+\.\d|^\s*#\s*implement(?:ed)?\s*:", re.IGNORECASE
)
NAMED = re.compile(
    r"^\s*(?:async\s+def|def|class)\s+(?P<name>\w+)|^\s*(?P<var>[A-Za-z_][\w.]*)\s*(?::[^=]*)?="
)


class Requirement(Protocol):
    @property
    def feature(self) -> str: ...

    @property
    def group(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, order=True)
class Place:
    """One place in the code (or the tool table) that implements a requirement."""

    path: str  # relative to the repository root
    line: int
    name: str  # the def/class/variable, or the table row, found there; may be empty

    def markdown(self) -> str:
        label = f"{self.path}:{self.line}"
        link = f"[`{label}`](../{self.path}#L{self.line})"
        return f"{link} {self.name}".rstrip()


def scan_code(
    known: Mapping[str, Any], roots: Iterable[Path] = CODE_ROOTS
) -> tuple[dict[str, list[Place]], list[str]]:
    """Every ``# implements:`` annotation under ``roots``, and the mistakes found (``file:line: ...``)."""
    places: dict[str, list[Place]] = {}
    errors: list[str] = []
    files = (p for root in roots for p in ([root] if root.is_file() else root.rglob("*")))
    for path in sorted(p for p in files if _is_code(p)):
        for rid, place_or_error in _annotations(path, known):
            if isinstance(place_or_error, Place):
                places.setdefault(rid, []).append(place_or_error)
            else:
                errors.append(place_or_error)
    return places, errors


def _is_code(path: Path) -> bool:
    return (
        path.suffix in CODE_SUFFIXES
        and path.is_file()
        and not any(path.is_relative_to(d) for d in SKIPPED_DIRS)
        and "__pycache__" not in path.parts
    )


def _annotations(path: Path, known: Mapping[str, Any]) -> list[tuple[str, Place | str]]:
    lines = path.read_text("utf-8").splitlines()
    rel = _relative(path)
    found: list[tuple[str, Place | str]] = []
    pending: list[tuple[int, str]] = []  # (line, id) waiting for the statement they describe
    for number, text in enumerate(lines, 1):
        match = ANNOTATION.match(text)
        if match:
            ids = [i.strip() for i in match["ids"].split(",") if i.strip()]
            if not ids:
                found.append(("", f"{rel}:{number}: `implements:` names no requirement ID"))
            for rid in ids:
                if rid not in known:
                    found.append((rid, f"{rel}:{number}: implements unknown requirement {rid!r}"))
                else:
                    pending.append((number, rid))
            continue
        if NEAR_MISS.match(text):
            found.append(("", f"{rel}:{number}: write annotations as `# implements: feature.GROUP.id, ...`"))
            continue
        stripped = text.strip()
        if not pending or not stripped or stripped.startswith(("#", "@")):
            continue
        named = NAMED.match(text)
        name = (named["name"] or named["var"]) if named else ""
        for _, rid in pending:
            found.append((rid, Place(rel, number, name)))
        pending = []
    for number, rid in pending:
        found.append((rid, f"{rel}:{number}: `implements: {rid}` is not followed by any code"))
    return found


def scan_table(paths: Iterable[Path] = TABLE_FILES) -> dict[str, list[Place]]:
    """The table rows citing each ID under ``implements`` (the codegen already checked the IDs)."""
    places: dict[str, list[Place]] = {}
    for path in paths:
        _walk_table(load(path), (), _relative(path), places)
    return places


def _walk_table(node: Any, trail: tuple[str, ...], rel: str, places: dict[str, list[Place]]) -> None:
    if not isinstance(node, Located):
        return
    for key, value in node.items():
        if key == "implements":
            name = _row_name(trail)
            for rid in value or []:
                places.setdefault(rid, []).append(Place(rel, node.line_of(key), name))
        else:
            _walk_table(value, (*trail, str(key)), rel, places)


def _row_name(trail: tuple[str, ...]) -> str:
    """``tools.save_recipe.modes.url`` -> ``save_recipe mode url`` (a row a person can find in the table)."""
    parts = list(trail)
    if parts[:1] in (["tools"], ["prompts"]):
        parts = parts[1:]
    return " ".join(p for p in parts if p not in {"parameters"}).replace("modes", "mode")


def merge(*maps: Mapping[str, list[Place]]) -> dict[str, list[Place]]:
    merged: dict[str, list[Place]] = {}
    for places in maps:
        for rid, found in places.items():
            merged.setdefault(rid, []).extend(found)
    return {rid: sorted(set(found)) for rid, found in merged.items()}


def tests_by_requirement(
    citations: Mapping[str, list[str]], all_nodeids: Iterable[str]
) -> dict[str, list[str]]:
    """Per ID, its tests as ``file::test``, the most focused first (those citing the fewest IDs).

    A parametrised test lists its cases only when not all of them cite the ID.
    """
    cases: dict[str, int] = {}
    for nodeid in all_nodeids:
        base = nodeid.split("[", 1)[0]
        cases[base] = cases.get(base, 0) + 1
    breadth: dict[str, int] = {}  # how many IDs a test function cites, over all its cases
    for nodeids in citations.values():
        for base in {nodeid.split("[", 1)[0] for nodeid in nodeids}:
            breadth[base] = breadth.get(base, 0) + 1
    cells: dict[str, list[str]] = {}
    for rid, nodeids in citations.items():
        by_base: dict[str, list[str]] = {}
        for nodeid in nodeids:
            base, _, case = nodeid.partition("[")
            by_base.setdefault(base, []).append(case[:-1] if case else "")
        cell = []
        for base in sorted(by_base, key=lambda b: breadth[b]):  # stable: collection order breaks ties
            found = by_base[base]
            if len(found) == cases.get(base, 1):
                cell.append(f"`{base}`" + (f" ({len(found)} cases)" if len(found) > 1 else ""))
            else:
                cell.append(f"`{base}[" + "]`, `[".join(found) + "]`")
        cells[rid] = cell
    return cells


def render(
    requirements: Mapping[str, Requirement],
    code: Mapping[str, list[Place]],
    tests: Mapping[str, list[str]],
    pending: Iterable[str] = (),
) -> str:
    """docs/requirements.md: deterministic, because its inputs are sorted or in spec order."""
    pending = set(pending)
    without_code = [rid for rid in requirements if rid not in code]
    seed = sum(1 for req in requirements.values() if req.feature in SEED_FEATURES)
    lines = [
        "<!-- DO NOT EDIT: written by `make requirements` from features/, `# implements:` comments and tests/. -->",
        "# Requirements",
        "",
        f"{len(requirements)} requirements: the seed's {seed} (features/cooked-mcp/) and {len(requirements) - seed} "
        "of cooked-mcp's own (features/cooked-mcp-extensions/).",
        "For each: the spec text, the code that implements it",
        "(a `# implements:` comment right above it, or a row of `features/tools.yaml` or `prompts.yaml` that the",
        "generated layer is rendered from) and the tests that prove it (`@pytest.mark.req`).",
        "",
        f"**{len(requirements) - len(without_code)} of {len(requirements)} name code; "
        f"{len(without_code)} do not yet** (listed at the end).",
    ]

    def row(rid: str, req: Requirement) -> list[str]:
        code_cell = "<br>".join(p.markdown() for p in code.get(rid, [])) or "**none**"
        test_cell = "<br>".join(tests.get(rid, [])) or ("**pending**" if rid in pending else "**none**")
        return [_cell(req.text), code_cell, test_cell]

    lines += group_tables(requirements, ["code", "tests"], row)
    lines += ["", "## Requirements without a code location", ""]
    lines += [f"- `{rid}`" for rid in without_code] or ["None."]
    return "\n".join(lines) + "\n"


def group_tables(
    requirements: Mapping[str, Requirement],
    columns: list[str],
    row: Callable[[str, Requirement], list[str]],
) -> list[str]:
    """One markdown table per feature group, ``ID | requirement | *columns``; ``row`` gives the
    cells after the ID. Shared by docs/requirements.md and the coverage report."""
    lines: list[str] = []
    current = None
    for rid, req in requirements.items():
        if (req.feature, req.group) != current:
            current = (req.feature, req.group)
            header = ["ID", "requirement", *columns]
            lines += [
                "",
                f"## {req.feature} · {req.group}",
                "",
                "| " + " | ".join(header) + " |",
                "| " + " | ".join("---" for _ in header) + " |",
            ]
        lines.append("| " + " | ".join([f"`{rid}`", *row(rid, req)]) + " |")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _relative(path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(resolved)
