"""What installers are told about cooked-mcp, read from the one place each fact lives.

- name, description, licence, URLs, keywords: ``[project]`` in pyproject.toml;
- version: ``cooked_mcp.__version__`` (pyproject reads it too, as its dynamic version);
- the settings a host asks the user for: ``[tool.cooked-mcp]`` in pyproject.toml;
- the tools: features/tools.yaml (the tool schema table the server is generated from).

The MCP Bundle manifest and the MCP Registry's server.json are both built here from
those, so neither can drift from the package or from each other.
"""

from __future__ import annotations

import ast
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

ROOT: Final = Path(__file__).resolve().parent.parent
PYPROJECT: Final = ROOT / "pyproject.toml"
VERSION_FILE: Final = ROOT / "src" / "handwritten" / "cooked_mcp" / "__init__.py"
TOOLS_TABLE: Final = ROOT / "features" / "tools.yaml"
SERVER_JSON: Final = ROOT / "server.json"
REGISTRY_SCHEMA: Final = Path(__file__).resolve().parent / "vendor" / "server.schema.json"
MANIFEST_VERSION: Final = "0.4"
BUNDLE_ENTRY_POINT: Final = "server/main.py"
BUNDLE_WHEELS: Final = "wheels"
PLATFORMS: Final = ("darwin", "linux", "win32")


@dataclass(frozen=True)
class Setting:
    """One value a host asks the user for, and the environment variable cooked-mcp reads it from."""

    key: str
    env: str
    title: str
    description: str
    required: bool
    secret: bool
    type: str
    default: str | bool | None


@dataclass(frozen=True)
class Tool:
    name: str
    title: str


@dataclass(frozen=True)
class Metadata:
    name: str
    version: str
    description: str
    display_name: str
    registry_name: str
    license: str
    author: str
    keywords: tuple[str, ...]
    requires_python: str
    urls: dict[str, str]
    settings: tuple[Setting, ...]
    tools: tuple[Tool, ...]

    @property
    def wheel_name(self) -> str:
        """The file name ``python -m build`` gives the wheel (PEP 427 normalises the name)."""
        return f"{self.name.replace('-', '_')}-{self.version}-py3-none-any.whl"


def read_version(path: Path = VERSION_FILE) -> str:
    """``__version__`` from the package, read without importing it (as setuptools does)."""
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            if isinstance(value, str):
                return value
    raise ValueError(f"{path}: no __version__ = '...' assignment")


def load(pyproject: Path = PYPROJECT, tools_table: Path = TOOLS_TABLE) -> Metadata:
    data = tomllib.loads(pyproject.read_text("utf-8"))
    project, ours = data["project"], data["tool"]["cooked-mcp"]
    table = yaml.safe_load(tools_table.read_text("utf-8"))
    return Metadata(
        name=project["name"],
        version=read_version(),
        description=project["description"],
        display_name=ours["display-name"],
        registry_name=ours["registry-name"],
        license=project["license"],
        author=project["authors"][0]["name"],
        keywords=tuple(project["keywords"]),
        requires_python=project["requires-python"],
        urls=dict(project["urls"]),
        settings=tuple(
            Setting(
                key=row["key"],
                env=row["env"],
                title=row["title"],
                description=row["description"],
                required=row.get("required", False),
                secret=row.get("secret", False),
                type=row.get("type", "string"),
                default=row.get("default"),
            )
            for row in ours["settings"]
        ),
        tools=tuple(Tool(name, str(row["title"])) for name, row in table["tools"].items()),
    )


def bundle_manifest(meta: Metadata) -> dict[str, Any]:
    """manifest.json of the MCP Bundle: a ``uv`` server, so the host installs Python and the wheel."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": meta.name,
        "display_name": meta.display_name,
        "version": meta.version,
        "description": meta.description,
        "author": {"name": meta.author, "url": meta.urls["Homepage"]},
        "repository": {"type": "git", "url": meta.urls["Source"]},
        "homepage": meta.urls["Homepage"],
        "documentation": meta.urls["Documentation"],
        "support": meta.urls["Issues"],
        "icon": "icon.png",
        "server": {
            "type": "uv",
            "entry_point": BUNDLE_ENTRY_POINT,
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--directory", "${__dirname}", BUNDLE_ENTRY_POINT],
                "env": {s.env: f"${{user_config.{s.key}}}" for s in meta.settings},
            },
        },
        "tools": [{"name": t.name, "description": t.title} for t in meta.tools],
        "tools_generated": False,
        "keywords": list(meta.keywords),
        "license": meta.license,
        "compatibility": {
            "platforms": list(PLATFORMS),
            "runtimes": {"python": meta.requires_python},
        },
        "user_config": {s.key: _user_config(s) for s in meta.settings},
    }


def _user_config(setting: Setting) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": setting.type,
        "title": setting.title,
        "description": setting.description,
        "required": setting.required,
    }
    if setting.secret:
        entry["sensitive"] = True
    if setting.default is not None:
        entry["default"] = setting.default
    return entry


def bundle_pyproject(meta: Metadata) -> str:
    """The bundle's pyproject.toml: uv installs the bundled wheel and its dependencies from it."""
    return (
        "# Generated by make bundle (python -m distribution bundle). The host runs\n"
        f"# `uv run --directory <bundle> {BUNDLE_ENTRY_POINT}`, which installs what is listed here.\n"
        "[project]\n"
        f'name = "{meta.name}-bundle"\n'
        f'version = "{meta.version}"\n'
        f'requires-python = "{meta.requires_python}"\n'
        f'dependencies = ["{meta.name}=={meta.version}"]\n'
        "\n"
        "[tool.uv]\n"
        "package = false\n"
        "# The platforms the manifest lists, and no others (uv resolves for all of them at once).\n"
        f"environments = [{', '.join(repr(f'sys_platform == {p!r}') for p in PLATFORMS)}]\n"
        "\n"
        "[tool.uv.sources]\n"
        f'{meta.name} = {{ path = "{BUNDLE_WHEELS}/{meta.wheel_name}" }}\n'
    )


BUNDLE_MAIN: Final = '''\
"""The bundle's entry point: the installed cooked-mcp command, configured by the host's environment."""

from cooked_mcp.cli import main

raise SystemExit(main())
'''


def server_json(meta: Metadata) -> dict[str, Any]:
    """The MCP Registry entry: the PyPI package, run over stdio, configured by environment variables."""
    schema_id = json.loads(REGISTRY_SCHEMA.read_text("utf-8"))["$id"]
    return {
        "$schema": schema_id,
        "name": meta.registry_name,
        "title": meta.display_name,
        "description": meta.description,
        "version": meta.version,
        "websiteUrl": meta.urls["Homepage"],
        "repository": {"url": meta.urls["Source"], "source": "github"},
        "packages": [
            {
                "registryType": "pypi",
                "registryBaseUrl": "https://pypi.org",
                "identifier": meta.name,
                "version": meta.version,
                "runtimeHint": "uvx",
                "transport": {"type": "stdio"},
                "environmentVariables": [_environment_variable(s) for s in meta.settings],
            }
        ],
    }


def _environment_variable(setting: Setting) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": setting.env,
        "description": setting.description,
        "isRequired": setting.required,
        "isSecret": setting.secret,
        "format": setting.type,
    }
    if setting.default is not None:
        # The registry's inputs are strings; booleans are written "true" / "false".
        entry["default"] = (
            str(setting.default).lower() if isinstance(setting.default, bool) else setting.default
        )
    return entry


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
