"""`shortlink doctor`: is this install healthy? Checks as plain functions; the CLI prints.

Each check returns facts (what was found, for the report) and findings: a problem
(something is wrong: the command exits 1) or a note (worth knowing, not wrong), each
with how to fix it. Nothing here writes: the database is opened read-only, and a
missing one is reported, not created.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import msgspec

from shortlink.config import ConfigError, LoadedConfig, load_config_with_origins, unknown_environment_names
from shortlink.storage import DatabaseUnavailable, is_postgresql, sqlite_path
from shortlink.storage.schema import postgresql_migrations, postgresql_version, sqlite_migrations
from shortlink.storage.sqlite import connect_read_only, integrity_and_version

# Environment variables of ours that are not settings.
NOT_SETTINGS = {"SHORTLINK_API_KEY"}  # `shortlink mcp`'s key
SECRET_WORDS = ("password", "secret", "token", "key")
WAL_WARNING_BYTES = 512 * 1024 * 1024
FREE_DISK_MINIMUM_BYTES = 1024 * 1024 * 1024
# The bundled table is released about monthly: three months means updates have stopped.
GEOIP_STALE_DAYS = 92
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}
# How long the PostgreSQL and Redis checks wait for their server before reporting it unreachable.
CONNECT_TIMEOUT_SECONDS = 5
# Litestream syncs every second by default: a replica this far behind the database is not
# catching up, and a lost machine would take that much with it.
BACKUP_LAG_PROBLEM_SECONDS = 60
# `litestream generations` lists the bucket; its S3 client retries an unreachable endpoint.
LITESTREAM_TIMEOUT_SECONDS = 30
# Go's time.Duration text, as Litestream prints a lag: "456ms", "1m2.5s", "-1s".
GO_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
GO_DURATION_PART = re.compile(r"([0-9.]+)(h|ms|m|s|us|µs|ns)")


class Finding(msgspec.Struct, frozen=True):
    check: str  # configuration | database | redis | data files | security | proxies | app links | backup
    severity: Literal["problem", "note"]
    message: str
    fix: str


class Setting(msgspec.Struct, frozen=True):
    key: str  # "[section] key"
    value: Any
    origin: str  # default | file | environment | command line


class Report(msgspec.Struct):
    config_file: str
    settings: list[Setting]
    facts: dict[str, Any]
    findings: list[Finding]

    @property
    def healthy(self) -> bool:
        return not any(finding.severity == "problem" for finding in self.findings)


def _problem(check: str, message: str, fix: str) -> Finding:
    return Finding(check, "problem", message, fix)


def _note(check: str, message: str, fix: str) -> Finding:
    return Finding(check, "note", message, fix)


def mask(key: str, value: Any) -> Any:
    """A value fit to print: passwords in URLs and secret-looking keys hidden."""
    if isinstance(value, str) and "://" in value:
        parts = urlsplit(value)
        if parts.password:
            netloc = f"{parts.username or ''}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
            return urlunsplit(parts._replace(netloc=netloc))
    if isinstance(value, str) and value and any(word in key for word in SECRET_WORDS):
        return "***"
    return value


def settings_of(loaded: LoadedConfig) -> list[Setting]:
    config = msgspec.to_builtins(loaded.config)
    return [
        Setting(f"[{section}] {key}", mask(key, config[section][key]), origin)
        for dotted, origin in loaded.origins.items()
        for section, key in [dotted.split(".", 1)]
    ]


def check_environment(environ: Mapping[str, str]) -> list[Finding]:
    return [
        _problem(
            "configuration",
            f"environment variable {name} is not a setting and is ignored",
            "remove it, or correct its name: settings are SHORTLINK_<SECTION>_<KEY>, e.g. SHORTLINK_SERVER_PORT",
        )
        for name in unknown_environment_names(environ)
        if name not in NOT_SETTINGS
    ]


def check_database(path: Path, facts: dict[str, Any]) -> list[Finding]:
    """Integrity, WAL size, migrations applied vs shipped, the directory's free space and permissions."""
    findings: list[Finding] = []
    directory = path.parent
    if not directory.is_dir():
        return [_problem("database", f"the directory {directory} does not exist", f"mkdir -p {directory}")]
    free = shutil.disk_usage(directory).free
    facts["free_disk_bytes"] = free
    if free < FREE_DISK_MINIMUM_BYTES:
        findings.append(
            _problem("database", f"only {free // 2**20} MiB free beside {path}", "free disk space or move the data")
        )
    writable = os.access(directory, os.W_OK | os.X_OK)
    if not writable:
        findings.append(
            _problem(
                "database",
                f"{directory} is not writable by this user: SQLite needs it for the -wal and -shm files",
                f"chown the directory to the service's user, or chmod u+rwx {directory}",
            )
        )
    if not path.is_file():
        # Before the first start there is no database yet, and none is expected.
        where = "writable" if writable else "not writable"
        return [
            *findings,
            _note(
                "database",
                f"no database at {path} yet: the server creates it there when it first starts "
                f"({directory} is {where} by this user)",
                "nothing to do before the first start; otherwise check [storage] path",
            ),
        ]
    if not os.access(path, os.R_OK | os.W_OK):
        findings.append(
            _problem("database", f"{path} is not readable and writable by this user", f"chown or chmod u+rw {path}")
        )
        return findings
    wal = Path(f"{path}-wal")
    facts["wal_bytes"] = wal.stat().st_size if wal.exists() else 0
    if facts["wal_bytes"] > WAL_WARNING_BYTES:
        findings.append(
            _note(
                "database",
                f"the write-ahead log is {facts['wal_bytes'] // 2**20} MiB: checkpoints are not keeping up",
                "look for a long-running reader (a backup, an open sqlite3 shell); restarting the server checkpoints",
            )
        )
    findings += _check_file(path, facts)
    return findings


def _check_file(path: Path, facts: dict[str, Any]) -> list[Finding]:
    try:
        integrity, applied = integrity_and_version(path)
    except sqlite3.Error as exc:
        return [_problem("database", f"{path} cannot be read as SQLite: {exc}", "restore it from a backup")]
    shipped = max(number for number, _, _ in sqlite_migrations())
    facts.update(integrity=integrity[0] if integrity == ["ok"] else integrity, migrations_applied=applied)
    facts["migrations_shipped"] = shipped
    findings = []
    if integrity != ["ok"]:
        findings.append(
            _problem(
                "database",
                f"integrity_check: {'; '.join(integrity[:3])}",
                "stop the server and restore the latest backup (see Backup and restore)",
            )
        )
    return findings + _migration_findings(applied, shipped)


def _migration_findings(applied: int, shipped: int) -> list[Finding]:
    if applied > shipped:
        return [
            _problem(
                "database",
                f"the database has migration {applied}, this version knows only up to {shipped}",
                "run the newer shortlink release that wrote it",
            )
        ]
    if applied < shipped:
        return [
            _note(
                "database", f"migrations {applied + 1}-{shipped} not applied yet", "they apply when the server starts"
            )
        ]
    return []


def check_postgresql(url: str, facts: dict[str, Any]) -> list[Finding]:
    """The server answers, its version, and migrations applied vs shipped; in a read-only session."""
    from shortlink.storage import postgresql

    try:
        conn = postgresql.connect_read_only(url)
    except DatabaseUnavailable as exc:
        fix = "check [storage] url, that PostgreSQL is running, and that this user may connect"
        return [_problem("database", str(exc), fix)]
    try:
        facts["postgresql_version"] = conn.raw.info.server_version
        applied = postgresql_version(conn)
    finally:
        conn.close()
    shipped = max(number for number, _, _ in postgresql_migrations())
    facts.update(migrations_applied=applied, migrations_shipped=shipped)
    return _migration_findings(applied, shipped)


def check_redis(url: str, facts: dict[str, Any]) -> list[Finding]:
    """With a [redis] url, the server must reach it: rate limits and link changes go through it."""
    import redis

    client = redis.Redis.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT_SECONDS, socket_timeout=CONNECT_TIMEOUT_SECONDS
    )
    try:
        facts["redis_version"] = client.info("server")["redis_version"]
    except redis.RedisError as exc:
        return [
            _problem(
                "redis",
                f"{mask('url', url)}: cannot connect: {exc}",
                "start Redis, correct [redis] url, or empty it to run a single process without Redis",
            )
        ]
    finally:
        client.close()
    return []


def check_data_files(geoip_path: str, facts: dict[str, Any]) -> list[Finding]:
    """The bot rules (present, their versions) and the country table (readable, its date)."""
    findings: list[Finding] = []
    shipped = {
        "crawler-user-agents": ("crawleruseragents", "crawler-user-agents.json"),
        "device-detector": ("device_detector", "regexes/upstream/bots.yml"),
    }
    for distribution, (package, data) in shipped.items():
        try:
            version = importlib.metadata.version(distribution)
            present = (importlib.resources.files(package) / data).is_file()
        except (importlib.metadata.PackageNotFoundError, ModuleNotFoundError):
            version, present = None, False
        facts[distribution] = {"version": version, "file": data, "present": present}
        if not present:
            findings.append(
                _problem(
                    "data files", f"{distribution}: {data} is missing", f"pip install --force-reinstall {distribution}"
                )
            )
    return findings + _check_country_table(geoip_path, facts)


def _check_country_table(path: str, facts: dict[str, Any]) -> list[Finding]:
    from shortlink.visits.countries import CountryTableError, open_table

    refresh = "pip install -U iptocc, or set [geoip] path to a newer country MMDB file (docs/deployment.md: Countries)"
    try:
        table = open_table(path)
    except CountryTableError as exc:
        return [_problem("data files", str(exc), "name a readable country MMDB file, or empty [geoip] path")]
    built = table.built
    facts["geoip"] = {"table": table.source, "date": built.isoformat() if built else None}
    if built is None:
        return [_note("data files", f"the country table ({table.source}) does not say when it was built", refresh)]
    age = (date.today() - built).days
    if age <= GEOIP_STALE_DAYS:
        return []
    return [
        _note(
            "data files",
            f"the country table is from {built} ({age} days old): countries of reassigned addresses may be wrong",
            refresh,
        )
    ]


def check_short_host(loaded: LoadedConfig) -> list[Finding]:
    """Cookie security and proxies follow from the short host's scheme."""
    config = loaded.config
    parts = urlsplit(config.short_host)
    local = (parts.hostname or "") in LOCAL_HOSTS
    findings = []
    if parts.scheme == "http" and not local:
        findings.append(
            _problem(
                "security",
                f"short host {config.short_host} is plain http: remembered-password cookies are not Secure "
                "and passwords cross the network in clear",
                'serve it over https behind a proxy and set [links] short_host = "https://..."',
            )
        )
    if parts.scheme == "https" and not config.network.trusted_proxies:
        findings.append(
            _problem(
                "proxies",
                "short host is https (a TLS proxy in front) but [network] trusted_proxies is empty: every visitor "
                "looks like the proxy, sharing one password-attempt bucket and one country",
                'set [network] trusted_proxies to the proxy\'s address, e.g. ["127.0.0.1/32"]',
            )
        )
    return findings


def check_trusted_proxies(loaded: LoadedConfig) -> list[Finding]:
    findings = []
    for network in loaded.config.trusted_networks:
        if network.prefixlen == 0:
            findings.append(
                _problem(
                    "proxies",
                    f"trusted_proxies has {network}: anyone can forge X-Forwarded-For and pick their own address",
                    "list only your proxies' addresses",
                )
            )
        elif network.is_global and loaded.config.server.host in ("127.0.0.1", "::1", "localhost"):
            findings.append(
                _note(
                    "proxies",
                    f"trusted_proxies has the public network {network} but the server listens on "
                    f"{loaded.config.server.host} only",
                    "a proxy on this machine connects from 127.0.0.1: trust that instead",
                )
            )
    return findings


def _apps_and_domains(location: str) -> tuple[dict[int | None, list[Any]], list[tuple[str, int]]]:
    """Every app by owner and every custom domain, read without writing; nothing when the
    database or its apps table is not there yet."""
    from shortlink.applinks.service import apps_by_owner
    from shortlink.storage import accounts as account_store

    if is_postgresql(location):
        from shortlink.storage import postgresql

        conn: Any = postgresql.connect_read_only(location)
    else:
        path = Path(sqlite_path(location))
        if not path.is_file():
            return {}, []
        conn = connect_read_only(path)
    try:
        return apps_by_owner(conn), account_store.all_domains(conn)
    except Exception:  # no apps table yet (migrations pending): reported by the database check
        return {}, []
    finally:
        conn.close()


def check_app_links(loaded: LoadedConfig, facts: dict[str, Any], via: str | None = None) -> list[Finding]:
    """Each host that should name apps is fetched over HTTP(S) and its association files
    checked as Apple's and Google's validators do: one problem per mistake. `via` fetches
    from that address (before DNS points at this server) with each host's name as Host."""
    import asyncio

    from shortlink.applinks.check import Target, check_hosts
    from shortlink.fetcher.addresses import address_policy, any_address

    try:
        apps, domains = _apps_and_domains(loaded.config.storage.location)
    except DatabaseUnavailable:
        return []
    if not apps:
        return []
    short = urlsplit(loaded.config.short_host)
    # (host, its apps, whether the operator configured it)
    targets: list[tuple[str, list[Any], bool]] = [(short.netloc, apps.get(None, []), True)]
    targets += [(host, apps.get(None, []), True) for host in loaded.config.links.domains]
    targets += [(host, apps.get(account_id, []), False) for host, account_id in domains]
    # The title fetcher's address policy for names others' DNS may answer for; the address
    # given as --via, and a development host the operator configured, are the operator's own.
    policy = address_policy(loaded.config.fetcher.allow_private_addresses)
    checks = []
    for host, owned, configured in targets:
        ios = [app.ios for app in owned if app.ios]
        android = [app.android for app in owned if app.android]
        if not ios and not android:
            continue
        local = host.split(":")[0] in LOCAL_HOSTS
        mine = via is not None or (configured and local)
        checks.append(
            Target(host, f"{short.scheme}://{host}", ios, android, any_address if mine else policy, via, local)
        )
    findings, checked = [], []
    for result in asyncio.run(check_hosts(checks)):
        checked.append(f"{result.host}{result.file}")
        findings += [
            _problem("app links", mistake, "see docs/app-links.md, The association files")
            for mistake in result.mistakes
        ]
    facts["association_files_checked"] = checked
    return findings


def go_duration_seconds(text: str) -> float:
    """Seconds of a Go duration as Litestream prints it ("1m2.5s", "456ms", "-1s")."""
    sign, body = (-1.0, text[1:]) if text.startswith("-") else (1.0, text)
    parts = GO_DURATION_PART.findall(body)
    if not parts or "".join(number + unit for number, unit in parts) != body:
        raise ValueError(f"not a duration: {text!r}")
    return sign * sum(float(number) * GO_DURATION_UNITS[unit] for number, unit in parts)


def check_backup(litestream_config: str, location: str, facts: dict[str, Any]) -> list[Finding]:
    """Litestream's own `litestream generations` says, per replica, where its newest generation
    ends and how far that lags behind the database's last write; past a minute it is a problem."""
    fix = "see docs/deployment.md, Continuous backup"
    if is_postgresql(location):
        return [
            _problem(
                "backup",
                "[backup] litestream_config is set but the database is PostgreSQL: Litestream copies SQLite files",
                "empty [backup] litestream_config; back PostgreSQL up with its own tools "
                "(docs/deployment.md, Continuous backup)",
            )
        ]
    if not Path(litestream_config).is_file():
        return [
            _problem(
                "backup", f"{litestream_config}: no such Litestream configuration", "correct [backup] litestream_config"
            )
        ]
    litestream = shutil.which("litestream")
    if litestream is None:
        return [_problem("backup", "litestream is not installed (not on PATH)", f"install it; {fix}")]
    database = os.path.abspath(sqlite_path(location))
    try:
        listed = subprocess.run(
            [litestream, "generations", "-config", litestream_config, database],
            capture_output=True,
            text=True,
            timeout=LITESTREAM_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        return [
            _problem(
                "backup",
                f"litestream generations did not answer in {LITESTREAM_TIMEOUT_SECONDS} s",
                "check the replica's endpoint and that this machine reaches it",
            )
        ]
    if listed.returncode != 0:
        said = (listed.stderr.strip() or listed.stdout.strip() or f"exit status {listed.returncode}").splitlines()[-1]
        return [
            _problem(
                "backup",
                f"litestream generations {database}: {said}",
                "the Litestream configuration must name [storage] path, and its credentials "
                "(LITESTREAM_ACCESS_KEY_ID, LITESTREAM_SECRET_ACCESS_KEY) be in this environment",
            )
        ]
    newest: dict[str, dict[str, Any]] = {}
    # name  generation  lag  start  end (RFC 3339, so the newest generation sorts last)
    for line in listed.stdout.splitlines()[1:]:
        fields = line.split()
        if len(fields) != 5:
            continue
        name, generation, lag, _start, end = fields
        if name not in newest or end >= newest[name]["newest"]:
            seconds = max(go_duration_seconds(lag), 0.0)
            newest[name] = {"generation": generation, "newest": end, "lag_seconds": round(seconds, 3)}
    if not newest:
        return [
            _problem(
                "backup",
                f"no replica of {database} holds a generation yet",
                "start litestream replicate (systemctl enable --now shortlink-litestream)",
            )
        ]
    facts["backup"] = newest
    return [
        _problem(
            "backup",
            f"replica {name} is {replica['lag_seconds']:.0f} s behind the database (newest {replica['newest']})",
            "check that litestream replicate runs (systemctl status shortlink-litestream) and reaches the bucket",
        )
        for name, replica in newest.items()
        if replica["lag_seconds"] > BACKUP_LAG_PROBLEM_SECONDS
    ]


def diagnose(config_path: str | None, environ: Mapping[str, str], via: str | None = None, **overrides: Any) -> Report:
    findings = check_environment(environ)
    try:
        loaded = load_config_with_origins(config_path, environ, **overrides)
    except ConfigError as exc:
        fix = "correct the file or the environment variable it names"
        return Report(config_path or "shortlink.toml", [], {}, [*findings, _problem("configuration", str(exc), fix)])
    location = loaded.config.storage.location
    facts: dict[str, Any] = {"short_host": loaded.config.short_host}
    if is_postgresql(location):
        from shortlink.storage.postgresql import describe

        facts["database"] = describe(location)
        findings += check_postgresql(location, facts)
    else:
        facts["database"] = str(sqlite_path(location))
        findings += check_database(Path(sqlite_path(location)), facts)
    if loaded.config.redis.url:
        findings += check_redis(loaded.config.redis.url, facts)
    findings += check_data_files(loaded.config.geoip.path, facts)
    findings += check_short_host(loaded)
    findings += check_trusted_proxies(loaded)
    findings += check_app_links(loaded, facts, via)
    if loaded.config.backup.litestream_config:
        findings += check_backup(loaded.config.backup.litestream_config, location, facts)
    return Report(str(loaded.file), settings_of(loaded), facts, findings)
