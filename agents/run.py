"""make agents: every tool's every mode through six agent frameworks' own conversion and call path.

Runs with the project's .venv python (standard library only). It starts the fake Cooked, a
home folder whose config.toml points cooked-mcp at it, and per library one HTTP server with
a bearer token; then runs the library's driver (agents/drivers/, in build/agents/NAME, where
`make agents` installed agents/requirements/NAME.txt) over stdio and over HTTP. A driver
prints one JSON line per verdict; this prints the table and exits 1 on any failure.

    python agents/run.py [NAME ...]      # default: every library

COOKED_MCP=/path/to/cooked-mcp drives another build of the server (e.g. an older commit's, to
see what a change fixed): stdio clients find it first on PATH, the HTTP server is started from it.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
BUILD = ROOT / "build" / "agents"
LIBRARIES = {
    "openai-agents": "openai_agents_driver.py",
    "pydantic-ai": "pydantic_ai_driver.py",
    "langchain": "langchain_driver.py",
    "google-genai": "google_genai_driver.py",
    "fastmcp": "fastmcp_driver.py",
    "smolagents": "smolagents_driver.py",
}
LOGIN = "alice@example.com"
PASSWORD = "correct horse battery staple"
TOKEN = "agents-token-8d41c07e9b"
DRIVER_SECONDS = 600
SERVER = Path(os.environ.get("COOKED_MCP", VENV_BIN / "cooked-mcp"))


def main(names: list[str]) -> int:
    started = time.monotonic()
    unknown = sorted(set(names) - set(LIBRARIES))
    if unknown:
        print(f"unknown libraries {unknown}; known: {', '.join(LIBRARIES)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="cooked-agents-") as scratch:
        fake = subprocess.Popen(
            [str(VENV_BIN / "python"), "-m", "cooked_fake"], stdout=subprocess.PIPE, text=True
        )
        try:
            fake_url = _fake_url(fake)
            env = _environment(Path(scratch), fake_url)
            rows = []
            for name in names or list(LIBRARIES):
                for transport in ("stdio", "http"):
                    rows += _drive(name, transport, env, fake_url)
        finally:
            fake.terminate()
            fake.wait(10)
    return _report(rows, time.monotonic() - started)


def _environment(scratch: Path, fake_url: str) -> dict[str, str]:
    """HOME with a config.toml for the fake, and PATH finding cooked-mcp: what the docs/agent-frameworks.md snippets
    rely on, since MCP stdio clients pass a server only HOME, PATH and a few such variables."""
    config = scratch / "home" / ".config" / "cooked-mcp" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'[cooked]\nbase_url = "{fake_url}"\n[user]\nname = "{LOGIN}"\npassword_cmd = "printf %s \'{PASSWORD}\'"\n',
        encoding="utf-8",
    )
    config.chmod(0o600)
    return {
        "HOME": str(scratch / "home"),
        "PATH": f"{SERVER.parent}:{VENV_BIN}:/usr/bin:/bin",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "NO_PROXY": "127.0.0.1,localhost",
    }


def _drive(name: str, transport: str, env: dict[str, str], fake_url: str) -> list[dict[str, object]]:
    python = BUILD / name / "bin" / "python"
    command = [str(python), str(ROOT / "agents" / "drivers" / LIBRARIES[name]), "--transport", transport]
    command += ["--fake", fake_url]
    server = None
    if transport == "http":
        port = _free_port()
        server = subprocess.Popen(
            [str(SERVER), "--transport", "http", "--http-addr", f"127.0.0.1:{port}"],
            env={**env, "COOKED_MCP_HTTP_TOKEN": TOKEN},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_listening(port)
        command += ["--url", f"http://127.0.0.1:{port}/mcp", "--token", TOKEN]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=DRIVER_SECONDS, check=False
        )
    except subprocess.TimeoutExpired as exc:
        return [_row(name, transport, "run", False, f"the driver ran over {DRIVER_SECONDS} s: {exc}")]
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 and all(row["ok"] for row in rows):
        tail = " ".join(done.stderr.strip().splitlines()[-3:])[:400]
        rows.append(_row(name, transport, "run", False, f"exit {done.returncode}: {tail}"))
    return rows


def _row(library: str, transport: str, case: str, ok: bool, detail: str) -> dict[str, object]:
    return {
        "library": library,
        "transport": transport,
        "case": case,
        "variant": "",
        "ok": ok,
        "detail": detail,
    }


def _report(rows: list[dict[str, object]], seconds: float) -> int:
    """One line per library and transport: modes passed with plain arguments, with strict-filled ones
    (every property of the library's converted schema: null where it allows null, else the plainest
    value), and the other checks (connecting and converting, and any library-specific case)."""
    print(f"\n{'library':<14} {'transport':<9} {'plain':>6} {'strict':>7} {'checks':>7}  verdict")
    groups: dict[tuple[str, str], list[dict[str, object]]] = {}
    for row in rows:
        groups.setdefault((str(row["library"]), str(row["transport"])), []).append(row)
    for (library, transport), group in groups.items():
        cells = []
        for variant in ("plain", "strict"):
            mine = [r for r in group if r["variant"] == variant]
            cells.append(f"{sum(bool(r['ok']) for r in mine)}/{len(mine)}")
        other = [r for r in group if not r["variant"]]
        cells.append(f"{sum(bool(r['ok']) for r in other)}/{len(other)}")
        verdict = "pass" if all(r["ok"] for r in group) else "FAIL"
        print(f"{library:<14} {transport:<9} {cells[0]:>6} {cells[1]:>7} {cells[2]:>7}  {verdict}")
    failures = [r for r in rows if not r["ok"]]
    for r in failures:
        print(f"FAIL {r['library']} {r['transport']} {r['case']} {r['variant']}: {r['detail']}")
    print(f"\nagents: {len(rows) - len(failures)} passed, {len(failures)} failed in {seconds:.0f} s")
    return 1 if failures or not rows else 0


def _fake_url(fake: subprocess.Popen[str]) -> str:
    assert fake.stdout is not None
    for _ in range(50):
        line = fake.stdout.readline()
        match = re.search(r"fake Cooked at (http://\S+)", line)
        if match:
            return match.group(1)
    raise RuntimeError("the fake Cooked did not say where it listens")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/mcp", timeout=2)
        except urllib.error.HTTPError:
            return  # it answers (401 without the token)
        except OSError:
            time.sleep(0.1)
            continue
        return
    raise RuntimeError(f"cooked-mcp did not listen on port {port}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
