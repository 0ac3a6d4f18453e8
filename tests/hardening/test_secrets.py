"""ONE suite for secrecy: canary values in every secret, every failure path, every output searched.

Canaries are distinctive values planted where the secrets live: the Cooked login name,
password and canonical username, the session cookie (the fake issues a fixed canary value),
what credential commands print on stdout and stderr, and the HTTP bearer token. The server
is then driven through the paths most likely to leak them, with debug logging on:

- a wrong password, failing credential commands (stderr, stdout, a timeout);
- Cooked errors that echo the request back (every status, the login too, in the message,
  the code and percent-encoded), and a 200 whose wrong-shaped body holds the canaries;
- HTTP requests without the token, with a wrong one, with the token in the URL;
- ordinary use of every tool.

Every output is searched for every canary in each spelling a leak would take (raw,
percent-encoded, JSON-escaped, bytes repr, escaped, and with its spaces spelt as a newline,
tab, two spaces, NBSP, zero-width space or U+2028): the process's stderr (its log) and
stdout, every tool result and MCP error. Cooked's echoes use all those spellings too. stdout must hold nothing but JSON-RPC. Separately, the log redaction
filter, the second line of defence, is tested on its own.

The canonical username may legitimately appear as a recipe's ``owner`` (it is account data
Cooked returns); this suite never reads a recipe that account owns, so any sighting is a leak.
"""

from __future__ import annotations

import base64
import html
import io
import json
import logging
import sys
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest
from anyio.from_thread import BlockingPortal
from canaries import FULLWIDTH, SPACES, SPELLINGS, spellings
from hardening_support import (
    FIGURES,
    LOGIN_PATH,
    OPERATIONS,
    find_canaries,
    non_json_rpc_lines,
    succeeded,
    traced_stdio_client,
)
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import SecretStr
from servers import (
    SHORT_COMMAND_TIMEOUT,
    http_client,
    http_server,
    patched,
    python_command,
    run_main,
    run_server,
    server_env,
)
from sessions import call, text_of

from cooked_fake import FakeCooked
from cooked_mcp import logging_setup
from cooked_mcp.app import build_application
from cooked_mcp.config import load_settings
from cooked_mcp.cooked.client import CookedClient
from cooked_mcp.exceptions import ConfigError
from cooked_mcp.logging_setup import RedactionFilter, configure_logging
from cooked_mcp.redaction import REDACTED, redact

pytestmark = pytest.mark.anyio

LOGIN = "canary.login+7Qx@example.com"
PASSWORD = 'canary "pw" Z9/q+'
#: A space, a dot and non-ASCII letters: its URL, JSON and bytes-repr spellings all differ from the raw one.
USERNAME = "canary jösé.K3p"
COOKIE = "CanaryCookie_R8v2x"
CMD_STDOUT = "canary-cmd-stdout-M4w"
CMD_STDERR = "canary-cmd-stderr-J7t"
TOKEN = "canary-token-H2n9b"
WRONG_TOKEN = "canary-wrong-token-P5k"
WRONG_PASSWORD = "canary-wrong-pw-Q1z"

CANARIES = {
    "login name": LOGIN,
    "password": PASSWORD,
    "canonical username": USERNAME,
    "session cookie": COOKIE,
    "command stdout": CMD_STDOUT,
    "command stderr": CMD_STDERR,
    "bearer token": TOKEN,
    "wrong bearer token": WRONG_TOKEN,
    "wrong password": WRONG_PASSWORD,
}
#: What Cooked "echoes back" in error bodies: every Cooked-side secret, raw and as a URL would carry it.
ECHO = " | ".join(
    sorted({form for secret in (LOGIN, PASSWORD, USERNAME, COOKIE) for form in spellings(secret)})
)


def assert_no_leaks(outputs: dict[str, str], canaries: dict[str, str] = CANARIES) -> None:
    leaks = find_canaries(outputs, canaries)
    assert not leaks, f"canaries leaked: {leaks}"


@pytest.fixture(scope="module")
def canary_fake() -> Iterator[FakeCooked]:
    """A fake Cooked account whose credentials, username and session cookie are canaries."""
    with FakeCooked() as fake:
        fake.use_account(login=LOGIN, password=PASSWORD, username=USERNAME, session_token=COOKIE)
        yield fake


@pytest.fixture
def cfake(canary_fake: FakeCooked) -> FakeCooked:
    canary_fake.reset()
    return canary_fake


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are valid TOML for ASCII text)."""
    return json.dumps(value)


def canary_env(home: Path, fake: FakeCooked, **extra: str) -> dict[str, str]:
    """Login name from the environment, password from a command (in TOML), debug logging on."""
    env = server_env(home, fake.base_url, login=LOGIN, password="", COOKED_MCP_LOG_LEVEL="debug", **extra)
    del env["COOKED_LOGIN_PASSWORD"]
    command = python_command(
        f"import sys; print({PASSWORD!r}); print({CMD_STDERR!r}, file=sys.stderr); sys.stderr.flush()"
    )
    (home / "config" / "cooked-mcp").mkdir(parents=True, exist_ok=True)
    (home / "config" / "cooked-mcp" / "config.toml").write_text(
        f"[user]\npassword_cmd = {toml_string(command)}\n", "utf-8"
    )
    return env


# --- the redaction filter, on its own -----------------------------------------------------------


def _record(msg: str, *args: object, exc: bool = False, stack: str | None = None) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise RuntimeError(f"failed for {PASSWORD}")
        except RuntimeError:
            exc_info = sys.exc_info()
    record = logging.LogRecord("some.library", logging.DEBUG, __file__, 1, msg, args, exc_info)
    record.stack_info = stack
    return record


def _formatted(redaction: RedactionFilter, record: logging.LogRecord) -> str:
    assert redaction.filter(record) is True  # the filter scrubs; it never drops a record
    return logging.Formatter("%(message)s").format(record)


@pytest.mark.req("authentication.SECRETS.1")
async def test_the_application_registers_the_cookies_of_its_cooked_client(
    cfake: FakeCooked, tmp_path: Path, restore_logging: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session cookie the Cooked client gets at its first call, after logging is set up,
    still reaches the log filter."""
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    configure_logging("debug")
    environ = server_env(tmp_path, cfake.base_url, login=LOGIN, password=PASSWORD)
    async with build_application(load_settings(config_path=None, environ=environ)) as application:
        async with Client(application.server) as client:
            result = await client.call_tool("read", {"target": "shopping_list"})
        assert not result.is_error
        logging.getLogger("some.library").debug("Cookie: ring-session=%s", COOKIE)
    assert REDACTED in stderr.getvalue()
    assert_no_leaks({"log": stderr.getvalue()}, {"session cookie": COOKIE})


@pytest.mark.req("authentication.SECRETS.1", "server.SECURITY.2")
def test_the_redaction_filter_scrubs_message_arguments_tracebacks_and_stacks() -> None:
    redaction = RedactionFilter([LOGIN, PASSWORD, TOKEN, "ab"])
    redaction.add_source(lambda: [COOKIE])
    cases = [
        _record("login %s with %r", LOGIN, PASSWORD),
        _record("GET /api/user/%s/recipes", "canary.login%2B7Qx%40example.com"),
        _record(json.dumps({"password": PASSWORD, "cookie": COOKIE})),
        _record("Authorization: Bearer %s", TOKEN),
        _record("boom", exc=True),
        _record("stack", stack=f"Stack (most recent call last):\n  token={TOKEN}"),
        _record("broken format %s %s", PASSWORD),  # too few arguments: still no secret printed
    ]
    for record in cases:
        text = _formatted(redaction, record)
        for secret in (LOGIN, PASSWORD, TOKEN, COOKIE):
            assert not any(form in text for form in spellings(secret)), text
    assert _formatted(redaction, _record("login %s", LOGIN)) == f"login {REDACTED}"
    # Too short to scrub without garbling every line: left alone, as the Cooked client's redaction does.
    assert _formatted(redaction, _record("abc")) == "abc"
    FIGURES.add("secrets", "redaction_filter_cases", len(cases))


@pytest.mark.req("authentication.SECRETS.1", "authentication.SECRETS.3", "api-client.ERRORS.6")
def test_redaction_catches_other_letter_cases_and_encodings() -> None:
    echoed = f"{LOGIN.upper()} / {quote_plus(PASSWORD)} / {quote(USERNAME)} / {json.dumps(PASSWORD)}"
    scrubbed = redact(echoed, [LOGIN, PASSWORD, USERNAME])
    assert scrubbed == " / ".join([REDACTED] * 3 + [f'"{REDACTED}"']), scrubbed


@pytest.mark.req("authentication.SECRETS.1", "authentication.SECRETS.3", "api-client.ERRORS.6")
def test_redaction_is_not_dodged_by_other_whitespace_or_escaped_spellings() -> None:
    """Each secret, in every spelling ``spellings`` knows (other whitespace in its spaces, bytes
    repr, ``\\xf6`` and ``\\u00f6`` escapes...), inside a log line and inside an error text."""
    secrets = {"login name": LOGIN, "password": PASSWORD, "canonical username": USERNAME}
    redaction = RedactionFilter(secrets.values())
    checked = 0
    for secret in secrets.values():
        for form in spellings(secret):
            assert_no_leaks({"log": _formatted(redaction, _record("Cooked said: %s.", form))}, secrets)
            assert_no_leaks({"error": redact(f"no recipe for {form}!", secrets.values())}, secrets)
            checked += 1
    # What sse_starlette logged of a tool result: a bytes repr, the username in escaped UTF-8.
    chunk = json.dumps({"owner": USERNAME}, ensure_ascii=False).encode()
    assert "\\xc3\\xb6" in str(chunk)
    assert_no_leaks({"log": _formatted(redaction, _record("chunk: %s", chunk))}, secrets)
    # An invisible format character inside a word does not hide it either.
    for invisible in ("\u200b", "\u00ad", "\ufeff"):  # zero-width space, soft hyphen, BOM
        assert redact(f"x {LOGIN[:5]}{invisible}{LOGIN[5:]} y", [LOGIN]) == f"x {REDACTED} y"
    username_forms = " ".join(spellings(USERNAME))
    assert all(spelt in username_forms for spelt in ("j\\xc3\\xb6s", "j\\u00f6s", "j\\xf6s", "canary\u2028j"))
    FIGURES.add("secrets", "redaction_spellings", checked)


@pytest.mark.req("authentication.SECRETS.1", "authentication.SECRETS.3", "api-client.ERRORS.6")
def test_redaction_sees_through_normalisation_and_encodings_inside_other_text() -> None:
    """Issue 30 item 4: each of these passed through before (the NFD form looks the same on screen)."""
    password = "Cnry pass/Zq2x+&w\u00f6rd"
    secrets = [password, LOGIN]
    raw = password.encode()
    hidden = {
        "NFD": unicodedata.normalize("NFD", password),
        "fullwidth": password.translate(FULLWIDTH),
        "twice percent-encoded": quote(quote(password, safe=""), safe=""),
        "an @ twice percent-encoded": LOGIN.replace("@", "%2540"),
        "three times percent-encoded": quote(quote(quote(LOGIN, safe=""), safe=""), safe=""),
        "HTML decimal": "".join(f"&#{ord(char)};" for char in password),
        "HTML hex": "".join(f"&#x{ord(char):x};" for char in password),
        "HTML named, escaped again": html.escape(html.escape(password)),
        "an @ as a named reference": LOGIN.replace("@", "&commat;"),
        "an @ as a reference, escaped again": LOGIN.replace("@", "&amp;#64;"),
        "percent-encoded HTML": quote("".join(f"&#{ord(char)};" for char in password)),
        "base64": base64.b64encode(raw).decode(),
        "URL-safe base64": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "base64 inside a Basic header": base64.b64encode(b"someone:" + raw).decode(),
        **{
            f"base64 after {n} other bytes": base64.b64encode(b"ab"[:n] + raw + b"cd").decode()
            for n in (1, 2)
        },
        **{
            f"base32 after {n} other bytes": base64.b32encode(b"abcd"[:n] + raw).decode().lower()
            for n in (1, 2, 3, 4)
        },
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
    }
    for name, form in hidden.items():
        scrubbed = redact(f"Cooked said: <{form}> (1 of 2)", secrets)
        assert scrubbed.startswith("Cooked said: <") and scrubbed.endswith("> (1 of 2)"), (name, scrubbed)
        assert REDACTED in scrubbed, (name, scrubbed)
    # In a longer base64 text only the characters that hold the secret's bits go ("someone:" stays).
    assert redact(hidden["base64 inside a Basic header"], secrets).startswith("c29tZW9uZTp" + REDACTED)
    # The text around a match stays as it was: only the secret's own characters go.
    assert redact(f"caf\u00e9 &amp; {hidden['NFD']} 50%", secrets) == f"caf\u00e9 &amp; {REDACTED} 50%"
    FIGURES.add("secrets", "normalised_spellings", len(hidden))


@pytest.mark.req("authentication.SECRETS.1", "authentication.SESSION.1")
async def test_the_clients_cookies_reach_the_log_filter_once_registered(
    cfake: FakeCooked, restore_logging: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    configure_logging("debug")  # no static secrets at all: only what the client knows
    async with CookedClient(cfake.base_url, LOGIN, SecretStr(PASSWORD)) as client:
        logging_setup.register_secret_source(client.secret_values)
        await client.get_shopping_list()
        logging.getLogger("some.library").debug("Cookie: ring-session=%s for %s", COOKIE, USERNAME)
    assert REDACTED in stderr.getvalue()
    assert_no_leaks({"log": stderr.getvalue()}, {"session cookie": COOKIE, "canonical username": USERNAME})


@pytest.mark.req("authentication.SECRETS.1", "server.SECURITY.2")
def test_a_failing_secret_source_does_not_stop_logging() -> None:
    def broken() -> list[str]:
        raise RuntimeError("cookie jar changed size during iteration")

    redaction = RedactionFilter([PASSWORD], [broken])
    assert _formatted(redaction, _record("pw=%s", PASSWORD)) == f"pw={REDACTED}"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    libraries = {name: logging.getLogger(name).level for name in logging_setup.QUIET_LIBRARY_LOGGERS}
    active = logging_setup._active
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, library_level in libraries.items():
        logging.getLogger(name).setLevel(library_level)
    logging_setup._active = active


@pytest.mark.req("authentication.SECRETS.1", "server.SECURITY.2", "tools.RESPONSES.7")
def test_configured_logging_writes_only_to_stderr_redacts_and_quiets_http_libraries(
    restore_logging: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", stderr)
    configure_logging("debug", secrets=[LOGIN, PASSWORD, USERNAME, TOKEN])
    logging_setup.register_secret_source(lambda: [COOKIE])

    # What the libraries under the server could say at their most talkative.
    logging.getLogger("httpx").info('HTTP Request: GET http://cooked/api/user/%s/recipes "200 OK"', USERNAME)
    logging.getLogger("httpcore.http11").debug(
        "receive_response_headers: Set-Cookie: ring-session=%s", COOKIE
    )
    logging.getLogger("uvicorn.error").debug("headers: authorization: Bearer %s", TOKEN)
    logging.getLogger("mcp.server.streamable_http").debug("request body: %s", {"password": PASSWORD})
    logging.getLogger("sse_starlette.sse").debug("chunk: %s", json.dumps({"owner": USERNAME}).encode())
    logging.getLogger("cooked_mcp.cooked").debug("login as %s", LOGIN)
    logging.getLogger("cooked_mcp.tools").error("tool failed", exc_info=RuntimeError(f"cookie {COOKIE}"))

    log = stderr.getvalue()
    assert stdout.getvalue() == "", "logging wrote to stdout, which belongs to the stdio transport"
    assert "uvicorn.error" in log and "cooked_mcp.cooked" in log and log.count(REDACTED) >= 4
    # httpx and httpcore are held at WARNING whatever the root level: their lines never appear.
    assert "HTTP Request" not in log and "receive_response_headers" not in log and "chunk:" not in log
    for name in ("httpx", "httpcore", "sse_starlette", "sse_starlette.sse"):
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name
    assert_no_leaks({"log": log}, {k: CANARIES[k] for k in ("login name", "password", "session cookie")})
    assert_no_leaks({"log": log}, {"canonical username": USERNAME, "bearer token": TOKEN})


# --- configuration errors -----------------------------------------------------------------------


def _secret_case(toml: str, environ: dict[str, str], case_id: str, *proves: str) -> Any:
    """One configuration mistake, citing what its error proves: login secrets, the token, or a failing command."""
    return pytest.param(toml, environ, id=case_id, marks=pytest.mark.req(*proves))


_LOGIN_SECRETS = "authentication.SECRETS.3"
_TOKEN_SECRETS = "server.SECURITY.2"
_FAILED_COMMAND = "authentication.CREDENTIALS.20"


@pytest.mark.parametrize(
    ("toml", "environ"),
    [
        _secret_case(
            f"[user]\npassword = {toml_string(PASSWORD)}\npassword_cmd = 'echo {CMD_STDOUT}'\n",
            {},
            "password+cmd",
            _LOGIN_SECRETS,
        ),
        _secret_case(
            f"[user]\nname = {toml_string(LOGIN)}\nname_cmd = 'echo {CMD_STDOUT}'\n",
            {},
            "name+cmd",
            _LOGIN_SECRETS,
        ),
        _secret_case(
            "", {"COOKED_MCP_HTTP_TOKEN": f"{TOKEN} {WRONG_TOKEN}"}, "token-with-space", _TOKEN_SECRETS
        ),
        _secret_case(
            f"[mcp]\nhttp_token = {toml_string(TOKEN)}\nhttp_token_cmd = 'echo {CMD_STDOUT}'\n",
            {},
            "token+cmd",
            _TOKEN_SECRETS,
        ),
        _secret_case(
            "[user]\npassword_cmd = "
            + toml_string(f"echo {CMD_STDOUT}; echo {CMD_STDERR} >&2; exit 3")
            + "\n",
            {},
            "password-cmd-fails",
            _LOGIN_SECRETS,
            _FAILED_COMMAND,
        ),
        _secret_case(
            "[mcp]\nhttp_token_cmd = "
            + toml_string(f"echo {CMD_STDOUT}; echo {CMD_STDERR} >&2; exit 1")
            + "\n",
            {},
            "token-cmd-fails",
            _TOKEN_SECRETS,
            _FAILED_COMMAND,
        ),
    ],
)
def test_configuration_errors_about_secrets_never_show_them(
    tmp_path: Path, toml: str, environ: dict[str, str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml, "utf-8")
    env = {
        "HOME": str(tmp_path),
        "COOKED_LOGIN_USERNAME": LOGIN,
        "COOKED_LOGIN_PASSWORD": PASSWORD,
        **environ,
    }
    if "password" in toml:
        del env["COOKED_LOGIN_PASSWORD"]
    with pytest.raises(ConfigError) as caught:
        load_settings(config_path=str(path), environ=env, transport="http")
    assert_no_leaks({"config error": str(caught.value), "repr": repr(caught.value)})
    FIGURES.add("secrets", "failure_paths")


# --- credential commands: through the real process once, then the entry point in this one ------


@pytest.mark.req(
    "authentication.CREDENTIALS.19",
    "authentication.CREDENTIALS.20",
    "authentication.SECRETS.1",
    "authentication.SECRETS.2",
    "authentication.SECRETS.3",
)
@pytest.mark.parametrize(
    ("setting", "command", "problem"),
    [
        ("password_cmd", f"echo {CMD_STDERR} >&2; exit 1", "failed with exit status 1"),
        ("name_cmd", f"echo {CMD_STDOUT}; exit 1", "failed with exit status 1"),
        ("password_cmd", f"echo {CMD_STDOUT}; echo {CMD_STDERR} >&2; exec sleep 30", "timed out after 0.5 s"),
    ],
    ids=["stderr-then-exit-1", "stdout-then-exit-1", "sleeps-past-the-timeout"],
)
def test_failing_credential_commands_stop_startup_without_their_output(
    tmp_path: Path, setting: str, command: str, problem: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """The command that prints to both streams and then outlives its bound runs under the real
    process, whose stderr its own would reach were it not thrown away; the other two differ only
    in the message, decided by the same code, so they run the entry point here (``run_main``).
    There a command's own stderr would reach this process's file descriptor 2, not the captured
    text, so what reached this process's descriptors is checked too. The bound is cut to 0.5 s."""
    env = server_env(
        tmp_path, "http://127.0.0.1:9", login=LOGIN, password=PASSWORD, COOKED_MCP_LOG_LEVEL="debug"
    )
    del env["COOKED_LOGIN_USERNAME" if setting == "name_cmd" else "COOKED_LOGIN_PASSWORD"]
    config = tmp_path / "config.toml"
    config.write_text(f"[user]\n{setting} = {toml_string(command)}\n", "utf-8")

    started = time.monotonic()
    if "sleep" in command:
        finished = run_server(
            env, "--config", str(config), timeout=20, command=patched(SHORT_COMMAND_TIMEOUT)
        )
    else:
        finished = run_main(env, "--config", str(config))
    elapsed = time.monotonic() - started
    descriptors = capfd.readouterr()

    assert finished.returncode == 2
    assert f"user.{setting} command {problem}" in finished.stderr
    assert elapsed < 10, f"startup took {elapsed:.1f} s: the command's runtime is not bounded"
    assert_no_leaks(
        {
            "stderr": finished.stderr,
            "stdout": finished.stdout,
            "fd 2": descriptors.err,
            "fd 1": descriptors.out,
        }
    )
    FIGURES.add("secrets", "failure_paths")


# --- the real process over stdio, debug logging, every tool, Cooked echoing secrets -------------

#: (method, path, status, body) of Cooked answers that echo the canaries back.
ECHOES: list[tuple[str, str, int, Any]] = [
    ("GET", "/api/saved/r-0001", 404, {"code": "NOT_FOUND", "message": f"no recipe for {ECHO}"}),
    ("GET", f"/api/user/{USERNAME}/recipes", 400, {"code": PASSWORD, "message": ECHO}),
    ("POST", "/api/recipes/preview", 422, {"code": "EXTRACTION_FAILED", "message": ECHO}),
    ("POST", "/api/recipes", 500, {"code": "INTERNAL_ERROR", "message": f"request was {ECHO}"}),
    ("DELETE", "/api/saved/r-0001", 403, {"code": "FORBIDDEN", "message": ECHO}),
    ("GET", f"/api/user/{USERNAME}/shopping-list", 429, {"code": "RATE_LIMITED", "message": ECHO}),
    ("POST", f"/api/user/{USERNAME}/shopping-list/ingredients", 502, f"<html>{ECHO}</html>"),
    ("GET", f"/api/user/{USERNAME}/recipes", 200, {"items": [{"id": PASSWORD, "title": 7, "x": ECHO}]}),
]
#: The tool call that makes each echoing request.
ECHO_CALLS: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {
    ("GET", "/api/saved/r-0001"): ("read", {"target": "recipe", "recipe_id": "r-0001"}),
    ("DELETE", "/api/saved/r-0001"): ("delete_recipe", {"recipe_id": "r-0001"}),
    ("GET", f"/api/user/{USERNAME}/recipes"): ("read", {"target": "recipes"}),
    ("POST", "/api/recipes/preview"): ("preview_recipe_text", {"title": "T", "text": "2 eggs"}),
    ("POST", "/api/recipes"): (
        "save_recipe",
        {"source": "prepared", "title": "T", "markdown": "x", "portions": None},
    ),
    ("GET", f"/api/user/{USERNAME}/shopping-list"): ("read", {"target": "shopping_list"}),
    ("POST", f"/api/user/{USERNAME}/shopping-list/ingredients"): (
        "change_shopping_list",
        {"action": "add", "ingredients": "x"},
    ),
}


@pytest.mark.req(
    "authentication.SECRETS.1",
    "authentication.SECRETS.3",
    "authentication.CREDENTIALS.19",
    "api-client.ERRORS.6",
    "tools.RESPONSES.7",
    "authentication.VERIFICATION.1",
)
def test_stdio_process_at_debug_level_leaks_no_canary_anywhere(
    portal: BlockingPortal, cfake: FakeCooked, tmp_path: Path
) -> None:
    env = canary_env(tmp_path / "home", cfake)
    client, stdout_file, stderr_file = traced_stdio_client(env, tmp_path)
    results: dict[str, str] = {}

    def tool(label: str, name: str, arguments: dict[str, Any]) -> Any:
        result = portal.call(call, stdio, name, arguments)
        results[f"{label}: {name}"] = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
        return result

    with portal.wrap_async_context_manager(client) as stdio:
        # Ordinary use of every tool (the seeded recipes are someone else's: writes get 403s).
        for op in OPERATIONS:
            tool(f"plain {op.label}", op.tool, op.arguments)
        succeeded(tool("plain", "read", {"target": "shopping_list"}))
        assert cfake.requests and cfake.requests[0].path == LOGIN_PATH

        # Cooked echoing the secrets back, in bodies, codes and URL spellings.
        for method, path, status, body in ECHOES:
            cfake.fail(method=method, path=path, status=status, body=body)
            name, arguments = ECHO_CALLS[method, path]
            echoed = tool(f"echo {status} {path}", name, arguments)
            assert echoed.is_error, (status, path, text_of(echoed))
        # A session rejected twice, each time with an echoing message: the auth error path.
        cfake.fail(path=f"/api/user/{USERNAME}/shopping-list", status=401, body={"message": ECHO}, times=2)
        assert tool("persistent 401", "read", {"target": "shopping_list"}).is_error
        # The login itself failing, then rejected (last: rejected credentials are not tried again
        # for a minute, so the call after it is answered from the back-off, without Cooked), all echoing.
        for status in (500, 401):
            cfake.expire_sessions()
            cfake.fail(path=LOGIN_PATH, status=status, body={"code": ECHO, "message": ECHO}, times=2)
            assert tool(f"login {status}", "read", {"target": "shopping_list"}).is_error
            if status == 500:
                cfake.clear_faults()
                succeeded(tool("after a failed login", "read", {"target": "recipes"}))
        logins = cfake.login_count
        assert tool("backed-off login", "read", {"target": "recipes"}).is_error
        assert cfake.login_count == logins
        # Unknown tools and invalid arguments that try to talk about credentials.
        tool("invalid", "read", {"target": "recipe", "password": PASSWORD, "username": LOGIN})
        with pytest.raises(MCPError) as unknown:  # an unknown tool is a JSON-RPC error, not a result
            portal.call(call, stdio, "login_as_admin", {"password": PASSWORD})
        results["unknown tool: login_as_admin"] = unknown.value.message

    stdout, log = stdout_file.read_text("utf-8"), stderr_file.read_text("utf-8")
    assert "cooked-mcp DEBUG cooked_mcp.cooked" in log, "debug logging was not on: the test proves nothing"
    assert non_json_rpc_lines(stdout) == []
    assert len(stdout.splitlines()) >= len(results)
    assert_no_leaks({"stderr log": log, "stdout": stdout, **results})
    FIGURES.add("secrets", "failure_paths", len(ECHOES) + 3 + 2)
    FIGURES.add("secrets", "tool_results_scanned", len(results))


@pytest.mark.req(
    "authentication.LOGIN.4", "authentication.SECRETS.1", "authentication.SECRETS.3", "tools.RESPONSES.7"
)
def test_a_wrong_password_is_an_auth_error_that_names_settings_not_values(
    portal: BlockingPortal, cfake: FakeCooked, tmp_path: Path
) -> None:
    env = server_env(
        tmp_path / "home", cfake.base_url, login=LOGIN, password=WRONG_PASSWORD, COOKED_MCP_LOG_LEVEL="debug"
    )
    client, stdout_file, stderr_file = traced_stdio_client(env, tmp_path)
    with portal.wrap_async_context_manager(client) as stdio:
        results = [portal.call(call, stdio, op.tool, op.arguments) for op in OPERATIONS[:4]]
    for result in results:
        assert result.is_error and "COOKED_LOGIN_PASSWORD" in text_of(result)
    stdout, log = stdout_file.read_text("utf-8"), stderr_file.read_text("utf-8")
    assert non_json_rpc_lines(stdout) == []
    assert_no_leaks({"stderr log": log, "stdout": stdout})
    FIGURES.add("secrets", "failure_paths")


# --- the real process over HTTP: the bearer token and the Cooked secrets -----------------------


def _streamed_tool_call(url: str, headers: dict[str, str]) -> str:
    """A 2025-protocol session whose tool call asks for progress: answered as an SSE stream,
    which sse_starlette logs chunk by chunk at DEBUG unless it is held at WARNING."""
    auth = {**headers, "Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": "2025-06-18"}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    opened = httpx.post(
        url, headers=auth, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    )
    assert opened.status_code == 200, opened.text  # answered in JSON (issue 15 item 10)
    auth["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
    httpx.post(url, headers=auth, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    params = {"name": "read", "arguments": {"target": "shopping_list"}, "_meta": {"progressToken": "p1"}}
    answer = httpx.post(
        url, headers=auth, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    )
    assert answer.headers["content-type"].startswith("text/event-stream") and "aisle" in answer.text.lower()
    return answer.text


@pytest.mark.req("server.SECURITY.2", "authentication.SECRETS.1", "tools.RESPONSES.7")
def test_http_process_at_debug_level_leaks_no_canary_through_auth_failures_or_tools(
    portal: BlockingPortal, cfake: FakeCooked, tmp_path: Path
) -> None:
    env = canary_env(tmp_path / "home", cfake, COOKED_MCP_HTTP_TOKEN=TOKEN)
    answers: dict[str, str] = {}
    with http_server(env) as server:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        attempts = {
            "no token": (server.url, {}),
            "wrong token": (server.url, {"Authorization": f"Bearer {WRONG_TOKEN}"}),
            "token as Basic": (server.url, {"Authorization": f"Basic {TOKEN}"}),
            "token in query": (f"{server.url}?access_token={TOKEN}", {}),
            "token in path": (f"{server.origin}/{TOKEN}", {}),
            "password as token": (server.url, {"Authorization": f"Bearer {PASSWORD.replace(' ', '')}"}),
        }
        for label, (url, extra) in attempts.items():
            response = httpx.post(url, headers={**headers, **extra}, json=body, timeout=10)
            assert response.status_code == 401, label
            answers[label] = f"{response.headers}\n{response.text}"

        async def use_tools() -> list[Any]:
            async with http_client(server.url, TOKEN) as client:
                cfake.fail(path="/api/saved/r-0001", status=404, body={"code": "NOT_FOUND", "message": ECHO})

                return [
                    await call(client, "read", {"target": "shopping_list"}),
                    await call(client, "read", {"target": "recipe", "recipe_id": "r-0001"}),
                    await call(client, "delete_recipe", {"recipe_id": "r-0002"}),
                ]

        for number, result in enumerate(portal.call(use_tools)):
            answers[f"tool result {number}"] = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
        answers["streamed tool result"] = _streamed_tool_call(server.url, headers)
        log = server.stderr()

    assert "DEBUG" in log and "refused POST /mcp" in log, "debug logging was not on: the test proves nothing"
    assert "sse_starlette" not in log, "the SSE library logged the streamed tool results"
    assert_no_leaks({"stderr log": log, **answers})
    FIGURES.add("secrets", "failure_paths", len(attempts) + 1)


# --- the matrix: every secret x every spelling x every channel ---------------------------------
#
# Issue 41 item 3: SECURITY.md lists the spellings it covers; this proves each of them for each
# secret in each channel a secret could leave by, with Cooked echoing it. One server process for
# the served channels and one check run per spelling (in this process) for --check's.

#: Short enough that all four, in the longest spelling, fit in one Cooked message (300 characters);
#: the password's quote is what HTML-escaping changes, so that its "HTML-escaped twice" is not raw.
MATRIX_SECRETS = {
    "password": 'pw "Z\u00f69/q+x',
    "credential-command output": "cmd.L7x@ex",  # the login name, printed by user.name_cmd
    "session cookie": "CkR8v2xQ7m",
    "bearer token": "tok-H2n9bQ",
}
#: Every spelling SECURITY.md lists, and the secret's spaces spelt as each other whitespace.
ECHOED = SPELLINGS | {
    f"spaces as {space!r}": (lambda secret, space=space: secret.replace(" ", space)) for space in SPACES
}
CHANNELS = (
    "log",
    "tool text",
    "structured content",
    "protocol error",
    "--check output",
    "--check --report file",
)
MATRIX_USERNAME = "matrixuser"
BASE64 = ("base64", "URL-safe base64")


@pytest.fixture
def matrix(cfake: FakeCooked, tmp_path: Path) -> Iterator[tuple[FakeCooked, dict[str, str]]]:
    """The fake's account holding the matrix secrets, and the environment of a process holding
    them all: the password from the environment, the login name from a command, the token."""
    secrets = MATRIX_SECRETS
    cfake.use_account(
        login=secrets["credential-command output"],
        password=secrets["password"],
        username=MATRIX_USERNAME,
        session_token=secrets["session cookie"],
    )
    env = server_env(
        tmp_path / "home",
        cfake.base_url,
        password=secrets["password"],
        COOKED_MCP_LOG_LEVEL="debug",
        COOKED_MCP_HTTP_TOKEN=secrets["bearer token"],
    )
    del env["COOKED_LOGIN_USERNAME"]
    config = tmp_path / "home" / "config" / "cooked-mcp" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f"[user]\nname_cmd = \"printf %s '{secrets['credential-command output']}'\"\n", "utf-8")
    yield cfake, env
    cfake.use_account(login=LOGIN, password=PASSWORD, username=USERNAME, session_token=COOKIE)


def _echo(spell: Any, *names: str) -> str:
    return " | ".join(spell(MATRIX_SECRETS[name]) for name in names or MATRIX_SECRETS)


@pytest.mark.req(
    "authentication.SECRETS.1",
    "authentication.SECRETS.3",
    "server.SECURITY.2",
    "api-client.ERRORS.6",
    "tools.RESPONSES.7",
)
def test_no_secret_leaves_by_any_channel_in_any_claimed_spelling(
    portal: BlockingPortal, matrix: tuple[FakeCooked, dict[str, str]], tmp_path: Path
) -> None:
    """Cooked echoes all four secrets in each spelling: in an error's code and message (tool text,
    the log) and in the unused fields of a successful answer (structured content); an unknown
    tool call is answered with a protocol error meanwhile. Then ``--check`` meets the same echoes
    in its steps' errors, codes and an answer's keys (its output, its log, its report)."""
    fake, env = matrix
    leaks: list[tuple[str, str, str]] = []
    scanned: dict[str, int] = dict.fromkeys(CHANNELS, 0)

    def scan(channel: str, spelling: str, text: str) -> None:
        leaks.extend((secret, spelling, channel) for secret in _leaked(text))
        scanned[channel] += 1

    def _leaked(text: str) -> list[str]:
        """The secrets some spelling of which is in ``text``: in any letter case, but base64 as it is
        (its letter case is data: base64 of another case is another encoding, not claimed)."""
        folded = text.casefold()
        return [
            name
            for name, secret in MATRIX_SECRETS.items()
            if any(form in text for form in as_written[name])
            or any(form in folded for form in any_case[name])
        ]

    as_written = {name: {SPELLINGS[b](s) for b in BASE64} for name, s in MATRIX_SECRETS.items()}
    any_case = {
        name: {form.casefold() for form in spellings(s) - as_written[name]}
        for name, s in MATRIX_SECRETS.items()
    }

    shopping = f"/api/user/{MATRIX_USERNAME}/shopping-list"
    with http_server(env) as server:

        async def served() -> None:
            async with http_client(server.url, MATRIX_SECRETS["bearer token"]) as client:
                logged = len(server.stderr())
                for number, (spelling, spell) in enumerate(ECHOED.items()):
                    echo = _echo(spell)
                    fake.fail(
                        path=f"{shopping}/ingredients", status=422, body={"code": echo, "message": echo}
                    )
                    with fake.state.lock:
                        listing = fake.state.shopping_list()
                    fake.fail(path=shopping, status=200, body={**listing, "code": echo, "message": echo})
                    # A write: its error is logged too. Other lines each time, or the kept outcome answers.
                    add = {"action": "add", "ingredients": f"{number} eggs"}
                    failed = await call(client, "change_shopping_list", add)
                    listed = await call(client, "read", {"target": "shopping_list"})
                    with pytest.raises(MCPError) as refused:
                        await client.call_tool("read_secrets", {"echo": echo})
                    log = server.stderr()
                    assert "Cooked says" in text_of(failed) and not listed.is_error
                    assert "change ended with an error" in log[logged:], "Cooked's text did not reach the log"
                    scan("tool text", spelling, text_of(failed) + text_of(listed))
                    structured = [failed.structured_content, listed.structured_content]
                    scan("structured content", spelling, json.dumps(structured, ensure_ascii=False))
                    scan("protocol error", spelling, refused.value.message)
                    scan("log", spelling, log[logged:])
                    logged = len(log)

        portal.call(served)

    for spelling, spell in ECHOED.items():
        fake.reset()
        fake.fail(
            path=f"/api/user/{MATRIX_USERNAME}/recipes",
            status=400,
            body={
                "code": spell(MATRIX_SECRETS["password"]),
                "message": _echo(spell, "password", "credential-command output"),
            },
        )
        fake.fail(
            path_regex=r"^/api/saved/",
            status=500,
            body={
                "code": spell(MATRIX_SECRETS["bearer token"]),
                "message": _echo(spell, "session cookie", "bearer token"),
            },
        )
        keys = {spell(secret).lower(): 1 for secret in MATRIX_SECRETS.values()} | {
            spell(secret): 1 for secret in MATRIX_SECRETS.values()
        }
        fake.fail(path=shopping, status=200, body={**keys, "aisles": "x"})
        report = tmp_path / "report.json"
        done = run_main(env, "--check", "--transport", "http", "--report", str(report))
        assert done.returncode == 1 and "Cooked says" in done.stdout, done.stdout
        account = f"account: {MATRIX_SECRETS['credential-command output']}\n"
        assert done.stdout.count(account) == 1  # the login name is shown, once, on the user's terminal
        scan("--check output", spelling, done.stdout.replace(account, ""))
        scan("log", spelling, done.stderr)
        scan("--check --report file", spelling, report.read_text("utf-8"))

    assert not leaks, f"{len(leaks)} cells leaked (secret, spelling, channel): {sorted(set(leaks))}"
    assert all(scanned[channel] >= len(ECHOED) for channel in CHANNELS), scanned
    FIGURES.add("secrets", "matrix_cells", len(MATRIX_SECRETS) * len(ECHOED) * len(CHANNELS))
    FIGURES.add("secrets", "matrix_outputs_scanned", sum(scanned.values()))
