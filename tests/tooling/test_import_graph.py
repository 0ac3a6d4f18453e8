"""The modules under src/ import one another without a cycle.

A cycle makes the import order matter (a module half-initialised when its partner asks for a
name) and means two modules are really one; the error tree in ``cooked_mcp.exceptions`` exists
partly to break the one between the settings and the credential commands. Every import
counts, including those inside functions and under ``if TYPE_CHECKING:``: a cycle hidden
behind a lazy or typing-only import is still two modules that cannot be understood apart
(``cooked_fake.control`` takes the fake as a ``Protocol`` of what it reaches for that reason).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _modules() -> dict[str, Path]:
    """Every module under src/ by dotted name (each distribution's folder is a source root)."""
    found: dict[str, Path] = {}
    for root in SRC.iterdir():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from pkg import sub`` imports the submodule when there is one, else a name of pkg.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
            ]
        else:
            continue
        yield from (target for target in targets if target in modules and target != name)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.tooling
def test_the_modules_under_src_import_one_another_without_a_cycle() -> None:
    modules = _modules()
    graph = {name: set(_imports(name, path, modules)) for name, path in modules.items()}
    for package in ("cooked_mcp", "cooked_mcp_generated", "cooked_mcp_runtime", "cooked_fake"):
        assert package in graph, f"the walk found {package}"
    assert "cooked_fake.exchange" in graph["cooked_fake.control"], "relative imports resolve"
    assert _cycles(graph) == []


@pytest.mark.tooling
def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above would pass vacuously if the finder never found anything."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.tooling
def test_the_settings_load_without_pydantic_settings() -> None:
    """pydantic-settings is no dependency: loading the settings, as the CLI does, imports none of it."""
    import subprocess
    import sys

    probe = (
        "import sys; from cooked_mcp.config import load_settings; "
        "load_settings(config_path=None, environ={'COOKED_LOGIN_USERNAME': 'u', 'COOKED_LOGIN_PASSWORD': 'p'}); "
        "print(sorted(m for m in sys.modules if m.startswith('pydantic_settings')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.tooling
def test_the_cooked_client_calls_one_way_down() -> None:
    """The client asks the session for a login and the sender to send; the sender knows neither, and
    the session does not know the client, so no re-login path runs back up."""
    modules = _modules()
    imports = {name: set(_imports(name, modules[name], modules)) for name in modules if ".cooked." in name}
    assert not imports["cooked_mcp.cooked.sender"] & {"cooked_mcp.cooked.session", "cooked_mcp.cooked.client"}
    assert "cooked_mcp.cooked.client" not in imports["cooked_mcp.cooked.session"]
    assert "httpx" not in (modules["cooked_mcp.cooked.session"].read_text()), "the session is no httpx.Auth"
