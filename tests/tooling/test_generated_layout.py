"""The shape of what codegen produces: one-way imports, no test data shipped, no narrowing left to handlers."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from codegen.__main__ import PACKAGE, REQUIREMENTS_MODULE, ROOT

pytestmark = pytest.mark.tooling

RUNTIME = ROOT / "src" / "runtime" / "cooked_mcp_runtime"
HANDLERS = ROOT / "src" / "handwritten" / "cooked_mcp" / "handlers"


def imported_modules(folder: Path) -> set[str]:
    modules: set[str] = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules.add(node.module)
            elif isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
    return modules


def test_the_installed_generated_package_holds_no_test_data() -> None:
    assert not (PACKAGE / "requirements.py").exists()
    assert importlib.util.find_spec("cooked_mcp_generated.requirements") is None
    assert REQUIREMENTS_MODULE.is_relative_to(ROOT / "tests") and REQUIREMENTS_MODULE.exists()


def test_the_generated_package_keeps_only_what_varies_with_the_table() -> None:
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == [
        "__init__.py",
        "models.py",
        "prompts.py",
        "tools.py",
    ]
    assert not (ROOT / "codegen" / "templates" / "runtime.py.j2").exists()


def test_imports_flow_one_way() -> None:
    """generated -> runtime, never -> cooked_mcp; runtime never -> generated or cooked_mcp."""
    generated, runtime = imported_modules(PACKAGE), imported_modules(RUNTIME)
    assert not {m for m in generated if m.split(".")[0] == "cooked_mcp"}
    assert {m for m in generated if m.startswith("cooked_mcp_runtime")}
    assert not {m for m in runtime if m.split(".")[0] in {"cooked_mcp", "cooked_mcp_generated"}}


def test_handlers_read_no_schema_and_narrow_no_argument() -> None:
    for path in HANDLERS.glob("*.py"):
        source = path.read_text("utf-8")
        assert "model_json_schema" not in source, path
        assert "def _given" not in source, path
