"""Golden tests for the generator: a small fixture spec renders to the committed bytes, broken specs to exact errors.

After a deliberate template change, `make golden` re-renders
tests/tooling/golden/expected/ (each file at its repository-relative path) from
tests/tooling/golden/spec/; review its diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.__main__ import ROOT, main, render_all
from codegen.yaml_lines import SpecError

pytestmark = pytest.mark.tooling

GOLDEN = Path(__file__).parent / "golden"
SPEC = GOLDEN / "spec"
EXPECTED = GOLDEN / "expected"
BROKEN = GOLDEN / "broken"
REFRESH = "run `make golden` and review the diff if the change is deliberate"


def test_the_fixture_spec_renders_byte_for_byte_to_the_golden_files() -> None:
    rendered = {
        path.relative_to(ROOT): text
        for path, text in render_all(SPEC / "features", SPEC / "tools.yaml").items()
    }
    committed = {
        path.relative_to(EXPECTED): path.read_text("utf-8") for path in EXPECTED.rglob("*") if path.is_file()
    }
    assert sorted(rendered) == sorted(committed), REFRESH
    for name, text in rendered.items():
        assert text == committed[name], f"{name} drifted from the golden file; {REFRESH}"


def fixture_arguments(out: Path) -> list[str]:
    """The codegen command line that renders the fixture spec into ``out``."""
    return ["--features", str(SPEC / "features"), "--table", str(SPEC / "tools.yaml"), "--out", str(out)]


def test_codegen_writes_the_fixture_into_another_directory(tmp_path: Path) -> None:
    arguments = fixture_arguments(tmp_path)
    assert main(arguments) == 0
    written = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {p.relative_to(EXPECTED): p.read_bytes() for p in EXPECTED.rglob("*") if p.is_file()}
    assert main([*arguments, "--check"]) == 0


def test_check_prints_a_unified_diff_of_what_drifted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = fixture_arguments(tmp_path)
    main(arguments)
    models = tmp_path / "src" / "generated" / "cooked_mcp_generated" / "models.py"
    models.write_text(
        models.read_text().replace("int, Field(default=5, ge=1, le=20,", "int, Field(default=5, ge=1, le=99,")
    )
    capsys.readouterr()

    assert main([*arguments, "--check"]) == 1

    err = capsys.readouterr().err
    assert f"--- a/{models}\n+++ b/{models}\n" in err
    assert (
        "\n-    int, Field(default=5, ge=1, le=99, " in err
        and "\n+    int, Field(default=5, ge=1, le=20, " in err
    )
    assert f"codegen: {models} is out of date" in err


def broken_specs() -> list[object]:
    cases: list[object] = [
        pytest.param(SPEC / "features", path, path, id=path.name.removesuffix(".tools.yaml"))
        for path in sorted(BROKEN.glob("*.tools.yaml"))
    ]
    cases += [
        pytest.param(folder, SPEC / "tools.yaml", next(folder.glob("*.feature.yaml")), id=folder.name)
        for folder in sorted(p for p in BROKEN.iterdir() if p.is_dir())
    ]
    return cases


@pytest.mark.parametrize(("features", "table", "wrong"), broken_specs())
def test_a_broken_spec_fails_with_the_exact_file_and_line(
    features: Path, table: Path, wrong: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first_line = wrong.read_text("utf-8").splitlines()[0]
    assert first_line.startswith("# expect: "), f"{wrong} must start with `# expect: LINE: message`"
    expected = f"{wrong}:{first_line.removeprefix('# expect: ')}"

    with pytest.raises(SpecError) as raised:
        render_all(features, table)
    assert str(raised.value) == expected

    arguments = ["--features", str(features), "--table", str(table), "--out", str(tmp_path)]
    assert main(arguments) == 1
    assert capsys.readouterr().err == f"codegen: {expected}\n"
    assert not any(tmp_path.iterdir()), "nothing is written for a broken spec"


def test_every_broken_spec_is_exercised() -> None:
    assert len(broken_specs()) >= 8
