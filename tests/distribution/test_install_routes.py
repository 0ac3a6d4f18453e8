"""Each README install route, from the built wheel, in a fresh environment with no access to the repository.

``make install-check`` runs this module after ``make bundle`` (COOKED_MCP_INSTALL_CHECK=1); a plain
``make test`` skips it, since it needs the built artifacts and installs uv and pipx from PyPI.

For every README shell block marked ``<!-- install check: COMMAND -->``: copy the wheel into an
empty folder, give the block a new HOME (so new caches, no uv or pipx state) and a PATH of only the
system and the tools venv (uv, pipx at the versions in distribution/install-tools.txt), run the
block as written, then run COMMAND --version, COMMAND --check against a fake Cooked and one MCP
session over stdio with a tool call. Dependencies come from a wheelhouse filled once from PyPI
(PIP_NO_INDEX/PIP_FIND_LINKS, and uv's user uv.toml), so the timings measure installing, not the
network, and no route can reach the repository's own virtualenv. The MCP Bundle is unpacked and
started the way its manifest says, by uv, which resolves for every platform and so uses PyPI.
Timings go to build/install-check/timings.md.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import pytest
from mcp import Client, StdioServerParameters
from readme.test_readme import (
    BLOCKS,
    DESKTOP_PATH,
    INSTALL_CHECK,
    README,
    SNIPPET_HOME,
    Block,
    as_started_here,
    check_syntax,
    claude_code_launches,
    desktop_launches,
    one_client_session,
)

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp import __version__
from distribution import metadata

pytestmark = [
    pytest.mark.tooling,
    pytest.mark.anyio,
    pytest.mark.skipif(
        not os.environ.get("COOKED_MCP_INSTALL_CHECK"),
        reason="run by make install-check (needs make dist/bundle, and uv and pipx from PyPI)",
    ),
]

ROOT: Final = metadata.ROOT
WORK: Final = ROOT / "build" / "install-check"
DIST: Final = ROOT / "dist"
BUNDLE: Final = ROOT / "cooked-mcp.mcpb"
TOOLS_REQUIREMENTS: Final = ROOT / "distribution" / "install-tools.txt"
STEP_TIMEOUT: Final = 600
TIMINGS: Final[dict[str, dict[str, float]]] = {}
ROUTES: Final = [b for b in BLOCKS if b.marker.startswith(INSTALL_CHECK)]
TOOL_NAMES: Final = [t.name for t in metadata.load().tools]


def _run(argv: list[str], env: Mapping[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(
        argv, env=None if env is None else dict(env), cwd=cwd, capture_output=True, text=True,
        timeout=STEP_TIMEOUT, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, f"{shlex.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel() -> Path:
    path = DIST / metadata.load().wheel_name
    assert path.exists(), f"{path} is missing: run make dist"
    return path


@pytest.fixture(scope="module")
def tools() -> Path:
    """A venv holding only uv and pipx, from PyPI: the installers a user would have."""
    venv = WORK / "tools"
    shutil.rmtree(venv, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-r", str(TOOLS_REQUIREMENTS)])
    return venv / "bin"


@pytest.fixture(scope="module")
def wheelhouse(wheel: Path) -> Path:
    """Every dependency of the wheel, fetched once, so each route installs offline."""
    folder = WORK / "wheelhouse"
    shutil.rmtree(folder, ignore_errors=True)
    _run([sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(folder), str(wheel)])
    (folder / wheel.name).unlink(missing_ok=True)  # the routes install the wheel they are given
    return folder


def fresh_environment(base: Path, tools: Path, wheelhouse: Path | None) -> dict[str, str]:
    """A new HOME with nothing in it; PATH: where the routes put cooked-mcp, the tools, the system."""
    home = base / "home"
    (home / ".config" / "uv").mkdir(parents=True)
    if wheelhouse is None:  # from PyPI, as a host does (with this machine's CA certificates)
        return {
            "HOME": str(home),
            "PATH": f"{tools}:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "UV_SYSTEM_CERTS": "1",
        }
    # uv has no environment variable for --no-index: its user configuration file says it.
    (home / ".config" / "uv" / "uv.toml").write_text(
        f'no-index = true\nfind-links = ["{wheelhouse}"]\npython-downloads = "never"\n', "utf-8"
    )
    return {
        "HOME": str(home),
        "PATH": f"{home}/.local/bin:{tools}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def served_command(block: Block, env: Mapping[str, str]) -> list[str]:
    """The block's ``install check: COMMAND``, with ``~`` as the fresh HOME and the program on PATH."""
    words = shlex.split(block.marker.removeprefix(INSTALL_CHECK))
    program = words[0].replace("~", env["HOME"], 1)
    found = program if "/" in program else shutil.which(program, path=env["PATH"])
    assert found and Path(found).exists(), f"{block.where}: {program} not found after the install"
    return [found, *words[1:]]


async def one_session(
    command: list[str], env: Mapping[str, str], cwd: Path, tools: list[str] = TOOL_NAMES
) -> None:
    """initialize, tools/list and one tools/call, as an MCP client does."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(env), cwd=str(cwd))
    async with Client(params, read_timeout_seconds=120) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed == tools
        result = await client.call_tool("read", {"target": "shopping_list"})
        assert not result.is_error, result
        assert result.structured_content is not None and "product_groups" in json.dumps(
            result.structured_content
        )


def _record(route: str, **seconds: float) -> None:
    """One row of build/install-check/timings.md (a missing step is shown as a dash)."""
    TIMINGS[route] = seconds
    WORK.mkdir(parents=True, exist_ok=True)
    lines = [
        "| route | install (fresh environment) | --version | --check | MCP session |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, t in TIMINGS.items():
        cells = [
            f"{t[step]:.1f} s" if step in t else "—" for step in ("install", "version", "check", "session")
        ]
        lines.append(f"| `{name}` | {' | '.join(cells)} |")
    (WORK / "timings.md").write_text("\n".join(lines) + "\n", "utf-8")


def test_the_readme_has_the_four_install_routes() -> None:
    firsts = [b.text.split()[0] for b in ROUTES]
    assert firsts == ["uv", "pipx", "uvx", "python3"], [b.where for b in ROUTES]


def test_the_wheel_holds_the_product_only(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {
        "cooked_mcp",
        "cooked_mcp_generated",
        "cooked_mcp_runtime",
        f"cooked_mcp-{__version__}.dist-info",
    }
    dist_info = f"cooked_mcp-{__version__}.dist-info"
    entry_points = zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()
    assert re.findall(r"^(\S+) = ", entry_points, re.MULTILINE) == ["cooked-mcp"]
    meta = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    assert "Provides-Extra" not in meta and "License-Expression: MIT" in meta
    assert f"{dist_info}/licenses/LICENSE" in names
    assert "cooked_mcp_generated/tools.py" in names and "cooked_mcp/cli.py" in names
    # Test data: the requirement registry exists for the traceability gate, not for the server.
    assert not [n for n in names if n.endswith("/requirements.py")]


def test_the_sdist_holds_the_product_source_only() -> None:
    (sdist,) = DIST.glob("cooked_mcp-*.tar.gz")
    listing = _run(["tar", "tzf", str(sdist)]).split()
    assert not [n for n in listing if re.search(r"/(src/fake|tests|bench|codegen|distribution)/", n)]
    assert any(n.endswith("src/generated/cooked_mcp_generated/tools.py") for n in listing)


@pytest.mark.parametrize("block", ROUTES, ids=lambda b: b.text.split()[0])
async def test_an_install_route_serves_from_a_fresh_environment(
    block: Block, wheel: Path, tools: Path, wheelhouse: Path, running_fake: FakeCooked, tmp_path: Path
) -> None:
    check_syntax(block)
    env = fresh_environment(tmp_path, tools, wheelhouse)
    workdir = tmp_path / "work"
    (workdir / "dist").mkdir(parents=True)
    shutil.copy2(wheel, workdir / "dist" / wheel.name)

    started = time.perf_counter()
    _run(["bash", "-e", "-o", "pipefail", "-c", block.text], env, workdir)
    installed = time.perf_counter()
    command = served_command(block, env)
    assert _run([*command, "--version"], env, workdir).strip() == f"cooked-mcp {__version__}"
    versioned = time.perf_counter()
    served = {
        **env,
        "COOKED_BASE_URL": running_fake.base_url,
        "COOKED_LOGIN_USERNAME": SEED_LOGIN,
        "COOKED_LOGIN_PASSWORD": SEED_PASSWORD,
    }
    _run([*command, "--check"], served, workdir)
    checked = time.perf_counter()
    await one_session(command, served, workdir)
    _record(
        block.text.strip(),
        install=installed - started,
        version=versioned - installed,
        check=checked - versioned,
        session=time.perf_counter() - checked,
    )


async def test_the_client_snippets_that_run_uvx_serve_from_the_wheel(
    wheel: Path, tools: Path, wheelhouse: Path, running_fake: FakeCooked, tmp_path: Path
) -> None:
    """Claude Desktop's uvx entry as Claude Desktop runs it: PATH=/usr/bin:/bin and its env block
    only. Claude Code's line as Claude Code runs it: the shell's environment plus its -e variables.
    The reader's paths are filled in (uvx from the tools venv, the wheel where they saved it)."""
    env = fresh_environment(tmp_path, tools, wheelhouse)
    programs = {
        f"{SNIPPET_HOME}/.local/bin/uvx": str(tools / "uvx"),
        f"{SNIPPET_HOME}/Downloads/{wheel.name}": str(wheel),
    }
    (desktop,) = [d for d in desktop_launches() if d.command.endswith("/uvx")]
    here = as_started_here(desktop, running_fake.base_url, programs)
    await one_client_session(here, {"PATH": DESKTOP_PATH, "HOME": env["HOME"], **here.env}, tmp_path)
    for launch in claude_code_launches():
        here = as_started_here(launch, running_fake.base_url, programs)
        await one_client_session(here, {**env, **here.env}, tmp_path)


@pytest.mark.parametrize(
    ("installer", "advice"), [("uv", "uv tool update-shell"), ("pipx", "pipx ensurepath")]
)
def test_without_local_bin_on_path_the_installer_gives_the_advice_the_readme_repeats(
    installer: str, advice: str, wheel: Path, tools: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    (block,) = [b for b in ROUTES if b.text.split()[0] == installer]
    env = fresh_environment(tmp_path, tools, wheelhouse)
    # A new account's terminal: ~/.local/bin is not on PATH yet; SHELL says which shell to fix.
    env |= {"PATH": f"{tools}:/usr/bin:/bin", "SHELL": "/bin/bash"}
    workdir = tmp_path / "work"
    (workdir / "dist").mkdir(parents=True)
    shutil.copy2(wheel, workdir / "dist" / wheel.name)
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.text], env=env, cwd=workdir, capture_output=True,
        text=True, timeout=STEP_TIMEOUT, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert advice in " ".join((done.stdout + done.stderr).split()), done.stdout + done.stderr
    assert f"`{advice}`" in README.read_text("utf-8")


@pytest.mark.parametrize("read_only", ["false", "true"])
async def test_the_bundle_starts_the_way_its_manifest_says(
    read_only: str, tools: Path, running_fake: FakeCooked, tmp_path: Path
) -> None:
    """`uv run` resolves for every platform the bundle supports, so it needs the real index (PyPI)."""
    assert BUNDLE.exists(), f"{BUNDLE} is missing: run make bundle"
    unpacked = tmp_path / "extension"
    zipfile.ZipFile(BUNDLE).extractall(unpacked)
    manifest = json.loads((unpacked / "manifest.json").read_text("utf-8"))
    assert manifest["server"]["type"] == "uv" and (unpacked / manifest["server"]["entry_point"]).exists()
    assert (unpacked / manifest["icon"]).read_bytes().startswith(b"\x89PNG")
    # What the host fills in: the folder it unpacked to and what the user typed in its form.
    answers = {
        "__dirname": str(unpacked),
        "user_config.username": SEED_LOGIN,
        "user_config.password": SEED_PASSWORD,
        "user_config.base_url": running_fake.base_url,
        "user_config.read_only": read_only,
    }

    def fill(text: str) -> str:
        return re.sub(r"\$\{([^}]+)\}", lambda m: answers[m.group(1)], text)

    config = manifest["server"]["mcp_config"]
    command = [fill(config["command"]), *(fill(a) for a in config["args"])]
    env = {**fresh_environment(tmp_path, tools, None), **{k: fill(v) for k, v in config["env"].items()}}
    command[0] = shutil.which(command[0], path=env["PATH"]) or command[0]
    started = time.perf_counter()
    served = TOOL_NAMES if read_only == "false" else ["read", "preview_recipe_text"]
    await one_session(command, env, tmp_path, served)
    _record(
        f"cooked-mcp.mcpb, read_only={read_only}: uv run from the manifest (installs from PyPI, then the session)",
        install=time.perf_counter() - started,
    )
    assert [t["name"] for t in manifest["tools"]] == TOOL_NAMES
