"""The code blocks of README.md and docs/ must work as written: a reader copies them verbatim.

The files read are README.md and every hand-written page in docs/ (``DOCS``); the generated
references (tools.md, requirements.md) and the Cooked contract (cooked-api.md, the seed's, as
given) hold no blocks a user runs. Why: a README drifts silently (a renamed flag, a setting that became ``*_cmd``, a
typo in JSON); these tests make the drift a test failure. They prove no product
requirement (other tests do), so they are tooling tests.

Conventions for those files (the test reads every fenced block; others are ignored):

- ```` ```sh ````, ```` ```bash ````, ```` ```shell ```` and ```` ```console ```` blocks are shell.
  In a ``console`` block only lines starting with ``$ `` are commands (the rest is
  output). Every shell block must pass ``bash -n``.
- A shell block right after the line ``<!-- not run here -->`` (an HTML comment, so a reader
  of the rendered README never sees it; blank lines between are allowed) is only syntax-checked. Use it for
  anything that serves forever (plain ``cooked-mcp``, ``--transport http``), needs
  the network or a real account, installs things, or changes the repository.
- A shell block right after ``<!-- install check: COMMAND -->`` is an install route: only
  syntax-checked here; ``make install-check`` (tests/distribution/test_install_routes.py) runs it
  in a fresh environment with the built wheel and then serves with COMMAND.
- Every other shell block is run with ``bash -e -o pipefail`` and must exit 0 within
  60 s (a ``# expect exit N`` line in the block expects status N instead). It runs in
  an empty temporary directory that holds only a ``.venv`` link to the project's
  virtualenv, with HOME in a temporary folder, PATH = ``.venv/bin:/usr/bin:/bin``, and
  a fresh fake Cooked already configured: ``COOKED_BASE_URL`` points at it and
  ``COOKED_LOGIN_USERNAME`` / ``COOKED_LOGIN_PASSWORD`` hold its seed login. So
  ``cooked-mcp --check`` works as written, and a block may use ``$COOKED_BASE_URL``.
- ```` ```json ```` blocks must parse; in an MCP client configuration (``mcpServers`` for
  Claude Desktop and Cursor, ``servers`` for VS Code, where each server says ``"type": "stdio"``
  and an ``${input:ID}`` value names one of the block's ``inputs``) every server's ``command``
  must be an absolute path (a desktop client does not read the shell's PATH) ending in
  ``cooked-mcp`` (or in ``uvx`` whose last argument is ``cooked-mcp``) and every ``env`` key
  must be a variable cooked-mcp reads. Each ``cooked-mcp`` one is started as a desktop client
  starts it (PATH=/usr/bin:/bin, only its ``env``) for one MCP session; the ``uvx`` one, and
  the ``claude mcp add`` line, by ``make install-check``.
- ```` ```toml ```` blocks must parse and load as a cooked-mcp config file through
  ``cooked_mcp.config.load_settings`` for the http transport (its rules include the
  stdio ones). Credentials, and the HTTP token when the block uses ``mcp.http_token_cmd``,
  come from the environment, so no ``*_cmd`` command is ever run. The settings the block
  names (base URL, HTTP address, read-only, log level) must come out as written.
- ```` ```python ```` blocks must compile.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx
import pytest
from generated_requirements import REQUIREMENTS
from mcp import Client, StdioServerParameters
from servers import http_server, server_env

from cooked_fake import SEED_LOGIN, SEED_PASSWORD, FakeCooked
from cooked_mcp import __version__, config
from cooked_mcp.exceptions import ConfigError

pytestmark = pytest.mark.tooling

ROOT: Final = Path(__file__).resolve().parent.parent.parent
README: Final = ROOT / "README.md"
#: The pages whose blocks are checked: the README and the hand-written pages of docs/.
DOCS: Final = (
    README,
    *(
        path
        for path in sorted((ROOT / "docs").glob("*.md"))
        if path.name not in {"tools.md", "requirements.md", "cooked-api.md"}
    ),
)
VENV: Final = Path(sys.executable).parent.parent
NOT_RUN: Final = "not run here"
INSTALL_CHECK: Final = "install check:"
#: An HTML comment on its own line: how a block is marked without the reader seeing it.
_MARKER = re.compile(r"^<!--\s*(.*?)\s*-->$")
RUN_TIMEOUT_SECONDS: Final = 60
SHELL_LANGUAGES: Final = frozenset({"sh", "bash", "shell", "console"})
CHECKED_LANGUAGES: Final = SHELL_LANGUAGES | {"json", "toml", "python"}
_EXPECT_EXIT = re.compile(r"^\s*#\s*expect exit (\d+)\s*$", re.MULTILINE)
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: its info-string language, its text and where it starts."""

    language: str
    text: str
    line: int
    source: str
    #: The text of an HTML comment on the line before the opening fence (blank lines aside), or "".
    marker: str = ""

    @property
    def not_run(self) -> bool:
        return self.marker == NOT_RUN or self.marker.startswith(INSTALL_CHECK)

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def fenced_blocks(markdown: str, source: str = "README.md") -> list[Block]:
    """Every fenced block (CommonMark rules: ``` or ~~~, closed by a fence at least as long)."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, language = len(opening.group(1)), opening.group(2), opening.group(3).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                break
            # Content lines lose at most the opening fence's indentation, as in CommonMark.
            body.append(re.sub(f"^ {{0,{indent}}}", "", lines[j]) if indent else lines[j])
            j += 1
        before = [line.strip() for line in lines[:i] if line.strip()]
        marker = _MARKER.match(before[-1]) if before else None
        blocks.append(
            Block(language, "\n".join(body) + "\n", i + 1, source, marker.group(1) if marker else "")
        )
        i = j + 1
    return blocks


def shell_script(block: Block) -> str:
    """The commands of a shell block; a console block keeps only its ``$ `` lines."""
    if block.language != "console":
        return block.text
    commands = [line[2:] for line in block.text.splitlines() if line.startswith("$ ")]
    return "\n".join(commands) + "\n"


def _readme_blocks() -> list[Block]:
    return [
        b
        for path in DOCS
        if path.exists()
        for b in fenced_blocks(path.read_text("utf-8"), str(path.relative_to(ROOT)))
        if b.language in CHECKED_LANGUAGES
    ]


BLOCKS: Final = _readme_blocks()


def _params(*languages: str, run: bool | None = None) -> list[Any]:
    chosen = [b for b in BLOCKS if b.language in languages and (run is None or b.not_run != run)]
    return [pytest.param(b, id=f"{b.source}-{b.language}-line{b.line}") for b in chosen]


# --- shell ---------------------------------------------------------------------------------------


def check_syntax(block: Block) -> None:
    result = subprocess.run(
        ["bash", "-n"],
        input=shell_script(block),
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert result.returncode == 0, f"{block.where}: bash -n fails:\n{result.stderr}"


def expected_status(block: Block) -> int:
    """0, unless the block says ``# expect exit N`` (a console block: ``$ # expect exit N``)."""
    match = _EXPECT_EXIT.search(shell_script(block))
    return int(match.group(1)) if match else 0


@dataclass(frozen=True)
class Ran:
    status: int
    stdout: str
    stderr: str


def run_block(block: Block, workdir: Path, env: Mapping[str, str]) -> Ran:
    """Run with bash -e in its own process group, so a timeout also ends anything it started."""
    process = subprocess.Popen(
        ["bash", "-e", "-o", "pipefail", "-c", shell_script(block)],
        cwd=workdir,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(
            f"{block.where}: still running after {RUN_TIMEOUT_SECONDS} s. A command that serves "
            f"forever (cooked-mcp without --check) belongs in a block right after a '<!-- {NOT_RUN} -->' line.\n"
            f"stdout:\n{stdout}\nstderr:\n{stderr}"
        )
    return Ran(process.returncode, stdout, stderr)


@pytest.fixture
def shell_env(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """An empty working directory with only .venv in it, and a fake Cooked configured."""
    workdir = tmp_path / "work"
    home = tmp_path / "home"
    workdir.mkdir()
    home.mkdir()
    (workdir / ".venv").symlink_to(VENV, target_is_directory=True)
    with FakeCooked() as fake:
        yield (
            workdir,
            {
                "PATH": f"{workdir / '.venv' / 'bin'}:/usr/bin:/bin",
                "HOME": str(home),
                "LANG": "C.UTF-8",
                "COOKED_BASE_URL": fake.base_url,
                "COOKED_LOGIN_USERNAME": SEED_LOGIN,
                "COOKED_LOGIN_PASSWORD": SEED_PASSWORD,
            },
        )


@pytest.mark.parametrize("block", _params(*SHELL_LANGUAGES))
def test_shell_blocks_are_valid_bash(block: Block) -> None:
    check_syntax(block)


@pytest.mark.parametrize("block", _params(*SHELL_LANGUAGES, run=True))
def test_shell_blocks_run_against_a_fake_cooked(block: Block, shell_env: tuple[Path, dict[str, str]]) -> None:
    workdir, env = shell_env
    ran = run_block(block, workdir, env)
    expected = expected_status(block)
    assert ran.status == expected, (
        f"{block.where}: exit status {ran.status}, expected {expected}\n"
        f"script:\n{shell_script(block)}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
    )


# --- json, toml, python --------------------------------------------------------------------------

#: Every environment variable cooked-mcp reads, from the config module's own constants.
KNOWN_ENV: Final = frozenset(config.environment_variables()) | {"HOME", "XDG_CONFIG_HOME", "PATH"}


#: The key each client reads its servers from: Claude Desktop and Cursor, then VS Code.
CLIENT_KEYS: Final = ("mcpServers", "servers")
_INPUT = re.compile(r"\$\{input:([^}]+)\}")


def check_json(block: Block) -> None:
    try:
        data = json.loads(block.text)
    except json.JSONDecodeError as exc:
        pytest.fail(f"{block.where}: invalid JSON: {exc}")
    data = data if isinstance(data, dict) else {}
    inputs = {entry.get("id") for entry in data.get("inputs", [])}
    for key in CLIENT_KEYS:
        for name, server in data.get(key, {}).items():
            where = f"{block.where}: {key}.{name}"
            if key == "servers":  # VS Code loads no server whose type it is not told
                assert server.get("type") == "stdio", f"{where}.type is not 'stdio'"
            command = str(server.get("command", ""))
            assert command.startswith("/"), f"{where}.command is not an absolute path"
            if command.endswith("/uvx"):
                command = str((server.get("args") or [""])[-1])
            assert command.endswith("cooked-mcp"), f"{where}.command is {command!r}"
            unknown = sorted(set(server.get("env", {})) - KNOWN_ENV)
            assert not unknown, f"{where}.env has unknown variables {unknown}"
            for value in server.get("env", {}).values():
                for wanted in _INPUT.findall(str(value)):
                    assert wanted in inputs, (
                        f"{where}.env asks for the input {wanted!r}, which is not declared"
                    )


#: TOML keys whose loaded value can be compared with what the file says.
_SETTING_OF: Final[dict[tuple[str, str], Callable[[config.Settings], object]]] = {
    ("cooked", "base_url"): lambda s: s.base_url,
    ("mcp", "http_addr"): lambda s: f"{s.http_addr.host}:{s.http_addr.port}",
    ("mcp", "read_only"): lambda s: s.read_only,
    ("log", "level"): lambda s: s.log_level,
}


def check_toml(block: Block, folder: Path) -> None:
    try:
        data = tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as exc:
        pytest.fail(f"{block.where}: invalid TOML: {exc}")
    path = folder / "config.toml"
    path.write_text(block.text, encoding="utf-8")
    environ = {
        "HOME": str(folder),
        # Credentials from the environment win, so no user.*_cmd command is ever run here.
        "COOKED_LOGIN_USERNAME": SEED_LOGIN,
        "COOKED_LOGIN_PASSWORD": SEED_PASSWORD,
    }
    if "http_token_cmd" in data.get("mcp", {}):
        environ["COOKED_MCP_HTTP_TOKEN"] = "readme-test-token"  # wins, so the command is not run either
    try:
        # As the http transport: its extra rules (a token for non-loopback addresses and for
        # allowed_hosts/origins) apply on top of everything a stdio config must satisfy.
        settings = config.load_settings(config_path=str(path), environ=environ, transport="http")
    except ConfigError as exc:
        pytest.fail(f"{block.where}: cooked-mcp rejects this config: {exc}")
    for (table, key), setting in _SETTING_OF.items():
        if key in data.get(table, {}):
            written, loaded = data[table][key], setting(settings)
            if isinstance(written, str) and isinstance(loaded, str):
                written, loaded = written.rstrip("/").lower(), loaded.rstrip("/").lower()
            assert loaded == written, f"{block.where}: {table}.{key} = {written!r} loads as {loaded!r}"


def check_data(block: Block, folder: Path) -> None:
    if block.language == "json":
        check_json(block)
    elif block.language == "toml":
        check_toml(block, folder)
    else:
        compile(block.text, block.where, "exec")


@pytest.mark.parametrize("block", _params("json", "toml", "python"))
def test_json_toml_and_python_blocks_are_valid(block: Block, tmp_path: Path) -> None:
    check_data(block, tmp_path)


def test_the_readme_has_checked_blocks() -> None:
    """Zero blocks would turn every test above into nothing; that must not pass quietly."""
    assert README.exists(), "README.md is missing"
    languages = {b.language for b in BLOCKS}
    assert SHELL_LANGUAGES & languages, f"no shell block found in README.md (found: {sorted(languages)})"
    assert {b.source for b in BLOCKS} >= {"README.md", "docs/configuration.md", "docs/check.md"}


# --- the checks themselves, on a sample README ---------------------------------------------------

SAMPLE = """\
# Sample

<!-- not run here -->
```sh
cooked-mcp
```

```bash
echo "$COOKED_BASE_URL" | grep -q '^http://127.0.0.1:'
cooked-mcp --version
```

````console
$ cooked-mcp --transport nope
cooked-mcp: unknown transport 'nope' ...
$ echo done
````

```console
$ # expect exit 2
$ cooked-mcp --transport nope
```

```json
{"mcpServers": {"Cooked": {"command": "/x/.venv/bin/cooked-mcp", "env": {"COOKED_LOGIN_USERNAME": "a"}}}}
```

```toml
[cooked]
base_url = "https://cooked.example"
[user]
name = "alice"
password_cmd = "exit 1"
```

```
not checked
```
"""


def test_the_not_run_marker_is_invisible_to_a_reader() -> None:
    """The marker is an HTML comment before the fence, not a line inside the block a reader copies."""
    for path in DOCS:
        assert "# not run here" not in path.read_text("utf-8"), path
    assert any(b.not_run for b in BLOCKS), "no block is marked as not run: the marker may be misspelt"
    old_style = "```sh\n# not run here\ncooked-mcp\n```\n"
    assert not fenced_blocks(old_style)[0].not_run


def test_blocks_are_found_with_their_language_and_line() -> None:
    blocks = fenced_blocks(SAMPLE, "sample.md")
    assert [(b.language, b.line) for b in blocks] == [
        ("sh", 4),
        ("bash", 8),
        ("console", 13),
        ("console", 19),
        ("json", 24),
        ("toml", 28),
        ("", 36),
    ]
    assert blocks[0].not_run and not blocks[1].not_run
    assert shell_script(blocks[2]) == "cooked-mcp --transport nope\necho done\n"


def test_sample_blocks_pass_or_fail_as_the_conventions_say(
    tmp_path: Path, shell_env: tuple[Path, dict[str, str]]
) -> None:
    workdir, env = shell_env
    sh, bash, failing, expected_failure, json_block, toml_block, _ = fenced_blocks(SAMPLE, "sample.md")
    for block in (sh, bash, failing, expected_failure):
        check_syntax(block)
    assert run_block(bash, workdir, env).status == 0
    ran = run_block(failing, workdir, env)
    assert ran.status == 2 and "unknown transport" in ran.stderr  # bash -e stops at the first failure
    assert expected_status(expected_failure) == 2
    assert run_block(expected_failure, workdir, env).status == 2
    check_json(json_block)
    check_toml(toml_block, tmp_path)  # password_cmd would fail, but the environment wins


@pytest.mark.parametrize(
    ("text", "language", "message"),
    [
        pytest.param("if true; then echo\n", "sh", "bash -n fails", id="shell-syntax"),
        pytest.param('{"a": 1,}\n', "json", "invalid JSON", id="json-syntax"),
        pytest.param(
            '{"mcpServers": {"C": {"command": "/x/cooked-mcp", "env": {"COOKED_PASSWORD": "x"}}}}\n',
            "json",
            "unknown variables",
            id="json-unknown-env",
        ),
        pytest.param(
            '{"mcpServers": {"C": {"command": "uvx", "args": ["cooked-mcp"]}}}\n',
            "json",
            "not an absolute path",
            id="json-command-on-path",
        ),
        pytest.param("[user\n", "toml", "invalid TOML", id="toml-syntax"),
        pytest.param('[user]\npasword = "x"\n', "toml", "rejects this config", id="toml-unknown-key"),
        pytest.param(
            '[cooked]\nbase_url = "https://cooked.wiki/api"\n',
            "toml",
            "rejects this config",
            id="toml-bad-url",
        ),
        pytest.param(
            '[mcp]\nhttp_addr = "0.0.0.0:8123"\n', "toml", "rejects this config", id="toml-open-without-token"
        ),
    ],
)
def test_broken_blocks_fail_naming_the_line(text: str, language: str, message: str, tmp_path: Path) -> None:
    block = Block(language, text, 7, "sample.md")
    with pytest.raises((AssertionError, pytest.fail.Exception), match=message) as caught:
        if language == "sh":
            check_syntax(block)
        elif language == "json":
            check_json(block)
        else:
            check_toml(block, tmp_path)
    assert "sample.md:7" in str(caught.value)


# --- what a first-time reader meets ---------------------------------------------------------------


def test_the_performance_page_leaves_pass_and_fail_to_the_benchmark_report() -> None:
    """Users read figures and their meaning; verdicts against targets live in bench/results.md."""
    page = (ROOT / "docs" / "performance.md").read_text("utf-8")
    assert "| PASS |" not in page and "| FAIL |" not in page
    assert "bench/results.md" in page


def test_the_performance_page_opens_with_the_answer_and_leaves_method_and_history_to_bench() -> None:
    """Issue 42 item 12: the page was 310 lines of lab notebook. Its first paragraph answers
    "what does cooked-mcp add to a call" in at most five lines; the method and the runs behind it
    are bench/'s, one link away, and every link there resolves."""
    page = (ROOT / "docs" / "performance.md").read_text("utf-8")
    answer = page.split("\n\n")[1]
    assert answer.startswith("**What cooked-mcp adds to a tool call:**") and len(answer.splitlines()) <= 5
    assert len(page.splitlines()) < 60
    for moved in ("bench/README.md", "bench/history.md"):
        assert f"](../{moved})" in page, moved
    bench = {path.name: path.read_text("utf-8") for path in (ROOT / "bench").glob("*.md")}
    assert "python -m bench.ab" in bench["README.md"] and "A session of its own" in bench["README.md"]
    assert "Beside a CPU-bound process" in bench["history.md"]
    for name, text in bench.items():
        for link in re.findall(r"\]\(([^)#:]+)(?:#[\w-]*)?\)", text):
            assert (ROOT / "bench" / link).exists(), f"bench/{name} links to {link}, which does not exist"


def test_the_architecture_page_counts_the_requirements_there_are() -> None:
    """It said 25 of cooked-mcp's own (and 287 in all) after COMPLETION.5-7 made them 28."""
    page = " ".join((ROOT / "docs" / "architecture.md").read_text("utf-8").split())
    own = sum(r.feature == "extensions" for r in REQUIREMENTS.values())
    seed = len(REQUIREMENTS) - own
    assert f"({seed} numbered requirements," in page and f"own requirements beyond it ({own}," in page
    total = len(REQUIREMENTS)
    assert f"`requirements: {total}/{total} proven, 0 pending` (the seed's {seed} and {own} of" in page


def test_contributor_and_stopping_texts_are_where_their_readers_look() -> None:
    """Issue 42 item 12: "Adding a setting" is for contributors (architecture.md), how cooked-mcp
    stops is configuration (configuration.md), and no page or skip reason names a folder that a
    clone of the project never has."""
    configuration = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    architecture = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    readme = README.read_text("utf-8")
    assert "## Adding a setting" not in configuration and "### Adding a setting" in architecture
    assert "Stopping it" not in readme and "## Stopping it" in configuration
    stopping = configuration.split("## Stopping it", 1)[1].split("\n## ", 1)[0]
    for fact in ("exit status 130", "143 for `SIGTERM`", "up\nto 3 seconds", "`stop_grace_seconds`"):
        assert fact in stopping, fact
    elsewhere = "../" + "shared"  # spelt so that this file does not hold it either
    for page in [*DOCS, ROOT / "SECURITY.md", ROOT / "CHANGELOG.md", *(ROOT / "bench").glob("*.md")]:
        assert elsewhere not in page.read_text("utf-8"), page
    for test_file in (ROOT / "tests").rglob("*.py"):
        assert elsewhere not in test_file.read_text("utf-8"), test_file


def test_the_configuration_page_says_what_any_other_path_answers_as_the_server_does(tmp_path: Path) -> None:
    """Issue 42 item 16: the page said every other path is 404, but with a token set a request
    without it is 401 whatever its path."""
    page = " ".join((ROOT / "docs" / "configuration.md").read_text("utf-8").split())
    assert (
        "every other path is `404`, except that with a bearer token set a request without the right "
        "token gets `401` whatever its path (`GET /` included"
    ) in page
    with FakeCooked() as fake:
        env = {**server_env(tmp_path, fake.base_url), "COOKED_MCP_HTTP_TOKEN": "readme-token"}
        with http_server(env) as server:
            assert httpx.get(f"{server.origin}/", timeout=10).status_code == 401
            token = {"Authorization": "Bearer readme-token"}
            assert httpx.get(f"{server.origin}/", headers=token, timeout=10).status_code == 404


def test_the_readme_and_make_help_give_the_same_time_for_make_test_and_how_to_pick_python() -> None:
    text = README.read_text("utf-8")
    said = re.search(r"`make test` takes (\d+ to \d+ minutes) on a 2-core machine", text)
    assert said, "the README does not say how long make test takes"
    done = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert f"({said.group(1)} on 2 cores)" in done.stdout
    assert "make PYTHON=" in text


def test_the_readme_is_the_first_ten_minutes_and_links_each_page_once() -> None:
    """The rest lives in docs/: each page one link away, none repeated."""
    text = README.read_text("utf-8")
    assert len(text.splitlines()) < 250
    for page in [
        *DOCS[1:],
        ROOT / "docs" / "cooked-api.md",
        ROOT / "docs" / "tools.md",
        ROOT / "SECURITY.md",
    ]:
        target = page.relative_to(ROOT).as_posix()
        assert len(re.findall(rf"\]\({re.escape(target)}(#[\w-]+)?\)", text)) == 1, target
    for heading in ("## Try it in two commands", "## Install for real use", "## Client set-up"):
        assert heading in text
    # Each page's own links resolve to files that exist.
    for page in DOCS:
        for link in re.findall(r"\]\(([^)#:]+)(?:#[\w-]*)?\)", page.read_text("utf-8")):
            assert (page.parent / link).exists(), f"{page.name} links to {link}, which does not exist"


def test_the_node_version_stated_is_the_pinned_inspectors_minimum() -> None:
    lock = json.loads((ROOT / "interop" / "package-lock.json").read_text("utf-8"))
    engines = lock["packages"]["node_modules/@modelcontextprotocol/inspector"]["engines"]["node"]
    minimum = engines.removeprefix(">=").removesuffix(".0")
    assert f"Node.js {minimum} or newer" in (ROOT / "docs" / "architecture.md").read_text("utf-8")


def test_make_help_lists_every_target_and_the_changelog_exists() -> None:
    makefile = (ROOT / "Makefile").read_text("utf-8")
    targets = {t for line in re.findall(r"^\.PHONY:(.*)$", makefile, re.MULTILINE) for t in line.split()}
    done = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = set(re.findall(r"^make ([\w-]+)", done.stdout, re.MULTILINE)) | {"help"}
    assert targets - {"generate-check"} <= listed, targets - listed
    changelog = (ROOT / "CHANGELOG.md").read_text("utf-8")
    assert changelog.startswith("# Changelog")
    # The newest heading is the version --version prints, so a wheel never holds an unnamed section.
    newest = re.search(r"^## (.+)$", changelog, re.MULTILINE)
    assert newest and newest.group(1).startswith(f"{__version__} — "), newest


def test_the_readme_shows_how_to_give_the_inspector_the_token_as_make_interop_does() -> None:
    """The Inspector starts interactive OAuth when it meets a 401 it was given no token for; the
    README's example must pass the token with the flags make interop proves the Inspector takes."""
    blocks = [
        b.text
        for b in _readme_blocks()
        if re.search(r"@modelcontextprotocol/inspector(@[\d.]+)? --cli", b.text)
    ]
    assert blocks, "the README shows no Inspector command with a bearer token"
    command = " ".join(blocks[0].replace("\\\n", " ").split())
    for flags in (
        "--transport http",
        '--header "Authorization: Bearer $COOKED_MCP_HTTP_TOKEN"',
        "--stored-auth-only",
    ):
        assert flags in command, flags
    interop = (ROOT / "interop" / "run.mjs").read_text("utf-8")
    assert '"--transport", "http"' in interop
    assert '["--header", `Authorization: Bearer ${TOKEN}`, "--stored-auth-only"]' in interop


# --- the client set-up snippets, started the way each client starts them ----------------------------

#: The home folder the snippets show; a reader replaces it with what ``command -v`` prints.
SNIPPET_HOME: Final = "/home/you"
#: What Claude Desktop gives a server it starts: its own minimal PATH, none of the shell's.
DESKTOP_PATH: Final = "/usr/bin:/bin"


@dataclass(frozen=True)
class ClientLaunch:
    """One client snippet as the client runs it: the program, its arguments and the variables it sets."""

    block: Block
    command: str
    args: tuple[str, ...]
    env: dict[str, str]


def desktop_launches() -> list[ClientLaunch]:
    """Every server of every desktop client's JSON block: ``mcpServers`` (Claude Desktop,
    Cursor) and ``servers`` (VS Code)."""
    launches = []
    for block in BLOCKS:
        data = json.loads(block.text) if block.language == "json" else {}
        for key in CLIENT_KEYS if isinstance(data, dict) else ():
            for server in data.get(key, {}).values():
                args, env = tuple(server.get("args", ())), dict(server.get("env", {}))
                launches.append(ClientLaunch(block, server["command"], args, env))
    return launches


def claude_code_launches() -> list[ClientLaunch]:
    """Every ``claude mcp add NAME [-e VAR=VALUE]... -- COMMAND ARGS`` (stdio) line."""
    launches = []
    for block in BLOCKS:
        for line in shell_script(block).replace("\\\n", " ").splitlines():
            words = shlex.split(line) if line.startswith("claude mcp add ") else []
            if not words or "--" not in words:
                continue
            options, command = words[4 : words.index("--")], words[words.index("--") + 1 :]
            env = dict(
                value.split("=", 1) for flag, value in itertools.pairwise(options) if flag in ("-e", "--env")
            )
            launches.append(ClientLaunch(block, command[0], tuple(command[1:]), env))
    return launches


def test_every_client_snippet_carries_the_credentials_and_names_absolute_programs() -> None:
    """What the first attempt showed: a bare uvx in Claude Desktop and a claude mcp add with no login."""
    desktop, code = desktop_launches(), claude_code_launches()
    assert {launch.command.rsplit("/", 1)[-1] for launch in desktop} == {"cooked-mcp", "uvx"}
    assert code, "no 'claude mcp add ... -- COMMAND' line found"
    for launch in [*desktop, *code]:
        assert {"COOKED_LOGIN_USERNAME", "COOKED_LOGIN_PASSWORD"} <= set(launch.env), launch.block.where
    for launch in desktop:
        assert launch.command.startswith(f"{SNIPPET_HOME}/"), launch.block.where


def as_started_here(launch: ClientLaunch, base_url: str, programs: Mapping[str, str]) -> ClientLaunch:
    """The snippet with the reader's own paths filled in (``programs``: a snippet path -> where it is
    here) and the fake Cooked's login in place of the example one; nothing else changes."""

    def filled(word: str) -> str:
        return programs.get(word, word)

    env = {**launch.env, "COOKED_LOGIN_USERNAME": SEED_LOGIN, "COOKED_LOGIN_PASSWORD": SEED_PASSWORD}
    env["COOKED_BASE_URL"] = base_url  # as the README says: the same variables connect it to the fake
    return ClientLaunch(launch.block, filled(launch.command), tuple(map(filled, launch.args)), env)


async def one_client_session(launch: ClientLaunch, env: Mapping[str, str], cwd: Path) -> None:
    """initialize, tools/list and a read, over stdio, with exactly the environment given."""
    params = StdioServerParameters(
        command=launch.command, args=list(launch.args), env=dict(env), cwd=str(cwd)
    )
    async with Client(params, read_timeout_seconds=120) as client:
        assert len((await client.list_tools()).tools) == 5, launch.block.where
        result = await client.call_tool("read", {"target": "shopping_list"})
        assert not result.is_error, (launch.block.where, result)


def test_there_is_a_snippet_for_claude_desktop_vs_code_and_cursor_each_in_its_clients_form() -> None:
    """Issue 42 item 10: pasting Claude Desktop's block into VS Code loads nothing."""
    forms = [next(k for k in CLIENT_KEYS if f'"{k}"' in d.block.text) for d in desktop_launches()]
    assert forms.count("mcpServers") == 3 and forms.count("servers") == 1, forms  # Claude Desktop twice
    text = README.read_text("utf-8")
    for where in (
        "`.vscode/mcp.json`",
        "`~/.cursor/mcp.json`",
        "`.cursor/mcp.json`",
        "`claude_desktop_config.json`",
    ):
        assert where in text, where


@pytest.mark.anyio
@pytest.mark.parametrize(
    "launch",
    [pytest.param(d, id=d.block.where) for d in desktop_launches() if d.command.endswith("/cooked-mcp")],
)
async def test_each_desktop_client_snippet_serves_with_a_desktop_clients_environment(
    launch: ClientLaunch, tmp_path: Path
) -> None:
    """Claude Desktop's, VS Code's and Cursor's: PATH=/usr/bin:/bin and the snippet's env block
    only (the password the person types for VS Code's input); the installed command stands where
    ``command -v cooked-mcp`` would point after ``uv tool install`` (the venv's own, here)."""
    with FakeCooked() as fake:
        here = as_started_here(launch, fake.base_url, {launch.command: str(VENV / "bin" / "cooked-mcp")})
        await one_client_session(here, {"PATH": DESKTOP_PATH, "HOME": str(tmp_path), **here.env}, tmp_path)
        assert any(r.path == "/api/public/login" for r in fake.requests)


def inspector_snippet() -> tuple[Block, list[str]]:
    """The README's ``npx @modelcontextprotocol/inspector`` command for the web UI, as words."""
    (block,) = [
        b
        for b in BLOCKS
        if b.source == "README.md" and "@modelcontextprotocol/inspector" in b.text and "--cli" not in b.text
    ]
    joined = block.text.replace("\\\n", " ")
    (line,) = [line for line in joined.splitlines() if "@modelcontextprotocol/inspector" in line]
    return block, shlex.split(line)


@pytest.mark.anyio
async def test_the_inspector_snippet_passes_every_setting_with_e_and_serves_with_only_those(
    tmp_path: Path,
) -> None:
    """Issue 42 item 9: the variables stood in front of npx, and Inspector 2.x starts the server
    with none of the shell's, so it failed with "no Cooked username or password configured".
    Here cooked-mcp starts with the snippet's -e variables only (the fake on a free port in place
    of 8900), and the version and Node.js minimum it states are the pinned Inspector's."""
    block, words = inspector_snippet()
    assert words[0] == "npx" and "=" not in words[0], "a VAR=value before npx never reaches the server"
    package = json.loads((ROOT / "interop" / "package.json").read_text("utf-8"))
    assert (
        words[1]
        == f"@modelcontextprotocol/inspector@{package['devDependencies']['@modelcontextprotocol/inspector']}"
    )
    settings = dict(value.split("=", 1) for flag, value in itertools.pairwise(words) if flag == "-e")
    assert settings == {
        "COOKED_BASE_URL": "http://127.0.0.1:8900",  # where the block's first line starts the fake
        "COOKED_LOGIN_USERNAME": SEED_LOGIN,
        "COOKED_LOGIN_PASSWORD": SEED_PASSWORD,
    }
    assert "--port 8900" in block.text
    server = words[words.index("--") + 1 :]
    assert server == [".venv/bin/cooked-mcp"], server
    lock = json.loads((ROOT / "interop" / "package-lock.json").read_text("utf-8"))
    engines = lock["packages"]["node_modules/@modelcontextprotocol/inspector"]["engines"]["node"]
    assert f"needs Node.js {engines.removeprefix('>=').removesuffix('.0')} or newer" in README.read_text(
        "utf-8"
    )
    with FakeCooked() as fake:
        launch = ClientLaunch(block, str(VENV / "bin" / "cooked-mcp"), (), {})
        await one_client_session(launch, {**settings, "COOKED_BASE_URL": fake.base_url}, tmp_path)
        assert any(r.path == "/api/public/login" for r in fake.requests)


SHARED_CONTRACT: Final = ROOT.parent / "shared" / "cooked-api.md"


@pytest.mark.skipif(
    not SHARED_CONTRACT.exists(),
    reason="the seed's original Cooked contract (kept by the maintainers, not in a clone) is not beside "
    "this checkout, so docs/cooked-api.md has nothing to be compared with",
)
def test_the_cooked_contract_in_docs_is_the_shared_one_byte_for_byte() -> None:
    """docs/cooked-api.md is the copy users get (the --check legend points at it): never reworded."""
    assert (ROOT / "docs" / "cooked-api.md").read_bytes() == SHARED_CONTRACT.read_bytes()
