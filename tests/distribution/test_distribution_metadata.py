"""One place for what installers are told: everything else is generated from it or checked here.

The sources are ``[project]`` and ``[tool.cooked-mcp]`` in pyproject.toml, ``cooked_mcp.__version__``
and features/tools.yaml (distribution/metadata.py reads them). This module checks that server.json,
the MCP Bundle manifest, ``--help``/``--version``, the installed metadata and the README agree with
them, and that the two generated files pass the schemas their consumers use. These are tests of
the release tooling, not of a product requirement.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any, Final

import jsonschema
import pytest

from cooked_mcp import PROJECT_URL, __version__, config
from cooked_mcp.cli import build_parser
from distribution import __main__ as cli
from distribution import icon, metadata

pytestmark = pytest.mark.tooling

VENDOR: Final = metadata.ROOT / "distribution" / "vendor"
#: sha256 of https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json
#: (distribution/vendor/README.md says where it and the mcpb schema come from).
REGISTRY_SCHEMA_SHA256: Final = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
COOKED_MCP: Final = str(Path(sys.executable).parent / "cooked-mcp")


@pytest.fixture(scope="module")
def meta() -> metadata.Metadata:
    return metadata.load()


def _validate(schema_file: Path, document: dict[str, Any]) -> None:
    schema = json.loads(schema_file.read_text("utf-8"))
    jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker()).validate(document)


def test_the_vendored_registry_schema_is_the_published_one() -> None:
    assert hashlib.sha256(metadata.REGISTRY_SCHEMA.read_bytes()).hexdigest() == REGISTRY_SCHEMA_SHA256


def test_server_json_is_generated_from_the_metadata_and_up_to_date() -> None:
    assert cli.write_server_json(check=True) == 0, "run: python -m distribution server-json"


def test_server_json_passes_the_registry_schema(meta: metadata.Metadata) -> None:
    document = json.loads(metadata.SERVER_JSON.read_text("utf-8"))
    _validate(metadata.REGISTRY_SCHEMA, document)
    (package,) = document["packages"]
    assert (package["registryType"], package["identifier"], package["version"]) == (
        "pypi",
        meta.name,
        __version__,
    )
    assert package["transport"] == {"type": "stdio"}
    secret = {v["name"]: v["isSecret"] for v in package["environmentVariables"]}
    assert secret == {
        config.DECLARED["username"].env: False,
        config.DECLARED["password"].env: True,
        config.DECLARED["base_url"].env: False,
        config.DECLARED["read_only"].env: False,
    }


def test_a_broken_server_json_fails_the_schema(meta: metadata.Metadata) -> None:
    """The schema check has teeth: a name without a namespace and a version range are rejected."""
    document = metadata.server_json(meta)
    document["name"] = "cooked-mcp"
    with pytest.raises(jsonschema.ValidationError, match="does not match"):
        _validate(metadata.REGISTRY_SCHEMA, document)
    document = metadata.server_json(meta)
    document["packages"][0]["version"] = "latest"
    with pytest.raises(jsonschema.ValidationError):
        _validate(metadata.REGISTRY_SCHEMA, document)


def test_the_bundle_manifest_passes_the_mcpb_schema_and_maps_every_setting(meta: metadata.Metadata) -> None:
    manifest = metadata.bundle_manifest(meta)
    _validate(VENDOR / "mcpb-manifest-v0.4.schema.json", manifest)
    assert manifest["manifest_version"] == "0.4" and manifest["server"]["type"] == "uv"
    env = manifest["server"]["mcp_config"]["env"]
    assert env == {
        config.DECLARED["username"].env: "${user_config.username}",
        config.DECLARED["password"].env: "${user_config.password}",
        config.DECLARED["base_url"].env: "${user_config.base_url}",
        config.DECLARED["read_only"].env: "${user_config.read_only}",
    }
    user_config = manifest["user_config"]
    assert user_config["password"]["sensitive"] is True
    assert not any(entry.get("sensitive") for key, entry in user_config.items() if key != "password")
    assert [k for k, v in user_config.items() if v["required"]] == ["username", "password"]
    assert user_config["read_only"]["type"] == "boolean"


def test_server_json_and_the_manifest_describe_the_same_settings(meta: metadata.Metadata) -> None:
    manifest = metadata.bundle_manifest(meta)
    registry = json.loads(metadata.SERVER_JSON.read_text("utf-8"))["packages"][0]["environmentVariables"]
    by_env = {v["name"]: v for v in registry}
    for key, template in ((k, v) for k, v in manifest["server"]["mcp_config"]["env"].items()):
        entry = manifest["user_config"][template.removeprefix("${user_config.").removesuffix("}")]
        assert by_env[key]["description"] == entry["description"]
        assert by_env[key]["isRequired"] == entry["required"]
        assert by_env[key]["isSecret"] == entry.get("sensitive", False)
    assert registry and len(by_env) == len(manifest["user_config"])


def test_every_setting_is_an_environment_variable_cooked_mcp_reads(meta: metadata.Metadata) -> None:
    read = set(config.environment_variables())
    assert {s.env for s in meta.settings} <= read


def test_the_tool_list_is_the_served_one(meta: metadata.Metadata) -> None:
    """Both come from features/tools.yaml, so the bundle lists exactly the tools the server registers."""
    from cooked_mcp_generated import tools as generated

    listed = [(t["name"], t["description"]) for t in metadata.bundle_manifest(meta)["tools"]]
    assert listed == [(spec.name, spec.definition.title) for spec in generated.TOOLS]
    assert meta.display_name == generated.SERVER_NAME


def test_version_and_description_come_from_one_place(meta: metadata.Metadata) -> None:
    assert importlib.metadata.version(meta.name) == __version__ == meta.version
    assert importlib.metadata.metadata(meta.name)["Summary"] == meta.description
    version = subprocess.run(
        [COOKED_MCP, "--version"], capture_output=True, text=True, timeout=30, check=True
    )
    assert version.stdout.strip() == f"cooked-mcp {__version__}"
    # --help is built by the parser the installed command uses (the console script running it is
    # shown by --version above and tests/config/test_cli_help_and_flags.py).
    help_text = build_parser().format_help()
    assert meta.description.rstrip(".") in " ".join(help_text.split())
    # --help and --check point installed users (no checkout) at the project's pages.
    assert meta.urls["Homepage"] == PROJECT_URL and PROJECT_URL in help_text


def test_the_readme_names_the_registry_entry_the_settings_the_tools_and_this_wheel(
    meta: metadata.Metadata,
) -> None:
    readme = (metadata.ROOT / "README.md").read_text("utf-8")
    # The MCP Registry verifies a PyPI package by this line in its description.
    assert f"mcp-name: {meta.registry_name}" in readme
    for setting in meta.settings:
        assert f"`{setting.env}`" in readme, setting.env
    tool_rows = re.findall(r"^\| `([a-z_]+)` \| ", readme, re.MULTILINE)
    assert tool_rows == [t.name for t in meta.tools], "the README's tool table is not the tool table"
    wheels = set(re.findall(r"cooked_mcp-[^\s\"/]+\.whl", readme))
    assert wheels == {meta.wheel_name}, f"README names {sorted(wheels)}; make dist builds {meta.wheel_name}"


def test_the_icon_is_a_png_of_the_recommended_size() -> None:
    data = icon.png()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (512, 512)
    assert icon.png() == data  # the same bytes every build


def test_security_md_names_every_package_the_wheel_holds() -> None:
    """The wheel's top-level packages are the find includes without a wildcard (the install check
    proves the built wheel holds exactly these); SECURITY.md lists them for a reviewer."""
    find = tomllib.loads(metadata.PYPROJECT.read_text("utf-8"))["tool"]["setuptools"]["packages"]["find"]
    packages = {name for name in find["include"] if "*" not in name}
    holds = (
        (metadata.ROOT / "SECURITY.md").read_text("utf-8").split("The wheel (`make dist`) holds only", 1)[1]
    )
    listed = set(re.findall(r"`(cooked_mcp\w*)`", holds.split("one command", 1)[0]))
    assert listed == packages == {"cooked_mcp", "cooked_mcp_generated", "cooked_mcp_runtime"}
