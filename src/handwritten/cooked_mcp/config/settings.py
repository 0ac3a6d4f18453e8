"""The settings of one process, each declared once as a ``Settings`` field: ``DECLARED`` is what every
layer, message and ``--help`` reads. Validators check each value (a ``ValueError`` names the problem
alone: ``loading`` words it), then the rules between settings, then run commands."""

from __future__ import annotations

import dataclasses
import ipaddress
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple, Self, get_args
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    InstanceOf,
    SecretStr,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from cooked_mcp import credential_command
from cooked_mcp.remote.url import is_loopback, public_url
from cooked_mcp.text import ASCII_WHITESPACE, printable

from .limits import Limits


@dataclass(frozen=True)
class Origin:
    """Where a value came from: ``str()`` names it in a refusal, ``describe()`` in a sentence."""

    name: str
    kind: Literal["flag", "environment", "file", "default"]
    #: ``path:line`` of a file key (a best-effort text scan).
    where: str | None = None

    def __str__(self) -> str:
        return f"{self.name} in {self.where}" if self.where else self.name

    def describe(self) -> str:
        if self.kind == "environment":
            return f"the environment variable {self.name}"
        if self.kind == "flag":
            return f"the {self.name} flag"
        return str(self)


DEFAULT = Origin("the default", "default")

#: The config file's tables, in the order its messages and ``--help`` list them.
TABLES = ("cooked", "user", "mcp", "log")


@dataclass(frozen=True)
class Declared:
    """One setting as declared: what every place that reads, checks or names it reads."""

    env: str | None
    table: str | None
    key: str | None
    flag: str | None
    metavar: str | None
    command: bool
    refusal: str
    # The rest is the field's, filled in by ``declared``.
    name: str = ""
    help: str | None = None
    secret: bool = False
    #: The field's Python type: the config file's value must have the matching TOML type.
    annotation: Any = None
    default: Any = None

    @property
    def file_key(self) -> str | None:
        return f"{self.table}.{self.key}" if self.table else None


def setting(
    default: Any = ...,
    *,
    env: str | None = None,
    file: str | None = None,
    flag: str | None = None,
    metavar: str | None = None,
    help: str | None = None,
    command: bool = False,
    refusal: str = "",
    **field: Any,
) -> Any:
    """``pydantic.Field`` plus where users set it (``command``: also a ``_cmd`` key) and the ``refusal``
    wording (``{source}``, ``{problem}``, ``{where}``, ``{name}``, ``{input}``, ``{default}``)."""
    table, _, key = file.partition(".") if file else (None, "", None)
    info = Field(default, description=help, **field)
    info.metadata.append(Declared(env, table, key, flag, metavar, command, refusal))
    return info


#: What a refused value of a type is told when its declaration says nothing more.
_REFUSALS: dict[object, str] = {bool: "{source} must be true or false (1/0, yes/no, on/off); fix or unset it"}


def declared(model: type[BaseModel]) -> dict[str, Declared]:
    """Every ``setting(...)`` field of ``model`` by name, in the config file's order."""
    found = [
        dataclasses.replace(
            mark,
            name=name,
            help=info.description,
            secret=SecretStr in (info.annotation, *get_args(info.annotation)),
            refusal=mark.refusal or _REFUSALS.get(info.annotation, "{source}: {problem}"),
            annotation=info.annotation,
            default=None if info.is_required() else info.default,
        )
        for name, info in model.model_fields.items()
        for mark in info.metadata
        if isinstance(mark, Declared)
    ]
    order = {table: index for index, table in enumerate(TABLES)}
    found.sort(key=lambda d: order.get(d.table, len(TABLES)) if d.table else len(TABLES) + 1)
    return {d.name: d for d in found}


Transport = Literal["stdio", "http"]
LogLevel = Literal["debug", "info", "warning", "error"]
MAX_IMPORT_ANSWER_SECONDS = 600.0


# implements: authentication.CREDENTIALS.5, authentication.CREDENTIALS.6, authentication.CREDENTIALS.15
@dataclass(frozen=True)
class Command:
    """A ``*_cmd`` key's command: it passes the static checks untouched and runs after all of them."""

    origin: Origin
    line: str = field(repr=False)


class Address(NamedTuple):
    """Where the HTTP transport listens; ``host`` is bare (``::1``, not ``[::1]``)."""

    host: str
    port: int

    def shown(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


# implements: server.SINGLE_USER.1, server.SINGLE_USER.3
class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    # In the order the checks run: of several mistakes, the first field's is reported.
    # implements: server.TRANSPORT.1, server.TRANSPORT.2-1, server.TRANSPORT.2-2, server.TRANSPORT.4
    transport: Transport = setting(
        "stdio",
        flag="--transport",
        metavar="stdio|http",
        help="MCP transport (default: stdio)",
        refusal="unknown transport '{input}': use --transport stdio or --transport http",
    )
    base_url: str = setting(
        "https://cooked.wiki",
        env="COOKED_BASE_URL",
        file="cooked.base_url",
        refusal="invalid Cooked base URL from {source}: {problem}; use the form https://cooked.wiki "
        "(scheme and host, optional port, nothing else)",
    )
    allow_insecure_http: bool = setting(
        False, env="COOKED_ALLOW_INSECURE_HTTP", file="cooked.allow_insecure_http"
    )
    http_addr: Address = setting(
        Address("127.0.0.1", 8123),
        env="COOKED_MCP_HTTP_ADDR",
        file="mcp.http_addr",
        flag="--http-addr",
        metavar="HOST:PORT",
        help="serve HTTP here (default: 127.0.0.1:8123); implies --transport http",
        refusal="invalid HTTP address from {source}: {problem}; use HOST:PORT such as 127.0.0.1:8123 "
        "or [::1]:8123",
    )
    http_token: SecretStr | None = setting(
        None, env="COOKED_MCP_HTTP_TOKEN", file="mcp.http_token", command=True, refusal="{source} {problem}"
    )
    read_only: bool = setting(False, env="COOKED_MCP_READ_ONLY", file="mcp.read_only")
    #: Off: changes that lose data are not confirmed with the person first (some clients answer no unasked).
    confirm_changes: bool = setting(True, env="COOKED_MCP_CONFIRM_CHANGES", file="mcp.confirm_changes")
    log_level: LogLevel = setting(
        "warning",
        env="COOKED_MCP_LOG_LEVEL",
        file="log.level",
        refusal=f"invalid log level from {{source}}: use one of {', '.join(get_args(LogLevel))}",
    )
    #: save_recipe source=url answers within this (the TypeScript SDK gives up at 60 s, OpenAI's Agents at 5).
    import_answer_seconds: float = setting(
        50.0,
        env="COOKED_MCP_IMPORT_ANSWER_SECONDS",
        file="mcp.import_answer_seconds",
        refusal="{source} must be a number of seconds above 0 and at most "
        f"{MAX_IMPORT_ANSWER_SECONDS:.0f} (default {{default:.0f}}); fix or remove it",
        gt=0,
        le=MAX_IMPORT_ANSWER_SECONDS,
        allow_inf_nan=False,
    )
    allowed_hosts: tuple[str, ...] = setting(
        (), file="mcp.allowed_hosts", refusal="{where}: {name} {problem}"
    )
    allowed_origins: tuple[str, ...] = setting(
        (), file="mcp.allowed_origins", refusal="{where}: {name} {problem}"
    )
    public_url: str | None = setting(
        None,
        env="COOKED_MCP_PUBLIC_URL",
        file="mcp.public_url",
        flag="--public-url",
        metavar="URL",
        help="remote mode's https URL; implies --transport http",
        refusal="invalid public URL from {source}: {problem}; use the https URL your proxy serves, "
        "such as https://cooked.example.net",
    )
    owner_password: SecretStr | None = setting(
        None, env="COOKED_MCP_OWNER_PASSWORD", file="mcp.owner_password", command=True
    )
    #: File only; the file's schema checks each key of ``[mcp.limits]`` at its own line (loading).
    limits: Limits = setting(Limits(), file="mcp.limits")
    username: str = setting(env="COOKED_LOGIN_USERNAME", file="user.name", command=True, repr=False)
    password: SecretStr = setting(env="COOKED_LOGIN_PASSWORD", file="user.password", command=True)
    config_file: Path | None = None
    #: Where each setting's value came from (see ``describe_source``); never the value itself.
    sources: dict[str, InstanceOf[Origin]] = Field(default_factory=dict)
    #: Unsafe or probably mistaken set-ups, one line each, for the CLI to print before serving.
    warnings: tuple[str, ...] = ()
    #: For a setting whose file value lost to the environment or a flag: where that file value is.
    overridden: dict[str, str] = Field(default_factory=dict)

    # implements: server.CONFIG.4, server.CONFIG.4-1, server.CONFIG.4-2, server.CONFIG.5
    @field_validator("base_url")
    @classmethod
    def _base_url(cls, url: str) -> str:
        """Only ``http(s)://host[:port]`` (API paths are appended verbatim); never echoed: it may hold a password."""
        if _has_space_or_control(url):
            raise ValueError("it contains whitespace or control characters")
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https"):
            raise ValueError("the scheme must be http or https")
        if "@" in parts.netloc:
            raise ValueError("it must not contain a user name or password")
        if not parts.hostname:
            raise ValueError("it has no host")
        try:
            parts.port  # noqa: B018 - parsing the port is the check
        except ValueError:
            raise ValueError("the port is not a number between 0 and 65535") from None
        if "?" in url:
            raise ValueError("it must not have a query (?...)")
        if "#" in url:
            raise ValueError("it must not have a fragment (#...)")
        if parts.path not in ("", "/"):
            raise ValueError("it must not have a path (Cooked's API paths are added automatically)")
        return f"{parts.scheme.lower()}://{parts.netloc}"

    # implements: server.CONFIG.8, server.CONFIG.8-1, server.CONFIG.8-2, server.TRANSPORT.3, server.TRANSPORT.3-1
    @field_validator("http_addr", mode="before")
    @classmethod
    def _http_addr(cls, addr: object) -> object:
        if not isinstance(addr, str):
            return addr
        if "://" in addr:
            raise ValueError("leave out the scheme (http://): the address is only where to listen")
        host, sep, port_text = addr.rpartition(":")
        if not sep or not host:
            raise ValueError("it must be HOST:PORT")
        if host.startswith("["):
            if not host.endswith("]"):
                raise ValueError("an IPv6 address needs a closing bracket")
            host = host[1:-1]
            try:
                ipaddress.IPv6Address(host)
            except ValueError:
                raise ValueError("the bracketed host is not an IPv6 address") from None
        elif ":" in host:
            raise ValueError("write an IPv6 host in brackets")
        elif any(char.isspace() or char in "[]/@" for char in host):
            raise ValueError("the host is not a valid host name or address")
        if not port_text.isascii() or not port_text.isdigit():
            raise ValueError("the port must be a number")
        if not 1 <= int(port_text) <= 65535:
            raise ValueError("the port must be between 1 and 65535")
        return Address(host, int(port_text))

    @field_validator("log_level", mode="before")
    @classmethod
    def _trimmed(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("read_only", "allow_insecure_http", "confirm_changes", mode="before")
    @classmethod
    def _boolean(cls, value: object) -> object:
        """The words the refusal names and no others (pydantic alone would also take ``t``, ``n``…)."""
        if not isinstance(value, str):
            return value
        word = value.strip().lower()
        if word not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            raise ValueError("not a boolean word")
        return word in ("1", "true", "yes", "on")

    @field_validator("allowed_hosts", "allowed_origins")
    @classmethod
    def _allowed(cls, values: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        """In the shape the DNS-rebinding defence compares: a typo would fail every request with no hint."""
        origins = info.field_name == "allowed_origins"
        for value in values:
            if not value or _has_space_or_control(value):
                form = "http://NAME:PORT" if origins else "NAME:PORT"
                raise ValueError(f"has an empty entry or one with whitespace: write each as {form}")
            scheme, sep, rest = value.partition("://")
            if origins and (not sep or scheme not in ("http", "https") or not rest or "/" in rest):
                raise ValueError(
                    f"entry {printable(value)!r} is not an origin: "
                    "write it as http://NAME:PORT or https://NAME (no path), as browsers send it"
                )
            if not origins and ("/" in value or "@" in value):
                raise ValueError(
                    f"entry {printable(value)!r} is not a Host value: "
                    "write it as NAME:PORT, NAME:* or [IPv6]:PORT (no scheme, no path)"
                )
        return values

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        return None if value is None else public_url(value)

    # implements: authentication.CREDENTIALS.1, authentication.CREDENTIALS.2, authentication.CREDENTIALS.3, authentication.CREDENTIALS.4, authentication.CREDENTIALS.9, authentication.CREDENTIALS.11, authentication.CREDENTIALS.12
    @field_validator("username", "password", "owner_password", mode="wrap")
    @classmethod
    def _credential(cls, value: object, handler: ValidatorFunctionWrapHandler) -> object:
        if isinstance(value, Command):
            return value  # runs last: _commands_run_last
        checked = handler(value)
        return checked.strip(ASCII_WHITESPACE) if isinstance(checked, str) else checked

    # implements: server.SECURITY.4, server.SECURITY.5, server.SECURITY.9, server.SECURITY.10
    @field_validator("http_token", mode="wrap")
    @classmethod
    def _token(cls, value: object, handler: ValidatorFunctionWrapHandler) -> object:
        if isinstance(value, Command) or value is None:
            return value
        return SecretStr(_token(handler(value).get_secret_value()))

    @model_validator(mode="after")
    def _plain_http_needs_a_yes(self) -> Self:
        plain = self.base_url.startswith("http://")
        if plain and not self.allow_insecure_http and not is_loopback(urlsplit(self.base_url).hostname or ""):
            raise ValueError(
                f"refusing the plain-http Cooked base URL from {self.origin('base_url')}: the password would "
                f"cross the network unencrypted; use https://, or set {how_to_set('allow_insecure_http', '1', 'true')} "
                "if the network is yours"
            )
        return self

    # implements: server.SECURITY.1
    @model_validator(mode="after")
    def _reachable_listeners_need_a_token(self) -> Self:
        """The one place this rule lives: every ``Settings``, however built, obeys it."""
        if self.transport != "http" or self.http_token is not None or self.public_url is not None:
            return self  # remote mode: OAuth guards /mcp instead
        if not is_loopback(self.http_addr.host):
            raise ValueError(
                f"refusing to serve HTTP on non-loopback address {printable(self.http_addr.shown())} "
                f"without a bearer token: set {_ways('http_token')}, or listen on 127.0.0.1"
            )
        for key in ("allowed_hosts", "allowed_origins"):
            if getattr(self, key):
                where = self.origin(key).where
                raise ValueError(
                    f"{where + ': ' if where else ''}mcp.{key} needs a bearer token: without one, any web "
                    f"page the browser lets reach such a name could drive the server; set {_ways('http_token')}, "
                    f"or remove mcp.{key}"
                )
        return self

    # implements: extensions.REMOTE.2, extensions.REMOTE.18
    @model_validator(mode="after")
    def _remote_mode_needs_an_owner(self) -> Self:
        if self.public_url is None:
            object.__setattr__(self, "owner_password", None)  # never run a command for nothing
            return self
        if self.transport != "http" and "transport" not in self.sources:
            object.__setattr__(self, "transport", "http")  # a public URL from any source implies http
        if self.transport != "http":
            raise ValueError("--public-url needs the http transport: drop --transport stdio")
        if self.owner_password is None:
            raise ValueError(
                f"remote mode (--public-url) needs an owner password, typed on the consent page to let a "
                f"client connect: set {_ways('owner_password')}"
            )
        if self.http_token is not None:  # never run a command for nothing, but say why it is unused
            warning = (
                f"the bearer token from {self.describe_source('http_token')} is not used in remote mode "
                f"(the public URL from {self.describe_source('public_url')}): clients sign in with OAuth "
                "and the owner password instead; remove the token, or drop the public URL to use it"
            )
            object.__setattr__(self, "warnings", (*self.warnings, warning))
            object.__setattr__(self, "http_token", None)
        return self

    # implements: authentication.CREDENTIALS.15, extensions.REMOTE.2
    @model_validator(mode="after")
    def _commands_run_last(self) -> Self:
        """Only once every other check passed: a typo never runs a password manager."""
        if self.transport != "http":
            object.__setattr__(self, "http_token", None)  # frozen to everyone else: this is construction
        for name in (d.name for d in DECLARED.values() if d.command):
            pending = getattr(self, name)
            if not isinstance(pending, Command):
                continue
            origin = pending.origin
            output = credential_command.run_secret_command(origin.name, pending.line, where=origin.where)
            if name == "http_token":
                try:
                    output = _token(output)
                except ValueError as exc:
                    raise ValueError(f"{origin} {exc}") from None
            object.__setattr__(self, name, output if name == "username" else SecretStr(output))
        owner = self.owner_password.get_secret_value() if self.owner_password is not None else None
        if owner is not None and len(owner) < MIN_OWNER_PASSWORD:
            raise ValueError(
                f"the owner password from {self.describe_source('owner_password')} has {len(owner)} characters: "
                f"remote mode puts the consent page on the internet, so it needs at least {MIN_OWNER_PASSWORD}; "
                "choose a longer one"
            )
        return self

    def origin(self, setting: str) -> Origin:
        return self.sources.get(setting, DEFAULT)

    def describe_source(self, setting: str) -> str:
        return self.origin(setting).describe()

    def describe_origin(self, setting: str) -> str:
        """``describe_source``, plus the file value it beat (a forgotten ``export`` is a usual surprise)."""
        shadowed = self.overridden.get(setting)
        return self.describe_source(setting) + (f" (overriding {shadowed})" if shadowed else "")

    def describe_account(self) -> list[str]:
        """Which account and where each setting came from, for ``--check`` on the user's terminal."""
        shown = {
            "base URL": ("base_url", self.base_url),
            "username": ("username", "the account above"),
            "password": ("password", "set, not shown"),
            "read-only": ("read_only", "on" if self.read_only else "off"),
        }
        width = max(map(len, shown)) + 1

        def source(name: str) -> str:
            shadowed = self.overridden.get(name)
            if self.origin(name) is DEFAULT:
                return "default"
            return self.describe_source(name) + (f", overriding {shadowed}" if shadowed else "")

        return [
            f"account: {self.username}",
            *(f"  {label + ':':<{width}} {value} ({source(name)})" for label, (name, value) in shown.items()),
        ]

    # implements: authentication.SECRETS.1, server.SECURITY.2
    def secret_values(self) -> list[str]:
        """What no log line, error or report may show: the login name and every ``SecretStr`` setting."""
        secrets = (getattr(self, d.name) for d in DECLARED.values() if d.secret)
        return [self.username, *(secret.get_secret_value() for secret in secrets if secret is not None)]

    def describe_credentials(self) -> str:
        return (
            f"the username from {self.describe_origin('username')} "
            f"and the password from {self.describe_origin('password')}"
        )


DECLARED: Final[dict[str, Declared]] = declared(Settings)


def environment_variables() -> list[str]:
    return [d.env for d in DECLARED.values() if d.env]


def schema_keys() -> list[str]:
    keys = [(d.file_key, d.command) for d in DECLARED.values() if d.file_key]
    return [name for key, command in keys for name in ((key, f"{key}_cmd") if command else (key,))]


def how_to_set(setting: str, env_value: str, file_value: str, where: str = "") -> str:
    """``VARIABLE=value (or table.key = value)``, for messages."""
    declaration = DECLARED[setting]
    return f"{declaration.env}={env_value} (or {declaration.file_key} = {file_value}{where})"


def _ways(setting: str) -> str:
    """``VARIABLE (or table.key / table.key_cmd)``, for messages."""
    d = DECLARED[setting]
    return f"{d.env} (or {d.file_key} / {d.file_key}_cmd)"


def _has_space_or_control(text: str) -> bool:
    return any(char.isspace() or unicodedata.category(char) == "Cc" for char in text)


# implements: server.SECURITY.11
#: Remote mode's owner password: the consent page allows a few wrong guesses per lockout (remote/).
MIN_OWNER_PASSWORD = 12


def _token(value: str) -> str:
    """A bearer token travels in an HTTP header: it must be visible ASCII, and never empty."""
    stripped = value.strip(ASCII_WHITESPACE)
    if not stripped:
        raise ValueError("is empty: set a non-empty HTTP bearer token or unset it")
    if not all(0x21 <= ord(char) <= 0x7E for char in stripped):
        raise ValueError("must contain only visible ASCII characters (no spaces), as HTTP headers require")
    return stripped
