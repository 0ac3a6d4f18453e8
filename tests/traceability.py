"""The requirement traceability gate.

Tests cite the requirement IDs they prove with ``@pytest.mark.req(...)``.
After collection every citation is checked against the generated registry;
at the end of a full run every requirement must be cited by a test or be
listed in features/pending-requirements.txt (and never both), and a report
per feature and group is written to build/requirements.md (a partial run
writes build/requirements.partial.md instead and leaves the full one alone).
Every ``# implements:`` annotation in the code must name a known ID, and on a
full run docs/requirements.md (the requirement map, see requirement_map.py)
must be what the collected tests and annotations render; ``make requirements``
rewrites it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requirement_map
from generated_requirements import REQUIREMENTS

ROOT = Path(__file__).resolve().parent.parent
PENDING_FILE = ROOT / "features" / "pending-requirements.txt"
REPORT_FILE = ROOT / "build" / "requirements.md"
PARTIAL_REPORT_FILE = ROOT / "build" / "requirements.partial.md"
DOC_FILE = requirement_map.DOC_FILE


@dataclass
class Trace:
    """Which collected tests cite which requirement."""

    citations: dict[str, list[str]] = field(default_factory=dict)
    nodeids: list[str] = field(default_factory=list)
    code: dict[str, list[requirement_map.Place]] = field(default_factory=dict)
    full_run: bool = False
    problems: list[str] = field(default_factory=list)


def read_pending(path: Path = PENDING_FILE) -> list[str]:
    if not path.exists():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text("utf-8").splitlines())
    return [line for line in lines if line]


def cited_ids(item: pytest.Item) -> list[str]:
    """The IDs one test (one case of a parametrised test) cites.

    ``iter_markers`` yields the marks of the function, its class and module and
    the case's own (``pytest.param(..., marks=pytest.mark.req(...))``), so a case
    proves what every case proves plus what its own marker says.
    """
    return list(dict.fromkeys(rid for marker in item.iter_markers("req") for rid in marker.args))


def collect(items: Iterable[pytest.Item]) -> Trace:
    """Map requirement IDs to citing tests and code; unknown IDs and uncited tests are usage errors."""
    trace = Trace()
    errors = []
    for item in items:
        trace.nodeids.append(item.nodeid)
        ids = cited_ids(item)
        if not ids and item.get_closest_marker("tooling") is None:
            errors.append(f"{item.nodeid}: cites no requirement; add @pytest.mark.req(...)")
        if ids and item.get_closest_marker("tooling") is not None:
            errors.append(f"{item.nodeid}: a tooling test cannot also cite requirements")
        for rid in ids:
            if rid not in REQUIREMENTS:
                errors.append(f"{item.nodeid}: cites unknown requirement {rid!r}")
            trace.citations.setdefault(rid, []).append(item.nodeid)
    annotated, code_errors = requirement_map.scan_code(REQUIREMENTS)
    errors += code_errors
    trace.code = requirement_map.merge(annotated, requirement_map.scan_table())
    if errors:
        raise pytest.UsageError("requirement traceability:\n  " + "\n  ".join(errors))
    return trace


def check(trace: Trace, pending: list[str]) -> list[str]:
    """The gate's verdict: an empty list when every requirement is accounted for."""
    problems = [
        f"{rid} is in {PENDING_FILE.name} but is not a requirement"
        for rid in pending
        if rid not in REQUIREMENTS
    ]
    pending_set = set(pending)
    for rid in REQUIREMENTS:
        cited = rid in trace.citations
        if cited and rid in pending_set:
            problems.append(f"{rid} has a test now: remove it from {PENDING_FILE.name}")
        elif not cited and rid not in pending_set:
            problems.append(f"{rid} has no test and is not pending")
    return problems


def check_code(trace: Trace, pending: list[str]) -> list[str]:
    """Every requirement names the code that implements it, unless it is still pending."""
    waiting = set(pending)
    return [
        f"{rid} names no code: add `# implements: {rid}` right above the code that does it "
        "(or cite it in features/tools.yaml)"
        for rid in REQUIREMENTS
        if rid not in trace.code and rid not in waiting
    ]


def render_doc(trace: Trace, pending: list[str]) -> str:
    tests = requirement_map.tests_by_requirement(trace.citations, trace.nodeids)
    return requirement_map.render(REQUIREMENTS, trace.code, tests, pending)


def check_doc(trace: Trace, pending: list[str], path: Path = DOC_FILE) -> list[str]:
    """docs/requirements.md must be what this full run renders."""
    if path.exists() and path.read_text("utf-8") == render_doc(trace, pending):
        return []
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [f"{shown} is out of date: run `make requirements`"]


def report_path(trace: Trace) -> Path:
    """A partial run must never overwrite the full run's report."""
    return REPORT_FILE if trace.full_run else PARTIAL_REPORT_FILE


def write_report(trace: Trace, pending: list[str], path: Path | None = None) -> None:
    path = path or report_path(trace)
    path.parent.mkdir(parents=True, exist_ok=True)
    proven = sum(1 for rid in REQUIREMENTS if rid in trace.citations)
    lines = [
        "# Requirement coverage",
        "",
        f"{summary(trace, pending)}" + ("" if trace.full_run else " (partial run)"),
        "",
    ]
    lines += requirement_map.group_tables(
        REQUIREMENTS,
        ["tests"],
        lambda rid, req: [
            req.text,
            "<br>".join(f"`{t}`" for t in trace.citations.get(rid, []))
            or ("**pending**" if rid in pending else "**none**"),
        ],
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert proven <= len(REQUIREMENTS)


def summary(trace: Trace, pending: list[str]) -> str:
    proven = sum(1 for rid in REQUIREMENTS if rid in trace.citations)
    return (
        f"requirements: {proven}/{len(REQUIREMENTS)} proven, {len(set(pending) & set(REQUIREMENTS))} pending"
    )


def is_full_run(config: pytest.Config) -> bool:
    """Only a run of the whole suite may judge coverage."""
    testpaths = {str((ROOT / p).resolve()) for p in config.getini("testpaths")}
    args = {str(Path(a).resolve()) for a in config.args}
    return args <= testpaths and not config.option.keyword and not config.option.markexpr
