"""make agents (agents/): its scenario table covers every mode, every library has a docs/agent-frameworks.md
snippet and a driver, and strict filling does what a strict-mode model does.

The harness itself runs only under `make agents` (it needs six frameworks installed); these
checks keep it honest in the ordinary suite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from strategies import SPECS

pytestmark = pytest.mark.tooling

AGENTS = Path(__file__).resolve().parent.parent.parent / "agents"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"agents_{name}", AGENTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


harness = _load("harness")
run = _load("run")


def test_the_scenario_table_has_every_mode_of_every_tool_once() -> None:
    wanted = set()
    for name, spec in SPECS.items():
        modes = spec.modes
        wanted |= {(name, f"{modes.param}={value}") for value in modes.requires} if modes else {(name, "")}
    table = [(mode.tool, mode.label if "=" in mode.label else "") for mode in harness.MODES]
    assert sorted(table) == sorted(wanted) and len(table) == 17
    for mode in harness.MODES:  # the plain arguments are valid as they stand
        SPECS[mode.tool].arguments.validate(harness._concrete(mode.arguments, "plain"))


def test_every_library_has_a_driver_a_pinned_requirements_file_and_a_readme_snippet() -> None:
    for name, driver in run.LIBRARIES.items():
        assert (AGENTS / "drivers" / driver).is_file(), driver
        pins = (AGENTS / "requirements" / f"{name}.txt").read_text().splitlines()
        assert all(line.startswith("#") or "==" in line for line in pins if line.strip()), name
        compile(harness.readme_snippet(name), f"docs/agent-frameworks.md ({name})", "exec")


def test_strict_filling_sends_null_where_allowed_and_the_plainest_value_elsewhere() -> None:
    schema = {
        "properties": {
            "target": {"type": "string", "enum": ["a"]},
            "query": {"type": ["string", "null"]},
            "portions": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "page": {"type": "integer", "default": 1},
            "name": {"type": "string"},
            "ids": {"type": "array"},
            "selected": {"type": "boolean", "nullable": True},
            "ticked": {"type": "boolean"},
        }
    }
    assert harness.strict_filled(schema, {"target": "a"}) == {
        "target": "a",
        "query": None,
        "portions": None,
        "page": 1,
        "name": "",
        "ids": [],
        "selected": None,
        "ticked": False,
    }


def test_a_strict_conversion_of_the_served_schema_fills_only_null() -> None:
    """With every optional parameter nullable, a strict model never has to invent a value."""
    for name, spec in SPECS.items():
        schema = spec.definition.input_schema
        required = set(schema.get("required", []))
        filled = harness.strict_filled(schema, {})
        assert {k for k, v in filled.items() if v is not None} <= required, name
