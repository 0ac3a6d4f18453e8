"""The requirement map: per-case citations, `# implements:` annotations, the rendered doc and the reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import requirement_map
import traceability
from requirement_map import Place, scan_code

REQUIREMENTS = traceability.REQUIREMENTS

pytestmark = pytest.mark.tooling

ROOT = traceability.ROOT
PROBE = """
import json, traceability
def pytest_collection_finish(session):
    print("CITED " + json.dumps({i.nodeid.split("::")[-1]: traceability.cited_ids(i) for i in session.items}))
"""


def test_each_case_of_a_parametrised_test_cites_only_its_own_requirements(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """On the cases as pytest collected them: this run's own when it collected them (a whole run),
    else a collection of their own in a separate pytest."""
    name = "test_each_source_refuses_to_run_without_its_required_parameters"
    target = f"tests/recipes/test_recipe_save.py::{name}"
    collected = [item for item in request.session.items if item.nodeid.startswith(f"{target}[")]
    if collected:
        cited = {item.nodeid.split("::")[-1]: traceability.cited_ids(item) for item in collected}
    else:
        cited = _collected_apart(target, tmp_path)
    assert set(cited[f"{name}[url-url]"]) == {"recipes.SAVE.3-1", "tools.RESPONSES.6"}
    assert set(cited[f"{name}[raw_text-title]"]) == {"recipes.SAVE.1-1", "tools.RESPONSES.6"}
    assert set(cited[f"{name}[draft-draft_id]"]) == {
        "recipes.SAVE.7-1",
        "recipes.SAFETY.1",
        "tools.RESPONSES.6",
    }


def _collected_apart(nodeid: str, tmp_path: Path) -> dict[str, list[str]]:
    (tmp_path / "cited_probe.py").write_text(PROBE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "cited_probe", nodeid],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("CITED "))
    cited: dict[str, list[str]] = json.loads(line.removeprefix("CITED "))
    return cited


def test_the_most_focused_test_comes_first() -> None:
    citations = {"r.A.1": ["t.py::test_broad", "t.py::test_focused"], "r.A.2": ["t.py::test_broad"]}
    cells = requirement_map.tests_by_requirement(citations, ["t.py::test_broad", "t.py::test_focused"])
    assert cells["r.A.1"] == ["`t.py::test_focused`", "`t.py::test_broad`"]


def test_the_map_lists_only_the_cases_that_cite_an_id() -> None:
    all_ids = ["t.py::test_a[x]", "t.py::test_a[y]", "t.py::test_b", "t.py::test_c[1]", "t.py::test_c[2]"]
    citations = {
        "r.A.1": ["t.py::test_a[x]", "t.py::test_b"],
        "r.A.2": ["t.py::test_c[1]", "t.py::test_c[2]"],
    }
    assert requirement_map.tests_by_requirement(citations, all_ids) == {
        "r.A.1": ["`t.py::test_a[x]`", "`t.py::test_b`"],
        "r.A.2": ["`t.py::test_c` (2 cases)"],
    }


def write(root: Path, name: str, source: str) -> Path:
    path = root / name
    path.write_text(textwrap.dedent(source))
    return path


def test_an_annotation_points_at_the_code_right_below_it(tmp_path: Path) -> None:
    write(
        tmp_path,
        "m.py",
        """\
        import x

        # implements: recipes.SAVE.4, recipes.SAVE.5
        # A comment between is fine.
        @decorated
        async def save_from_url() -> None:
            pass

        # implements: recipes.SAVE.6
        LIMIT = 3
        """,
    )
    places, errors = scan_code(REQUIREMENTS, [tmp_path])
    assert errors == []
    rel = str(tmp_path / "m.py")
    assert places == {
        "recipes.SAVE.4": [Place(rel, 6, "save_from_url")],
        "recipes.SAVE.5": [Place(rel, 6, "save_from_url")],
        "recipes.SAVE.6": [Place(rel, 10, "LIMIT")],
    }


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (
            "# implements: recipes.SAVE.99\ndef f(): pass\n",
            "m.py:1: implements unknown requirement 'recipes.SAVE.99'",
        ),
        ("# implements:\ndef f(): pass\n", "m.py:1: `implements:` names no requirement ID"),
        (
            "x = 1\n# implements: recipes.SAVE.4\n",
            "m.py:2: `implements: recipes.SAVE.4` is not followed by any code",
        ),
        (
            "# Implements recipes.SAVE.4\ndef f(): pass\n",
            "m.py:1: write annotations as `# implements: feature.GROUP.id, ...`",
        ),
        (
            "# implement: recipes.SAVE.4\ndef f(): pass\n",
            "m.py:1: write annotations as `# implements: feature.GROUP.id, ...`",
        ),
        ("# Implementing this took care.\ndef f(): pass\n", None),
    ],
    ids=["unknown-id", "no-id", "nothing-below", "misspelt", "singular", "prose-is-fine"],
)
def test_a_wrong_annotation_is_an_error_at_its_line(tmp_path: Path, source: str, error: str | None) -> None:
    write(tmp_path, "m.py", source)
    _, errors = scan_code(REQUIREMENTS, [tmp_path])
    assert errors == ([] if error is None else [f"{tmp_path / error}"])


def test_every_annotation_in_the_code_names_a_known_requirement() -> None:
    _, errors = scan_code(REQUIREMENTS)
    assert errors == []


def test_the_tool_table_rows_count_as_code() -> None:
    places = requirement_map.scan_table()
    read_target = [p for p in places["tools.READ_TOOL.1"] if p.path == "features/tools.yaml"]
    assert read_target
    line = (ROOT / "features" / "tools.yaml").read_text().splitlines()[read_target[0].line - 1]
    assert "implements" in line and "tools.READ_TOOL.1" in line


def test_a_stale_map_fails_the_gate_and_names_the_command(tmp_path: Path) -> None:
    trace = traceability.Trace(
        citations={rid: ["t.py::test"] for rid in REQUIREMENTS}, nodeids=["t.py::test"]
    )
    doc = tmp_path / "requirements.md"
    doc.write_text(traceability.render_doc(trace, []))
    assert traceability.check_doc(trace, [], doc) == []
    doc.write_text(doc.read_text().replace("| `t.py::test` |", "| `t.py::gone` |", 1))
    assert traceability.check_doc(trace, [], doc) == [f"{doc} is out of date: run `make requirements`"]


def test_a_requirement_without_code_fails_the_gate_unless_pending() -> None:
    place = Place("src/x.py", 1, "f")
    trace = traceability.Trace(code={rid: [place] for rid in list(REQUIREMENTS)[1:]})
    first = next(iter(REQUIREMENTS))
    assert traceability.check_code(trace, []) == [
        f"{first} names no code: add `# implements: {first}` right above the code that does it "
        "(or cite it in features/tools.yaml)"
    ]
    assert traceability.check_code(trace, [first]) == []


def test_every_requirement_names_code_today() -> None:
    annotated, errors = scan_code(REQUIREMENTS)
    code = requirement_map.merge(annotated, requirement_map.scan_table())
    assert errors == []
    assert [rid for rid in REQUIREMENTS if rid not in code] == []


def test_a_partial_run_never_overwrites_the_full_report() -> None:
    assert traceability.report_path(traceability.Trace(full_run=True)) == ROOT / "build" / "requirements.md"
    assert (
        traceability.report_path(traceability.Trace(full_run=False))
        == ROOT / "build" / "requirements.partial.md"
    )
