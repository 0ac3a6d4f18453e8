"""Startup settings: environment variables over a TOML file over defaults, checked before serving.

Every mistake a user can make in their configuration is found here, before the server
answers anything, and reported as one line that says what is wrong and how to fix it
(the CLI prints it and exits 2). Messages name the variable, or the file, line and key,
but never a credential value.

Precedence, per setting: command-line flag (``--transport``, ``--http-addr``), then the
environment, then the TOML file, then the default. An environment variable set to the
empty string counts as unset, except ``COOKED_MCP_HTTP_TOKEN``: an empty bearer token is
always a mistake and is refused.

``*_cmd`` commands run last, only after every static check passed, so a typo elsewhere
never runs a password manager. ``mcp.http_token_cmd`` runs only when the transport is
``http``: a stdio server has no use for the token, and running a secret command the
process will never use only widens exposure (and may prompt for a passphrase). Its static
checks (mutual exclusion with ``mcp.http_token``, emptiness) apply to every transport, so
a shared config file's mistakes show up whichever transport is started.

Every setting remembers where its value came from (``Settings.describe_source``), so a
message about it (a rejected login, ``--check``) names the source that actually won: a
stale variable in the shell silently beating the file is the usual confusion. Set-ups that
work but are unsafe or probably mistaken (a secret in a file others can read, a misspelt
``COOKED_*`` variable) are not refused; they become ``Settings.warnings``, printed as one
line each at start-up.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import re
import stat
import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import SecretStr

from cooked_mcp.errors import ConfigError
from cooked_mcp.text import ASCII_WHITESPACE, printable

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_HTTP_ADDR",
    "DEFAULT_LOG_LEVEL",
    "LOG_LEVELS",
    "Settings",
    "Transport",
    "is_loopback",
    "load_settings",
]

Transport = Literal["stdio", "http"]

DEFAULT_BASE_URL = "https://cooked.wiki"
DEFAULT_HTTP_ADDR = "127.0.0.1:8123"
DEFAULT_LOG_LEVEL = "warning"
LOG_LEVELS = ("debug", "info", "warning", "error")

ENV_BASE_URL = "COOKED_BASE_URL"
ENV_USERNAME = "COOKED_LOGIN_USERNAME"
ENV_PASSWORD = "COOKED_LOGIN_PASSWORD"
ENV_HTTP_ADDR = "COOKED_MCP_HTTP_ADDR"
ENV_HTTP_TOKEN = "COOKED_MCP_HTTP_TOKEN"
ENV_READ_ONLY = "COOKED_MCP_READ_ONLY"
ENV_LOG_LEVEL = "COOKED_MCP_LOG_LEVEL"
ENV_IMPORT_ANSWER = "COOKED_MCP_IMPORT_ANSWER_SECONDS"
#: save_recipe source=url answers by this many seconds (the TypeScript SDK gives up at 60).
DEFAULT_IMPORT_ANSWER_SECONDS = 50.0
MAX_IMPORT_ANSWER_SECONDS = 600.0
ENV_ALLOW_INSECURE_HTTP = "COOKED_ALLOW_INSECURE_HTTP"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

_STRING = "a string"
_BOOLEAN = "a boolean (true or false)"
_STRING_LIST = "a list of strings"
_SECONDS = "a number of seconds"

#: Every table and key the file may hold, with the type each must have.
# implements: authentication.CREDENTIALS.13, authentication.CREDENTIALS.14, authentication.CREDENTIALS.15
_SCHEMA: dict[str, dict[str, str]] = {
    "cooked": {"base_url": _STRING, "allow_insecure_http": _BOOLEAN},
    "user": {"name": _STRING, "name_cmd": _STRING, "password": _STRING, "password_cmd": _STRING},
    "mcp": {
        "http_addr": _STRING,
        "http_token": _STRING,
        "http_token_cmd": _STRING,
        "read_only": _BOOLEAN,
        "allowed_hosts": _STRING_LIST,
        "allowed_origins": _STRING_LIST,
        "import_answer_seconds": _SECONDS,
    },
    "log": {"level": _STRING},
}


#: The file keys that hold a secret as plain text, and those that name a command to run.
_PLAINTEXT_SECRETS = (("user", "password"), ("mcp", "http_token"))
_COMMANDS = (("user", "name_cmd"), ("user", "password_cmd"), ("mcp", "http_token_cmd"))

DEFAULT_SOURCE = "the default"


def environment_variables() -> list[str]:
    """Every variable cooked-mcp reads, for ``--help`` and the misspelling warning.

    Collected from this module's ``ENV_*`` constants, so a new setting is known here the
    moment it has a constant: a forgotten entry would warn users about a real setting.
    """
    return [value for name, value in globals().items() if name.startswith("ENV_") and isinstance(value, str)]


def schema_keys() -> list[str]:
    """``table.key`` of every key the config file may hold, for ``--help``."""
    return [f"{table}.{key}" for table, keys in _SCHEMA.items() for key in keys]


# implements: server.SINGLE_USER.1, server.SINGLE_USER.3
@dataclass(frozen=True)
class Settings:
    """Everything the process needs, for exactly one Cooked account.

    ``password`` and ``http_token`` are ``SecretStr`` so that no repr, log line or
    traceback shows them; ``username`` is left out of the repr because it is treated as
    sensitive too. ``allowed_hosts``/``allowed_origins`` are empty when not configured,
    leaving the HTTP server's own defaults (the loopback names) in force; for the ``http``
    transport they are accepted only together with a bearer token, because naming more hosts
    without one would hand the server to any web page that can rebind such a name.
    ``http_token`` is ``None`` unless the transport is ``http`` and a token is configured.
    """

    base_url: str
    username: str = field(repr=False)
    password: SecretStr
    transport: Transport
    http_host: str
    http_port: int
    http_token: SecretStr | None
    read_only: bool
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    log_level: str
    config_file: Path | None
    import_answer_seconds: float = DEFAULT_IMPORT_ANSWER_SECONDS
    #: Where each setting's value came from (see ``describe_source``); never the value itself.
    sources: Mapping[str, str] = field(default_factory=dict)
    #: Unsafe or probably mistaken set-ups, one line each, for the CLI to print before serving.
    warnings: tuple[str, ...] = ()
    #: For a setting whose file value lost to the environment or a flag: where that file value is.
    overridden: Mapping[str, str] = field(default_factory=dict)

    def describe_source(self, setting: str) -> str:
        """Where ``setting`` (``base_url``, ``username``, ``password``, ``http_addr``, ``http_token``,
        ``read_only``, ``log_level``, ``import_answer_seconds``) came from: an environment variable, ``table.key in path:line``
        (a ``*_cmd`` key when a command produced it), ``--http-addr``, or ``the default``."""
        source = self.sources.get(setting, DEFAULT_SOURCE)
        if source in environment_variables():
            return f"the environment variable {source}"
        if source.startswith("--"):
            return f"the {source} flag"
        return source

    def describe_account(self) -> list[str]:
        """Which account and where each setting came from, for ``--check`` on the user's terminal.

        A stale variable in the shell beating the config file is otherwise invisible. The login
        name is shown (a terminal, not a log: it never goes through logging); the password only
        by its source.
        """
        labels = {
            "base URL": "base_url",
            "username": "username",
            "password": "password",
            "read-only": "read_only",
        }
        width = max(map(len, labels))
        return [
            f"account: {self.username}",
            *(f"  {label.ljust(width)}  from {self.describe_origin(name)}" for label, name in labels.items()),
        ]

    def describe_origin(self, setting: str) -> str:
        """``describe_source``, plus the file value it beat if any: a forgotten ``export`` in the
        shell beating the config file is the usual cause of a setting the user cannot explain."""
        shadowed = self.overridden.get(setting)
        return self.describe_source(setting) + (f" (overriding {shadowed})" if shadowed else "")

    def describe_credentials(self) -> str:
        """The two credential settings actually used, for the message of a rejected login.

        A variable that beat a file setting is named as such: a forgotten ``export`` in the
        shell is the usual cause of a rejected login the user cannot explain.
        """
        return (
            f"the username from {self.describe_origin('username')} "
            f"and the password from {self.describe_origin('password')}"
        )


# implements: server.CONFIG.1, server.CONFIG.2
def load_settings(
    *,
    config_path: str | None,
    environ: Mapping[str, str],
    transport: str | None = None,
    http_addr: str | None = None,
) -> Settings:
    """Build the settings from flags, ``environ`` and the TOML file, or raise ``ConfigError``.

    ``config_path`` (``--config``) must name an existing file; without it the default
    ``$XDG_CONFIG_HOME/cooked-mcp/config.toml`` (or ``$HOME/.config/...``) is read when it
    exists. ``environ`` is passed in rather than read from ``os.environ`` so that the
    caller, and tests, decide exactly what the process sees.
    """
    chosen_transport = _parse_transport(transport)
    file = _load_file(config_path, environ)
    sources: dict[str, str] = {}

    # implements: server.CONFIG.4, server.CONFIG.4-1, server.CONFIG.4-2
    base_url_value, sources["base_url"] = _setting(
        environ, ENV_BASE_URL, file, "cooked", "base_url", DEFAULT_BASE_URL
    )
    base_url = _parse_base_url(base_url_value, sources["base_url"])
    _refuse_plain_http(base_url, sources["base_url"], environ, file)
    # implements: server.CONFIG.8, server.CONFIG.8-1, server.CONFIG.8-2, server.TRANSPORT.3, server.TRANSPORT.3-1
    if http_addr is not None:
        addr, addr_source = http_addr, "--http-addr"
    else:
        addr, addr_source = _setting(environ, ENV_HTTP_ADDR, file, "mcp", "http_addr", DEFAULT_HTTP_ADDR)
    sources["http_addr"] = addr_source
    http_host, http_port = _parse_http_addr(addr, addr_source)
    read_only, sources["read_only"] = _flag(environ, ENV_READ_ONLY, file, "mcp", "read_only")
    log_level, sources["log_level"] = _log_level(environ, file)
    import_answer_seconds, sources["import_answer_seconds"] = _import_answer_seconds(environ, file)
    allowed_hosts = _allowed(file, "allowed_hosts")
    allowed_origins = _allowed(file, "allowed_origins")

    username_source = _credential(environ, ENV_USERNAME, file, "name", "username")
    password_source = _credential(environ, ENV_PASSWORD, file, "password", "password")
    token_source = _http_token(environ, file)
    sources["username"] = username_source.describe()
    sources["password"] = password_source.describe()
    # implements: server.SECURITY.1
    if chosen_transport == "http" and token_source is None and not is_loopback(http_host):
        raise ConfigError(
            f"refusing to serve HTTP on non-loopback address {printable(addr)} without a bearer token: "
            f"set {ENV_HTTP_TOKEN} (or mcp.http_token / mcp.http_token_cmd), or listen on 127.0.0.1"
        )

    if chosen_transport == "http" and token_source is None:
        for key, values in (("allowed_hosts", allowed_hosts), ("allowed_origins", allowed_origins)):
            if values:
                raise ConfigError(
                    f"{file.where('mcp', key)}: mcp.{key} needs a bearer token: without one, any web page "
                    f"the browser lets reach such a name could drive the server; set {ENV_HTTP_TOKEN} "
                    f"(or mcp.http_token / mcp.http_token_cmd), or remove mcp.{key}"
                )

    username = username_source.resolve().strip(ASCII_WHITESPACE)
    password = SecretStr(password_source.resolve())
    http_token = None
    if chosen_transport == "http" and token_source is not None:
        http_token = SecretStr(_check_token(token_source.resolve(), token_source.describe()))
        sources["http_token"] = token_source.describe()

    return Settings(
        base_url=base_url,
        username=username,
        password=password,
        transport=chosen_transport,
        http_host=http_host,
        http_port=http_port,
        http_token=http_token,
        read_only=read_only,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        log_level=log_level,
        config_file=file.path,
        import_answer_seconds=import_answer_seconds,
        sources=sources,
        overridden=_overridden(sources, file),
        warnings=(*_file_permission_warnings(file), *_unknown_variable_warnings(environ)),
    )


# --- the TOML file -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _File:
    """The parsed, schema-checked TOML file (or none), able to say where a key was written."""

    path: Path | None
    text: str
    data: Mapping[str, Mapping[str, object]]

    def get(self, table: str, key: str) -> object | None:
        return self.data.get(table, {}).get(key)

    def string(self, table: str, key: str) -> str | None:
        value = self.get(table, key)
        assert value is None or isinstance(value, str)
        return value

    def string_list(self, table: str, key: str) -> list[str]:
        value = self.get(table, key)
        assert value is None or isinstance(value, list)
        return [str(item) for item in value or []]

    def where(self, table: str | None, key: str | None) -> str:
        """``path:line`` of a key (or table), for messages; the line is a best-effort text scan."""
        line = _find_line(self.text, table, key)
        if line is None and key is not None and table is not None:
            line = _find_line(self.text, table, None)
        return f"{self.path}:{line}" if line is not None else str(self.path)

    def source(self, table: str, key: str) -> str:
        return f"{table}.{key} in {self.where(table, key)}"


_NO_FILE = _File(path=None, text="", data={})


# implements: server.CONFIG.7, server.CONFIG.7-1
def _default_config_path(environ: Mapping[str, str]) -> Path | None:
    """XDG base-directory rules: a relative XDG_CONFIG_HOME is invalid and ignored."""
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "cooked-mcp" / "config.toml"
    home = environ.get("HOME", "")
    if not home:
        return None
    return Path(home) / ".config" / "cooked-mcp" / "config.toml"


# implements: server.CONFIG.2, server.CONFIG.6
def _load_file(config_path: str | None, environ: Mapping[str, str]) -> _File:
    if config_path is not None:
        path = Path(config_path)
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist: check the --config path")
    else:
        default = _default_config_path(environ)
        if default is None or not default.exists():
            return _NO_FILE
        path = default
    try:
        raw = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"cannot read config file {path}: {reason}; check the path and its permissions"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not valid UTF-8 text: save it as UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_syntax_message(path, str(exc))) from None
    file = _File(path=path, text=text, data={})
    checked = _check_schema(file, data)
    return _File(path=path, text=text, data=checked)


def _syntax_message(path: Path, message: str) -> str:
    """tomllib (3.11) puts the position in the message: move it up front as ``path:line:col``."""
    match = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if match:
        reason = message[: match.start()]
        where = f"{path}:{match.group(1)}:{match.group(2)}"
    else:
        match_eof = re.search(r"\s*\(at end of document\)\s*$", message)
        reason = message[: match_eof.start()] if match_eof else message
        where = f"{path} (at the end)" if match_eof else str(path)
    return f"{where}: invalid TOML: {printable(reason)}; fix the syntax there"


def _check_schema(file: _File, data: Mapping[str, object]) -> dict[str, dict[str, object]]:
    known_tables = ", ".join(f"[{name}]" for name in _SCHEMA)
    checked: dict[str, dict[str, object]] = {}
    for table, content in data.items():
        if table not in _SCHEMA:
            if isinstance(content, dict):
                where = file.where(table, None)
                raise ConfigError(
                    f"{where}: unknown table [{printable(table)}]: remove it or fix its name "
                    f"(known tables: {known_tables})"
                )
            raise ConfigError(
                f"{file.where(None, table)}: unknown key {printable(table)}: remove it or move it into "
                f"one of the tables {known_tables}"
            )
        if not isinstance(content, dict):
            raise ConfigError(
                f"{file.where(table, None)}: {table} must be a table ([{table}]) holding "
                f"{', '.join(_SCHEMA[table])}"
            )
        keys = _SCHEMA[table]
        for key, value in content.items():
            if key not in keys:
                raise ConfigError(
                    f"{file.where(table, key)}: unknown key {table}.{printable(key)}: remove it or fix its "
                    f"spelling (known keys in [{table}]: {', '.join(keys)})"
                )
            if not _has_type(value, keys[key]):
                raise ConfigError(f"{file.where(table, key)}: {table}.{key} must be {keys[key]}")
        checked[table] = dict(content)
    return checked


def _has_type(value: object, expected: str) -> bool:
    if expected == _STRING:
        return isinstance(value, str)
    if expected == _BOOLEAN:
        return isinstance(value, bool)
    if expected == _SECONDS:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]#]+?)\s*\]\]?\s*(?:#.*)?$")


def _find_line(text: str, table: str | None, key: str | None) -> int | None:
    """Find where ``[table] key =`` (or ``table.key =``, or the table itself) is written.

    tomllib does not report positions for valid documents, so this scans the text. It is
    only used to point at a line in an error message; multi-line strings that look like
    headers may fool it, which costs only a less precise pointer.
    """
    current: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        header = _HEADER.match(line)
        if header:
            current = _normalize_dotted(header.group(1))
            if key is None and current == table:
                return number
            continue
        if key is None:
            if current is None and table is not None and _assigns(line, f"{_key_pattern(table)}\\s*[=.]"):
                return number
            continue
        if current == table and _assigns(line, f"{_key_pattern(key)}\\s*="):
            return number
        if (
            current is None
            and table is not None
            and _assigns(line, f"{_key_pattern(table)}\\s*\\.\\s*{_key_pattern(key)}\\s*=")
        ):
            return number
    return None


def _key_pattern(name: str) -> str:
    escaped = re.escape(name)
    return f"(?:{escaped}|\"{escaped}\"|'{escaped}')"


def _assigns(line: str, pattern: str) -> bool:
    return re.match(f"^\\s*{pattern}", line) is not None


def _normalize_dotted(name: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in name.split("."))


# --- individual settings -----------------------------------------------------------------------


# implements: server.CONFIG.3
def _setting(
    environ: Mapping[str, str], env: str, file: _File, table: str, key: str, default: str
) -> tuple[str, str]:
    """A plain string setting and a description of where it came from, for messages."""
    value = environ.get(env, "")
    if value:
        return value, env
    from_file = file.string(table, key)
    if from_file is not None:
        return from_file, file.source(table, key)
    return default, DEFAULT_SOURCE


# implements: server.TRANSPORT.1, server.TRANSPORT.2-1, server.TRANSPORT.2-2, server.TRANSPORT.4
def _parse_transport(transport: str | None) -> Transport:
    if transport is None or transport == "stdio":
        return "stdio"
    if transport == "http":
        return "http"
    raise ConfigError(
        f"unknown transport '{printable(transport)}': use --transport stdio or --transport http"
    )


# implements: server.CONFIG.5
def _parse_base_url(url: str, source: str) -> str:
    """Accept only ``http(s)://host[:port]``: the client appends the API paths to it verbatim.

    The URL itself is never echoed: it could carry userinfo (a password).
    """

    def fail(problem: str) -> ConfigError:
        return ConfigError(
            f"invalid Cooked base URL from {source}: {problem}; use the form https://cooked.wiki "
            f"(scheme and host, optional port, nothing else)"
        )

    if any(char.isspace() or unicodedata.category(char) == "Cc" for char in url):
        raise fail("it contains whitespace or control characters")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise fail("the scheme must be http or https")
    if "@" in parts.netloc:
        raise fail("it must not contain a user name or password")
    if not parts.hostname:
        raise fail("it has no host")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise fail("the port is not a number between 0 and 65535") from None
    if "?" in url:
        raise fail("it must not have a query (?...)")
    if "#" in url:
        raise fail("it must not have a fragment (#...)")
    if parts.path not in ("", "/"):
        raise fail("it must not have a path (Cooked's API paths are added automatically)")
    return f"{parts.scheme.lower()}://{parts.netloc}"


def _parse_http_addr(addr: str, source: str) -> tuple[str, int]:
    """``HOST:PORT`` with IPv6 hosts in brackets (``[::1]:8123``); returns the bare host."""

    def fail(problem: str) -> ConfigError:
        return ConfigError(
            f"invalid HTTP address from {source}: {problem}; "
            "use HOST:PORT such as 127.0.0.1:8123 or [::1]:8123"
        )

    if "://" in addr:
        raise fail("leave out the scheme (http://): the address is only where to listen")
    host, sep, port_text = addr.rpartition(":")
    if not sep or not host:
        raise fail("it must be HOST:PORT")
    if host.startswith("["):
        if not host.endswith("]"):
            raise fail("an IPv6 address needs a closing bracket")
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise fail("the bracketed host is not an IPv6 address") from None
    elif ":" in host:
        raise fail("write an IPv6 host in brackets")
    elif any(char.isspace() or char in "[]/@" for char in host):
        raise fail("the host is not a valid host name or address")
    if not port_text.isascii() or not port_text.isdigit():
        raise fail("the port must be a number")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise fail("the port must be between 1 and 65535")
    return host, port


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach a listener on ``host``; anything unsure counts as no."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _allowed(file: _File, key: str) -> tuple[str, ...]:
    """Extra ``Host`` values (``name:port``, ``name:*``) or origins (``scheme://name[:port|:*]``).

    They widen the HTTP server's DNS-rebinding defence beyond the local names, so each is
    checked for the shape the check compares against: a typo would otherwise just make
    every request from that name fail with 421/403 and no hint why.
    """
    values = file.string_list("mcp", key)
    for value in values:
        if not value or any(char.isspace() or unicodedata.category(char) == "Cc" for char in value):
            raise ConfigError(
                f"{file.where('mcp', key)}: mcp.{key} has an empty entry or one with whitespace: "
                f"write each as {'http://NAME:PORT' if key == 'allowed_origins' else 'NAME:PORT'}"
            )
        if key == "allowed_origins":
            scheme, sep, rest = value.partition("://")
            if not sep or scheme not in ("http", "https") or not rest or "/" in rest:
                raise ConfigError(
                    f"{file.where('mcp', key)}: mcp.{key} entry {printable(value)!r} is not an origin: "
                    "write it as http://NAME:PORT or https://NAME (no path), as browsers send it"
                )
        elif "/" in value or "@" in value:
            raise ConfigError(
                f"{file.where('mcp', key)}: mcp.{key} entry {printable(value)!r} is not a Host value: "
                "write it as NAME:PORT, NAME:* or [IPv6]:PORT (no scheme, no path)"
            )
    return tuple(values)


def _flag(environ: Mapping[str, str], env: str, file: _File, table: str, key: str) -> tuple[bool, str]:
    """A boolean setting (false by default) and where it came from."""
    value = environ.get(env, "")
    if value:
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True, env
        if lowered in _FALSE:
            return False, env
        raise ConfigError(f"{env} must be true or false (1/0, yes/no, on/off); fix or unset it")
    from_file = file.get(table, key)
    if from_file is None:
        return False, DEFAULT_SOURCE
    return bool(from_file), file.source(table, key)


def _import_answer_seconds(environ: Mapping[str, str], file: _File) -> tuple[float, str]:
    """How long a URL import call waits for Cooked before answering that it is still running, and
    where that came from."""
    value: object = environ.get(ENV_IMPORT_ANSWER, "")
    source = ENV_IMPORT_ANSWER
    if not value:
        value, source = file.get("mcp", "import_answer_seconds"), file.source("mcp", "import_answer_seconds")
    if value is None:
        return DEFAULT_IMPORT_ANSWER_SECONDS, DEFAULT_SOURCE
    try:
        seconds = float(value)  # type: ignore[arg-type]  # a str from the environment or a TOML number
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= MAX_IMPORT_ANSWER_SECONDS:
        raise ConfigError(
            f"{source} must be a number of seconds above 0 and at most {MAX_IMPORT_ANSWER_SECONDS:.0f} "
            f"(default {DEFAULT_IMPORT_ANSWER_SECONDS:.0f}); fix or remove it"
        )
    return seconds, source


def _log_level(environ: Mapping[str, str], file: _File) -> tuple[str, str]:
    level, source = _setting(environ, ENV_LOG_LEVEL, file, "log", "level", DEFAULT_LOG_LEVEL)
    normalized = level.strip().lower()
    if normalized not in LOG_LEVELS:
        raise ConfigError(f"invalid log level from {source}: use one of {', '.join(LOG_LEVELS)}")
    return normalized, source


def _refuse_plain_http(base_url: str, source: str, environ: Mapping[str, str], file: _File) -> None:
    """Plain http to another machine sends the Cooked password in clear, so it needs an explicit yes.

    Loopback is exempt: that is the fake Cooked, or a local TLS-terminating proxy.
    """
    host = urlsplit(base_url).hostname or ""
    if not base_url.startswith("http://") or is_loopback(host):
        return
    allowed, _ = _flag(environ, ENV_ALLOW_INSECURE_HTTP, file, "cooked", "allow_insecure_http")
    if not allowed:
        raise ConfigError(
            f"refusing the plain-http Cooked base URL from {source}: the password would cross the network "
            f"unencrypted; use https://, or set {ENV_ALLOW_INSECURE_HTTP}=1 (or cooked.allow_insecure_http = "
            "true) if the network is yours"
        )


#: The file keys behind each setting, to tell when the environment or a flag beat one of them.
_FILE_KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "base_url": ("cooked", ("base_url",)),
    "username": ("user", ("name", "name_cmd")),
    "password": ("user", ("password", "password_cmd")),
    "http_addr": ("mcp", ("http_addr",)),
    "http_token": ("mcp", ("http_token", "http_token_cmd")),
    "read_only": ("mcp", ("read_only",)),
    "log_level": ("log", ("level",)),
    "import_answer_seconds": ("mcp", ("import_answer_seconds",)),
}


def _overridden(sources: Mapping[str, str], file: _File) -> dict[str, str]:
    """Settings whose value in the file lost (to a variable or flag): the usual "why is it
    using the old account?" is a forgotten ``export`` beating the config file."""
    shadowed = {}
    for setting, (table, keys) in _FILE_KEYS.items():
        source = sources.get(setting, DEFAULT_SOURCE)
        if source == DEFAULT_SOURCE or source.startswith(tuple(f"{table}.{key} in " for key in keys)):
            continue
        present = next((key for key in keys if file.get(table, key) is not None), None)
        if present is not None:
            shadowed[setting] = file.source(table, present)
    return shadowed


# --- warnings: allowed, but probably not what the user wants ------------------------------------


def _file_permission_warnings(file: _File) -> list[str]:
    """A plaintext secret others can read, or a command others can change, gets one line each.

    Warned, not refused: shared machines with careful group set-ups exist, and the file is
    the user's. Only the owner and mode are looked at, so this costs one ``stat``.
    """
    if file.path is None:
        return []
    try:
        info = file.path.stat()
    except OSError:
        return []
    foreign_owner = hasattr(os, "geteuid") and info.st_uid != os.geteuid()
    warnings = []
    secrets = [f"{table}.{key}" for table, key in _PLAINTEXT_SECRETS if file.get(table, key) is not None]
    if secrets and (foreign_owner or info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)):
        who = "is owned by another user" if foreign_owner else "other users can read it"
        warnings.append(
            f"{file.path} holds {' and '.join(secrets)} in plain text and {who}: "
            f"run chmod 600 {file.path} (and own it yourself)"
        )
    commands = [f"{table}.{key}" for table, key in _COMMANDS if file.get(table, key) is not None]
    if commands and not secrets and (foreign_owner or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
        who = "is owned by another user" if foreign_owner else "other users can change it"
        warnings.append(
            f"{file.path} runs {' and '.join(commands)} and {who}, so they choose what runs as you: "
            f"run chmod 600 {file.path} (and own it yourself)"
        )
    return warnings


def _unknown_variable_warnings(environ: Mapping[str, str]) -> list[str]:
    """A misspelt variable is otherwise silently ignored, and the setting falls back to the file."""
    warnings = []
    known = environment_variables()
    for name in sorted(environ):
        if not name.startswith("COOKED_") or name in known:
            continue
        nearest = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"did you mean {nearest[0]}?" if nearest else "see cooked-mcp --help for the names"
        warnings.append(f"environment variable {printable(name)} is not a cooked-mcp setting: {hint}")
    return warnings


def format_warnings(warnings: Sequence[str]) -> list[str]:
    """One stderr line per warning, in the CLI's voice."""
    return [f"cooked-mcp: warning: {warning}" for warning in warnings]


# --- credentials and the bearer token --------------------------------------------------------


# implements: authentication.CREDENTIALS.5, authentication.CREDENTIALS.6, authentication.CREDENTIALS.15
@dataclass(frozen=True)
class _SecretSource:
    """Where a secret comes from: a literal value or a command; resolved only after all checks."""

    setting: str
    value: str = field(repr=False)
    is_command: bool
    #: ``path:line`` of the key in the config file; None for an environment variable.
    where: str | None = None

    def describe(self) -> str:
        return f"{self.setting} in {self.where}" if self.where else self.setting

    def resolve(self) -> str:
        if not self.is_command:
            return self.value
        # Imported here: credential_command subclasses ConfigError, so it imports this module.
        from cooked_mcp.credential_command import run_secret_command

        return run_secret_command(self.setting, self.value, where=self.where)


# implements: authentication.CREDENTIALS.8, authentication.CREDENTIALS.8-1, authentication.CREDENTIALS.8-2, server.SECURITY.8
def _exclusive(file: _File, table: str, key: str) -> _SecretSource | None:
    """``table.key`` or ``table.key_cmd`` from the file; both at once is refused."""
    value = file.string(table, key)
    command = file.string(table, f"{key}_cmd")
    if value is not None and command is not None:
        raise ConfigError(
            f"{file.where(table, f'{key}_cmd')}: {table}.{key} and {table}.{key}_cmd are both set; "
            f"keep only one of them"
        )
    if value is not None:
        if not value.strip(ASCII_WHITESPACE):
            raise ConfigError(f"{file.where(table, key)}: {table}.{key} is empty: set a value or remove it")
        return _SecretSource(
            setting=f"{table}.{key}", value=value, is_command=False, where=file.where(table, key)
        )
    if command is not None:
        if not command.strip(ASCII_WHITESPACE):
            raise ConfigError(
                f"{file.where(table, f'{key}_cmd')}: {table}.{key}_cmd is empty: set a command or remove it"
            )
        return _SecretSource(
            setting=f"{table}.{key}_cmd",
            value=command,
            is_command=True,
            where=file.where(table, f"{key}_cmd"),
        )
    return None


# implements: authentication.CREDENTIALS.1, authentication.CREDENTIALS.2, authentication.CREDENTIALS.3, authentication.CREDENTIALS.4, authentication.CREDENTIALS.9, authentication.CREDENTIALS.11, authentication.CREDENTIALS.12
def _credential(environ: Mapping[str, str], env: str, file: _File, key: str, noun: str) -> _SecretSource:
    from_file = _exclusive(file, "user", key)  # checked even when the environment wins
    value = environ.get(env, "")
    if key == "name":
        # Like a command's output: a username never has surrounding whitespace, a paste often does.
        value = value.strip(ASCII_WHITESPACE)
    if value:
        return _SecretSource(setting=env, value=value, is_command=False)
    if from_file is not None:
        return from_file
    location = file.path or _default_config_path(environ) or "the config file (--config)"
    raise ConfigError(
        f"no Cooked {noun} configured: set {env}, or user.{key} (or user.{key}_cmd) in {location}"
    )


# implements: server.SECURITY.4, server.SECURITY.5, server.SECURITY.9, server.SECURITY.10
def _http_token(environ: Mapping[str, str], file: _File) -> _SecretSource | None:
    from_file = _exclusive(file, "mcp", "http_token")
    if ENV_HTTP_TOKEN in environ:
        value = environ[ENV_HTTP_TOKEN]
        _check_token(value, ENV_HTTP_TOKEN)
        return _SecretSource(setting=ENV_HTTP_TOKEN, value=value, is_command=False)
    return from_file


# implements: server.SECURITY.11
def _check_token(token: str, setting: str) -> str:
    """A bearer token travels in an HTTP header: it must be visible ASCII, and never empty."""
    stripped = token.strip(ASCII_WHITESPACE)
    if not stripped:
        raise ConfigError(f"{setting} is empty: set a non-empty HTTP bearer token or unset it")
    if not all(0x21 <= ord(char) <= 0x7E for char in stripped):
        raise ConfigError(
            f"{setting} must contain only visible ASCII characters (no spaces), as HTTP headers require"
        )
    return stripped
