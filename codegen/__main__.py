"""``python -m codegen [--check] [--features DIR --table FILE --out DIR]``: render the generated files.

They are src/generated/, docs/tools.md and tests/generated_requirements.py, from
features/: the feature files, the tool schema table and, beside it, the prompt table
(prompts.yaml). ``--out DIR`` writes them under DIR at the same relative paths instead
of into the repository (the golden tests render their fixture spec that way).

Output is deterministic: the same inputs give the same bytes, because the
inputs are read in a fixed order, nothing time- or machine-dependent is
rendered, and Python output goes through ``ruff format`` (pinned in
pyproject.toml).
"""

from __future__ import annotations

import argparse
import difflib
import pprint
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2

from . import schemas
from .prompts import load_prompts
from .spec import Feature, Param, Table, load_features, load_table
from .yaml_lines import SpecError

ROOT = Path(__file__).resolve().parent.parent
FEATURES_DIR = ROOT / "features" / "cooked-mcp"
#: The seed's spec (byte-for-byte copies, never reworded), then cooked-mcp's own requirements beside it.
FEATURES_DIRS = (FEATURES_DIR, ROOT / "features" / "cooked-mcp-extensions")
TABLE = ROOT / "features" / "tools.yaml"
PACKAGE = ROOT / "src" / "generated" / "cooked_mcp_generated"
#: Requirement texts are test data: generated beside the tests, not into the installed package.
REQUIREMENTS_MODULE = ROOT / "tests" / "generated_requirements.py"
DOCS = ROOT / "docs"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="fail, showing a diff, if generated files are out of date"
    )
    parser.add_argument(
        "--features",
        type=Path,
        action="append",
        help="a *.feature.yaml directory (repeat for more; default: features/cooked-mcp and "
        "features/cooked-mcp-extensions)",
    )
    parser.add_argument(
        "--table",
        type=Path,
        default=TABLE,
        help="the tool schema table (the prompt table, prompts.yaml, is beside it)",
    )
    parser.add_argument("--out", type=Path, help="write under DIR, at the repository-relative paths, instead")
    args = parser.parse_args(argv)
    try:
        rendered = render_all(args.features or FEATURES_DIRS, args.table)
    except SpecError as exc:
        print(f"codegen: {exc}", file=sys.stderr)
        return 1
    out: Path | None = args.out
    outputs = {_placed(path, out): text for path, text in rendered.items()}
    stale = [path for path, text in outputs.items() if not path.exists() or path.read_text("utf-8") != text]
    extra = sorted(set(_placed(PACKAGE, out).glob("*.py")) - set(outputs))
    if args.check:
        for path in stale:
            sys.stderr.writelines(drift(path, outputs[path]))
        for path in [*stale, *extra]:
            print(f"codegen: {_shown(path)} is out of date; run `make generate`", file=sys.stderr)
        return 1 if stale or extra else 0
    for path in extra:
        path.unlink()
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(outputs[path], encoding="utf-8")
    print(f"codegen: {len(outputs)} files, {len(stale) + len(extra)} changed")
    return 0


def _placed(path: Path, out: Path | None) -> Path:
    """Where a generated file goes: its own path, or the same repository-relative path under ``out``."""
    return path if out is None else out / path.relative_to(ROOT)


def drift(path: Path, rendered: str) -> list[str]:
    """A unified diff from the file on disk to what the spec renders: what `make generate` would change."""
    current = path.read_text("utf-8") if path.exists() else ""
    name = _shown(path)
    lines = difflib.unified_diff(
        current.splitlines(keepends=True), rendered.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


def render_all(features_dirs: Path | Sequence[Path], table_path: Path) -> dict[Path, str]:
    """Every generated file's path and text; nothing is written here. Requirements come from
    every directory in ``features_dirs``, in that order; an ID may be in only one."""
    dirs = [features_dirs] if isinstance(features_dirs, Path) else list(features_dirs)
    loaded = [(directory, feature) for directory in dirs for feature in load_features(directory)]
    features = tuple(feature for _, feature in loaded)
    requirement_ids = {r.id for f in features for r in f.requirements}
    if len(requirement_ids) != sum(len(f.requirements) for f in features):
        raise SpecError(dirs[-1], None, "a requirement ID is defined in more than one features directory")
    table = load_table(table_path, requirement_ids)
    prompts_path = table_path.with_name("prompts.yaml")
    prompts = load_prompts(prompts_path, table, requirement_ids)
    sources = [_relative(table_path)] + [_relative(directory / f.file) for directory, f in loaded]
    env = _environment(table)
    common: dict[str, Any] = {
        "sources": sources,
        "tools": table.tools,
        "types": table.types,
        "result_fields": table.result_fields,
        "parameter_types": table.parameter_types,
        "server_name": table.server_name,
        "instructions": table.instructions,
        "features": features,
        "implemented_by": _implemented_by(table, features),
        "total": len(requirement_ids),
    }
    python = {
        PACKAGE / "__init__.py": "package.py.j2",
        PACKAGE / "models.py": "models.py.j2",
        PACKAGE / "tools.py": "tools.py.j2",
        REQUIREMENTS_MODULE: "requirements.py.j2",
    }
    outputs = {path: _ruff_format(env.get_template(t).render(common)) for path, t in python.items()}
    outputs[PACKAGE / "prompts.py"] = _ruff_format(
        env.get_template("prompts.py.j2").render(
            sources=[_relative(prompts_path), _relative(table_path)],
            steps_heading=prompts.steps_heading,
            journeys=prompts.journeys,
        )
    )
    outputs[DOCS / "tools.md"] = env.get_template("tools.md.j2").render(common)
    return outputs


def _environment(table: Table) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - renders Python and Markdown, never HTML
    )
    env.filters["pyrepr"] = _pyrepr
    env.globals.update(
        param_alias=schemas.param_alias,
        param_type=schemas.param_type,
        param_use=schemas.param_use,
        named_type=schemas.named_type,
        output_annotation=schemas.output_annotation,
        bounds=_bounds,
        pattern_hints=lambda tool: {p.name: p.pattern_hint for p in tool.params if p.pattern_hint},
        mode_map=lambda tool, attribute: {
            m.value: getattr(m, attribute) for m in tool.modes if getattr(m, attribute)
        },
        model_names=[
            name
            for tool in table.tools
            for name in (f"{tool.class_prefix}Arguments", f"{tool.class_prefix}Output")
        ],
    )
    return env


def _pyrepr(value: Any) -> str:
    """A Python literal; long ones are wrapped later by ruff format."""
    if isinstance(value, tuple):
        value = list(value)
        return "(" + ", ".join(_pyrepr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return pprint.pformat(value, width=10_000, sort_dicts=False)


def _bounds(p: Param) -> str:
    parts = []
    if p.minimum is not None:
        parts.append(f"≥ {p.minimum}")
    if p.maximum is not None:
        parts.append(f"≤ {p.maximum}")
    if p.min_length is not None or p.max_length is not None:
        parts.append(f"length {p.min_length or 0}–{p.max_length or '∞'}")
    if p.min_items is not None or p.max_items is not None:
        parts.append(f"{p.min_items or 0}–{p.max_items or '∞'} items")
    if p.pattern_hint:
        parts.append(p.pattern_hint)
    return ", ".join(parts)


def _implemented_by(table: Table, features: tuple[Feature, ...]) -> dict[str, tuple[str, ...]]:
    rows: dict[str, list[str]] = {}
    for rid in table.server_implements:
        rows.setdefault(rid, []).append("server")
    for tool in table.tools:
        for rid in tool.implements:
            rows.setdefault(rid, []).append(tool.name)
        for p in tool.params:
            for rid in p.implements:
                rows.setdefault(rid, []).append(f"{tool.name}.{p.name}")
        for m in tool.modes:
            for rid in m.implements:
                rows.setdefault(rid, []).append(f"{tool.name}.{tool.mode}={m.value}")
    order = [r.id for f in features for r in f.requirements]
    return {rid: tuple(rows[rid]) for rid in order if rid in rows}


def _ruff_format(source: str) -> str:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        raise SpecError(ROOT, None, "ruff is needed to format generated code; run `make install`")
    done = subprocess.run(
        [ruff, "format", "--config", str(ROOT / "pyproject.toml"), "--stdin-filename", "generated.py", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SpecError(ROOT, None, f"generated code does not parse:\n{done.stderr}")
    return done.stdout


def _shown(path: Path) -> str:
    """A path as a person runs commands: relative to the repository when inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(path)


def _relative(path: Path) -> str:
    resolved = path.resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else resolved.name


if __name__ == "__main__":
    sys.exit(main())
