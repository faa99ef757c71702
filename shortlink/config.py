"""Configuration: shortlink.toml, overridden key by key by SHORTLINK_<SECTION>_<KEY>."""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import msgspec

DEFAULT_CONFIG_FILE = "shortlink.toml"
log = logging.getLogger("shortlink.config")
ENV_PREFIX = "SHORTLINK_"  # SHORTLINK_<SECTION>_<KEY> overrides [section] key


# Longer than the longest `days` range (366): a `days` answer never needs a deleted click.
MIN_RAW_RETENTION_DAYS = 367
# Public links expire: a year at most, so that an open form never makes permanent links.
MAX_PUBLIC_EXPIRE_DAYS = 365
# A blocked host in its IDNA form: dot-separated labels of letters, digits and hyphens.
_HOST_NAME = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*")


class ConfigError(Exception):
    """A one-line, human message naming the offending key."""


class _Section(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class ServerConfig(_Section):
    host: str = "127.0.0.1"
    port: int = 8000
    # One JSON line per request (method, path, status, ms); never IPs or user agents.
    # Off by default: it halves redirect throughput (bench/redirects.py), and a
    # reverse proxy in front usually logs requests already.
    access_log: bool = False


class StorageConfig(_Section):
    # The SQLite file, when `url` is empty.
    path: str = "data/shortlink.db"
    # sqlite:///PATH (relative; sqlite:////PATH absolute) or postgresql://user:password@host:port/database.
    url: str = ""
    # The key file, the half of the signing key kept outside the database (shortlink.keyfile);
    # empty: secret.key beside the SQLite file. With PostgreSQL, give every process the same file.
    secret_file: str = ""

    @property
    def location(self) -> str:
        """What storage.connect opens: the URL when one is set, else the SQLite path."""
        return self.url or self.path


class LinksConfig(_Section):
    # Public base of short URLs; empty means http://{server.host}:{server.port}.
    short_host: str = ""
    # Extra hosts the service answers on (custom domains are connected per account).
    domains: list[str] = []


class LimitsConfig(_Section):
    requests_per_minute: int = 60
    links_per_day: int = 1000
    password_attempts_per_minute: int = 5


class NetworkConfig(_Section):
    trusted_proxies: list[str] = []
    # Header carrying the visitor's country from a trusted proxy, e.g. "CF-IPCountry".
    country_header: str = ""


class FetcherConfig(_Section):
    enabled: bool = True
    allow_private_addresses: bool = False
    timeout_seconds: float = 5.0
    concurrency: int = 4
    max_attempts: int = 3


class ClicksConfig(_Section):
    flush_interval_ms: int = 100
    batch_size: int = 2000
    queue_size: int = 100_000
    # Raw clicks older than this many days are deleted; 0 keeps every click.
    raw_retention_days: int = 0


class RedisConfig(_Section):
    # Shared state for more than one server process: rate-limit buckets, link-cache
    # invalidation, the day's visitor key, link rules' click caps and split keys. Empty: one
    # process keeps them in memory.
    url: str = ""


class DashboardConfig(_Section):
    # Anyone may create an account at /signup (with an active subscription, as
    # `shortlink key create` makes them). Off: accounts come from the CLI.
    signup: bool = False
    # A session ends after this long without a request, and this long after sign-in whatever happens.
    idle_minutes: int = 720
    max_days: int = 14
    # Sign-in attempts per minute, per account (e-mail) and per client address.
    signins_per_minute_per_account: int = 5
    signins_per_minute_per_address: int = 20
    # Dashboard actions that make work (a domain check is a DNS lookup), per account a minute;
    # and each one per client address.
    webhook_tests_per_minute_per_account: int = 10
    app_checks_per_minute_per_account: int = 5
    imports_per_minute_per_account: int = 10
    domain_checks_per_minute_per_account: int = 5
    actions_per_minute_per_address: int = 30


class PublicConfig(_Section):
    # The "paste a URL, get a short link" page for signed-out visitors (source PUBLIC).
    enabled: bool = False
    # The operator-chosen account that owns every public link (its email).
    account: str = ""
    expire_days: int = 30
    # Per client address (an IPv6 client is its /64), as a token bucket.
    links_per_hour: int = 10
    # Destinations refused: each host and its subdomains.
    blocked_hosts: list[str] = []


class GeoipConfig(_Section):
    # A country MMDB file (DB-IP's IP to Country Lite, GeoLite2-Country, ...) to use instead
    # of the table bundled with iptocc; empty: the bundled one.
    path: str = ""


class DomainsConfig(_Section):
    # The nameservers that verify an account's domain ("1.1.1.1", "[2606:4700::1111]:53");
    # empty: the system's (/etc/resolv.conf).
    nameservers: list[str] = []
    # Caddy's on-demand TLS asks (GET /tls/allowed), per client address (an IPv6 client is its /64).
    tls_asks_per_minute: int = 120


class BackupConfig(_Section):
    # Litestream's configuration file (litestream.yml) replicating the SQLite database: with it,
    # `shortlink doctor` asks Litestream how far the replica lags behind. Empty: not checked.
    litestream_config: str = ""


class Config(_Section):
    server: ServerConfig = msgspec.field(default_factory=ServerConfig)
    storage: StorageConfig = msgspec.field(default_factory=StorageConfig)
    links: LinksConfig = msgspec.field(default_factory=LinksConfig)
    limits: LimitsConfig = msgspec.field(default_factory=LimitsConfig)
    network: NetworkConfig = msgspec.field(default_factory=NetworkConfig)
    fetcher: FetcherConfig = msgspec.field(default_factory=FetcherConfig)
    clicks: ClicksConfig = msgspec.field(default_factory=ClicksConfig)
    redis: RedisConfig = msgspec.field(default_factory=RedisConfig)
    dashboard: DashboardConfig = msgspec.field(default_factory=DashboardConfig)
    public: PublicConfig = msgspec.field(default_factory=PublicConfig)
    geoip: GeoipConfig = msgspec.field(default_factory=GeoipConfig)
    domains: DomainsConfig = msgspec.field(default_factory=DomainsConfig)
    backup: BackupConfig = msgspec.field(default_factory=BackupConfig)

    @property
    def short_host(self) -> str:
        base = self.links.short_host or f"http://{self.server.host}:{self.server.port}"
        return base.rstrip("/")

    @property
    def trusted_networks(self) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
        return [ipaddress.ip_network(cidr, strict=False) for cidr in self.network.trusted_proxies]


_POSITIVE = {
    ("server", "port"),
    ("limits", "requests_per_minute"),
    ("limits", "links_per_day"),
    ("limits", "password_attempts_per_minute"),
    ("fetcher", "timeout_seconds"),
    ("fetcher", "concurrency"),
    ("fetcher", "max_attempts"),
    ("clicks", "flush_interval_ms"),
    ("clicks", "batch_size"),
    ("clicks", "queue_size"),
    ("dashboard", "idle_minutes"),
    ("dashboard", "max_days"),
    ("dashboard", "signins_per_minute_per_account"),
    ("dashboard", "signins_per_minute_per_address"),
    ("dashboard", "webhook_tests_per_minute_per_account"),
    ("dashboard", "app_checks_per_minute_per_account"),
    ("dashboard", "imports_per_minute_per_account"),
    ("dashboard", "domain_checks_per_minute_per_account"),
    ("dashboard", "actions_per_minute_per_address"),
    ("public", "expire_days"),
    ("public", "links_per_hour"),
    ("domains", "tls_asks_per_minute"),
}


Origin = Literal["default", "file", "environment", "command line"]


class LoadedConfig(msgspec.Struct, frozen=True):
    config: Config
    file: Path
    origins: dict[str, Origin]  # "section.key" → where its value came from


def load_config(path: str | Path | None = None, environ: Mapping[str, str] | None = None, **overrides: Any) -> Config:
    """Read the TOML file (when it exists), apply environment overrides, validate.

    `overrides` are "section.key" pairs given with underscores, e.g.
    storage_path="x.db", as the CLI's --db/--host/--port flags do.
    """
    return load_config_with_origins(path, environ, **overrides).config


def load_config_with_origins(
    path: str | Path | None = None, environ: Mapping[str, str] | None = None, **overrides: Any
) -> LoadedConfig:
    """`load_config`, also saying where each key's value came from (for `shortlink doctor`)."""
    environ = os.environ if environ is None else environ
    file = Path(path if path is not None else DEFAULT_CONFIG_FILE)
    raw: dict[str, Any] = {}
    if file.exists():
        try:
            raw = tomllib.loads(file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    elif path is not None:
        raise ConfigError(f"{file}: no such configuration file")

    _check_environment_names(environ)
    origins: dict[str, Origin] = {}
    for section_name, section_type in _sections().items():
        in_file = raw.get(section_name, {})
        for key, key_type in _fields(section_type).items():
            env_name = _env_name(section_name, key)
            value = overrides.get(f"{section_name}_{key}")
            origin: Origin = "command line"
            if value is None and env_name in environ:
                value, origin = _from_env(environ[env_name], key_type), "environment"
            if (section_name, key) in _secret_keys() and f"{env_name}_FILE" in environ:
                secret = _read_secret_file(env_name, environ)
                if value is None:
                    value, origin = _from_env(secret, key_type), "environment"
            if value is None:
                origin = "file" if isinstance(in_file, dict) and key in in_file else "default"
            origins[f"{section_name}.{key}"] = origin
            if value is not None:
                raw.setdefault(section_name, {})
                if not isinstance(raw[section_name], dict):
                    raise ConfigError(f"[{section_name}] must be a table")
                raw[section_name][key] = value
    try:
        config = msgspec.convert(raw, Config, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"invalid configuration: {_describe(exc)}") from None
    _check(config)
    return LoadedConfig(config, file, origins)


# The Structs' fields, read once: msgspec resolves their annotations on every call, which was
# most of the time a configuration took to load (one per test of the suite).
@cache
def _sections() -> dict[str, type]:
    return {f.name: f.type for f in msgspec.structs.fields(Config)}


@cache
def _fields(section_type: type) -> dict[str, Any]:
    return {f.name: f.type for f in msgspec.structs.fields(section_type)}


@cache
def _known_environment_names() -> frozenset[str]:
    names = {_env_name(section, key) for section, section_type in _sections().items() for key in _fields(section_type)}
    return frozenset(names | {f"{_env_name(section, key)}_FILE" for section, key in _secret_keys()})


# Settings that may hold a password or token: each also reads SHORTLINK_<SECTION>_<KEY>_FILE, so
# that a container's secret file (compose `secrets:`) never has to pass through the environment.
_SECRET_BEARING = {("storage", "url"), ("redis", "url")}
_SECRET_WORDS = ("password", "secret", "token")


@cache
def _secret_keys() -> frozenset[tuple[str, str]]:
    """The listed keys and any named like a secret; a key whose section also has `<key>_file`
    leaves SHORTLINK_<SECTION>_<KEY>_FILE to that setting."""
    keys = set()
    for section, section_type in _sections().items():
        fields = _fields(section_type)
        for key in fields:
            named = any(word in key for word in _SECRET_WORDS) and not key.endswith("_file")
            if ((section, key) in _SECRET_BEARING or named) and f"{key}_file" not in fields:
                keys.add((section, key))
    return frozenset(keys)


def _read_secret_file(env_name: str, environ: Mapping[str, str]) -> str:
    """The content of the file SHORTLINK_..._FILE names, its trailing newline taken off."""
    file_name = f"{env_name}_FILE"
    if env_name in environ:
        raise ConfigError(f"invalid configuration: both {env_name} and {file_name} are set; keep one")
    path = environ[file_name]
    try:
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ConfigError(f"invalid configuration: {file_name}: {path}: {reason}") from None


def _env_name(section: str, key: str) -> str:
    return f"{ENV_PREFIX}{section}_{key}".upper()


def unknown_environment_names(environ: Mapping[str, str]) -> list[str]:
    """SHORTLINK_* variables that are not a setting."""
    known = _known_environment_names()
    return [name for name in sorted(environ) if name.startswith(ENV_PREFIX) and name not in known]


def _check_environment_names(environ: Mapping[str, str]) -> None:
    """SHORTLINK_<SECTION>_<KEY> with a known section but no such key is a misspelt
    override that would be silently ignored: like an unknown TOML key, it stops start-up.
    Other SHORTLINK_* names (no section of ours) may belong to the operator's own tools,
    so they are only warned about."""
    for name in unknown_environment_names(environ):
        section = next((s for s in _sections() if name.startswith(_env_name(s, ""))), None)
        if section is not None:
            raise ConfigError(
                f"invalid configuration: environment variable {name} is not a setting; "
                f"[{section}] has {', '.join(_fields(_sections()[section]))}"
            )
        log.warning(
            "environment variable %s is not a setting and is ignored (settings are "
            "SHORTLINK_<SECTION>_<KEY>; sections are %s)",
            name,
            ", ".join(_sections()),
        )


def _from_env(value: str, key_type: Any) -> Any:
    if key_type == list[str]:
        return [item.strip() for item in value.split(",") if item.strip()]
    return value  # msgspec.convert(strict=False) turns "8000" into 8000, "false" into False


def _describe(exc: msgspec.ValidationError) -> str:
    # msgspec says "... - at `$.server.port`"; rewrite the path as the TOML key.
    message = str(exc)
    if " - at `$." in message:
        text, where = message.split(" - at `$.", 1)
        key = where.rstrip("`")
        section, _, name = key.partition(".")
        return f"[{section}] {name}: {text}" if name else f"[{section}]: {text}"
    return message


def _check(config: Config) -> None:
    for section, key in _POSITIVE:
        if getattr(getattr(config, section), key) <= 0:
            raise ConfigError(f"invalid configuration: [{section}] {key}: must be greater than 0")
    if config.server.port > 65535:
        raise ConfigError("invalid configuration: [server] port: must be at most 65535")
    for cidr in config.network.trusted_proxies:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise ConfigError(f"invalid configuration: [network] trusted_proxies: {cidr!r} is not a CIDR") from None
    retention = config.clicks.raw_retention_days
    if retention and retention < MIN_RAW_RETENTION_DAYS:
        raise ConfigError(
            f"invalid configuration: [clicks] raw_retention_days: must be 0 (keep every click) or at least "
            f"{MIN_RAW_RETENTION_DAYS}, longer than the longest analytics range"
        )
    if config.links.short_host and not config.links.short_host.startswith(("http://", "https://")):
        raise ConfigError("invalid configuration: [links] short_host: must start with http:// or https://")
    _check_storage_url(config.storage.url)
    if config.redis.url and not config.redis.url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError("invalid configuration: [redis] url: must start with redis://, rediss:// or unix://")
    _check_public(config.public)
    for entry in config.domains.nameservers:
        try:
            nameserver_address(entry)
        except ValueError:
            raise ConfigError(
                f"invalid configuration: [domains] nameservers: {entry!r} is not an address (IP, IP:port, [IPv6]:port)"
            ) from None


def nameserver_address(text: str) -> tuple[str, int]:
    """(address, port) of "1.1.1.1", "1.1.1.1:5353", "2606:4700::1111" or "[::1]:5353"."""
    text = text.strip()
    host, port = text, 53
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else 53
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        port = int(port_text)
    ipaddress.ip_address(host)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is out of range")
    return host, port


def _is_host_name(host: str) -> bool:
    try:
        ascii_host = host.lower().rstrip(".").encode("idna").decode("ascii")
    except UnicodeError:
        return False
    return bool(_HOST_NAME.fullmatch(ascii_host))


def _check_public(public: PublicConfig) -> None:
    if public.enabled and "@" not in public.account:
        raise ConfigError(
            "invalid configuration: [public] account: must be the email of the account that owns public links "
            "when [public] enabled = true"
        )
    if public.expire_days > MAX_PUBLIC_EXPIRE_DAYS:
        raise ConfigError(f"invalid configuration: [public] expire_days: must be at most {MAX_PUBLIC_EXPIRE_DAYS}")
    for host in public.blocked_hosts:
        if not _is_host_name(host):
            raise ConfigError(
                f"invalid configuration: [public] blocked_hosts: {host!r} is not a host name (like example.com, "
                "no scheme, port or path)"
            )


STORAGE_URL_FORMS = "sqlite:///PATH or postgresql://user:password@host:port/database"


def _check_storage_url(url: str) -> None:
    if not url:
        return
    problem = None
    if url.startswith("sqlite:"):
        if not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
            problem = "an SQLite URL is sqlite:///relative/path.db or sqlite:////absolute/path.db"
    elif url.startswith(("postgresql://", "postgres://")):
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError as exc:
            problem = f"not a valid URL ({exc})"
        else:
            if parts.path.strip("/") == "":
                problem = "name the database: postgresql://user:password@host:port/database"
    else:
        problem = f"must be {STORAGE_URL_FORMS}"
    if problem:
        raise ConfigError(f"invalid configuration: [storage] url: {problem}")
