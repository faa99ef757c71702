"""`shortlink doctor`: a healthy install passes; each deliberately broken setting is reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime

import psycopg
import pytest

from shortlink.storage import connect, postgresql
from tests.conftest import run_cli
from tests.support.countries import write_country_file
from tests.support.helpers import cli_here
from throwaway.live_server import free_port
from throwaway.redis_server import RedisServer


@pytest.fixture
def install(tmp_path, monkeypatch):
    """A healthy install: a migrated database, a configuration file, no stray SHORTLINK_* variables."""
    for name in list(os.environ):
        if name.startswith("SHORTLINK_"):
            monkeypatch.delenv(name)
    database = tmp_path / "data" / "shortlink.db"
    database.parent.mkdir()
    connect(database).close()
    config = tmp_path / "shortlink.toml"
    config.write_text('[limits]\nlinks_per_day = 50\n[links]\nshort_host = "http://127.0.0.1:8000"\n')
    return config, database


def doctor(config, database, *extra: str) -> tuple[int, dict]:
    code, output = cli_here("doctor", "--config", str(config), "--db", str(database), "--json", *extra)
    return code, json.loads(output)


def problems(report: dict) -> list[str]:
    return [f"{f['check']}: {f['message']}" for f in report["findings"] if f["severity"] == "problem"]


@pytest.fixture
def redis_with_password(tmp_path):
    server = RedisServer(tmp_path / "redis", password="hunter2").start()
    try:
        yield server
    finally:
        server.stop()


def test_a_healthy_install_passes_and_says_where_each_setting_came_from(install, monkeypatch, redis_with_password):
    config, database = install
    monkeypatch.setenv("SHORTLINK_SERVER_PORT", "9001")
    monkeypatch.setenv("SHORTLINK_REDIS_URL", redis_with_password.url)
    monkeypatch.setenv("SHORTLINK_API_KEY", "sl_live_for_the_mcp_command")  # ours, not a setting
    code, report = doctor(config, database)
    assert code == 0 and report["healthy"] and problems(report) == []
    settings = {setting["key"]: (setting["value"], setting["origin"]) for setting in report["settings"]}
    assert settings["[limits] links_per_day"] == (50, "file")
    assert settings["[server] port"] == (9001, "environment")
    assert settings["[storage] path"] == (str(database), "command line")
    assert settings["[limits] requests_per_minute"] == (60, "default")
    # Secrets are masked: the Redis password never shows.
    assert settings["[redis] url"] == (f"redis://:***@127.0.0.1:{redis_with_password.port}/0", "environment")
    assert "hunter2" not in json.dumps(report)
    facts = report["facts"]
    assert facts["database"] == str(database) and facts["redis_version"]
    assert facts["integrity"] == "ok" and facts["migrations_applied"] == facts["migrations_shipped"] > 0
    assert facts["wal_bytes"] >= 0 and facts["free_disk_bytes"] > 0
    for package in ("crawler-user-agents", "device-detector"):
        assert facts[package]["present"] and facts[package]["version"]
    assert facts["geoip"]["table"].startswith("iptocc ") and facts["geoip"]["date"] >= "2026-10-01"
    human = run_cli("doctor", "--config", str(config), "--db", str(database))
    assert human.stdout.rstrip().endswith("healthy") and "(environment)" in human.stdout
    assert f'"date": "{facts["geoip"]["date"]}"' in human.stdout


def test_db_names_the_database_looked_at_even_where_the_file_names_a_url(install):
    """As for every command: `--db` wins over `[storage] url` and `path` in the file."""
    config, database = install
    config.write_text(config.read_text() + '[storage]\nurl = "postgresql://nobody@127.0.0.1:1/none"\n')
    code, report = doctor(config, database)
    assert code == 0 and report["facts"]["database"] == str(database), problems(report)
    settings = {setting["key"]: (setting["value"], setting["origin"]) for setting in report["settings"]}
    assert settings["[storage] url"] == ("", "command line")


def test_the_operators_country_file_is_shown_with_its_date_and_an_old_one_is_noted(install, monkeypatch, tmp_path):
    config, database = install
    fresh = write_country_file(tmp_path / "fresh.mmdb", {"8.8.8.0/24": "US"})
    monkeypatch.setenv("SHORTLINK_GEOIP_PATH", str(fresh))
    code, report = doctor(config, database)
    assert code == 0 and report["facts"]["geoip"]["date"] == date.today().isoformat()
    assert str(fresh) in report["facts"]["geoip"]["table"]
    assert not [f for f in report["findings"] if f["check"] == "data files"]

    old = write_country_file(tmp_path / "old.mmdb", {"8.8.8.0/24": "US"}, built=datetime(2024, 6, 18, tzinfo=UTC))
    monkeypatch.setenv("SHORTLINK_GEOIP_PATH", str(old))
    code, report = doctor(config, database)
    notes = [f"{f['message']} / {f['fix']}" for f in report["findings"] if f["check"] == "data files"]
    assert code == 0 and report["facts"]["geoip"]["date"] == "2024-06-18"
    assert len(notes) == 1 and "from 2024-06-18" in notes[0] and "pip install -U iptocc" in notes[0]

    monkeypatch.setenv("SHORTLINK_GEOIP_PATH", str(tmp_path / "absent.mmdb"))
    code, report = doctor(config, database)
    assert code == 1 and any("[geoip] path" in problem and "absent.mmdb" in problem for problem in problems(report))


@pytest.mark.parametrize(
    ("setting", "value", "expected"),
    [
        ("SHORTLINK_LINKS_SHORT_HOST", "https://sho.rt", "proxies: short host is https"),
        ("SHORTLINK_LINKS_SHORT_HOST", "http://sho.rt", "security: short host http://sho.rt is plain http"),
        ("SHORTLINK_NETWORK_TRUSTED_PROXIES", "0.0.0.0/0", "proxies: trusted_proxies has 0.0.0.0/0"),
        ("SHORTLINK_SHORTHOST", "https://sho.rt", "configuration: environment variable SHORTLINK_SHORTHOST"),
        ("SHORTLINK_SERVER_PROT", "9000", "configuration: invalid configuration: environment variable"),
    ],
)
def test_a_broken_setting_is_reported_with_its_fix(install, monkeypatch, setting, value, expected):
    config, database = install
    monkeypatch.setenv(setting, value)
    code, report = doctor(config, database)
    assert code == 1 and report["healthy"] is False
    assert any(problem.startswith(expected) for problem in problems(report)), problems(report)
    assert all(finding["fix"] for finding in report["findings"])
    # Without --json: one line per problem, with how to fix it.
    human = run_cli("doctor", "--config", str(config), "--db", str(database), check=False)
    assert human.returncode == 1 and human.stdout.rstrip().endswith("found")
    lines = [line for line in human.stdout.splitlines() if line.startswith("PROBLEM")]
    assert len(lines) == len(problems(report)) and all(" -> " in line for line in lines)


def test_a_damaged_database_is_reported(install, tmp_path):
    config, database = install
    database.write_bytes(b"not a database at all" * 100)
    code, report = doctor(config, database)
    assert code == 1 and any("cannot be read as SQLite" in problem for problem in problems(report))


def test_before_the_first_start_no_database_is_expected(install, tmp_path):
    """A fresh install: where the database will be made, and whether that directory is writable."""
    config, _ = install
    fresh = tmp_path / "data" / "nothing.db"
    code, report = doctor(config, fresh)
    assert code == 0 and problems(report) == []
    notes = [f["message"] for f in report["findings"] if f["check"] == "database"]
    assert notes == [
        f"no database at {fresh} yet: the server creates it there when it first starts "
        f"({fresh.parent} is writable by this user)"
    ]
    assert not fresh.exists()  # the doctor creates nothing
    human = run_cli("doctor", "--config", str(config), "--db", str(fresh), check=False)
    assert human.returncode == 0 and "PROBLEM" not in human.stdout


def test_a_missing_data_directory_is_reported_and_not_created(install, tmp_path):
    config, _ = install
    nowhere = tmp_path / "no-such-directory" / "shortlink.db"
    code, report = doctor(config, nowhere)
    assert code == 1 and any("does not exist" in problem for problem in problems(report))
    fixes = [finding["fix"] for finding in report["findings"] if "does not exist" in finding["message"]]
    assert fixes == [f"mkdir -p {nowhere.parent}"] and not nowhere.parent.exists()


def test_a_data_directory_the_service_user_cannot_write_is_reported(install, tmp_path):
    config, _ = install
    data = tmp_path / "unwritable"
    data.mkdir()
    connect(data / "shortlink.db").close()
    command = [sys.executable, "-m", "shortlink", "doctor", "--config", str(config)]
    command += ["--db", str(data / "shortlink.db"), "--json"]
    if os.geteuid() == 0:
        # Root writes anywhere through two capabilities: without them it is held to the mode
        # bits like any service user, and still reads this checkout wherever it was cloned.
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", *command]
    data.chmod(0o555)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        report = json.loads(result.stdout)
        assert result.returncode == 1, result.stderr
        assert any("is not writable by this user" in problem for problem in problems(report)), problems(report)
    finally:
        data.chmod(0o755)


def test_a_redis_the_server_cannot_reach_is_reported(install, monkeypatch):
    config, database = install
    monkeypatch.setenv("SHORTLINK_REDIS_URL", f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    code, report = doctor(config, database)
    assert code == 1 and any(problem.startswith("redis: redis://:***@127.0.0.1:") for problem in problems(report))
    assert "cannot connect" in problems(report)[0] and "hunter2" not in json.dumps(report)


def test_an_sqlite_url_is_checked_at_the_file_it_names(install, tmp_path, monkeypatch):
    config, database = install
    monkeypatch.setenv("SHORTLINK_STORAGE_URL", f"sqlite:///{database}")
    code, output = cli_here("doctor", "--config", str(config), "--json")
    report = json.loads(output)
    assert code == 0 and report["facts"]["database"] == str(database)
    assert report["facts"]["integrity"] == "ok"
    # The same URL given as --db.
    monkeypatch.delenv("SHORTLINK_STORAGE_URL")
    code, report = doctor(config, f"sqlite:///{database}")
    assert code == 0 and report["facts"]["database"] == str(database)


def test_a_postgresql_install_is_checked_through_its_server(install, postgres_server, monkeypatch):
    config, _ = install
    url = postgres_server.new_database()
    try:
        connect(url).close()  # migrated, as a server start leaves it
        monkeypatch.setenv("SHORTLINK_STORAGE_URL", url)
        result = run_cli("doctor", "--config", str(config), "--json", check=False)
        report = json.loads(result.stdout)
        assert result.returncode == 0 and problems(report) == []
        facts = report["facts"]
        assert facts["database"].startswith("postgresql://") and facts["postgresql_version"] > 0
        assert facts["migrations_applied"] == facts["migrations_shipped"] > 0
        assert "integrity" not in facts  # the SQLite file checks are not made on a PostgreSQL database
        read_only = postgresql.connect_read_only(url)  # the doctor's session: it cannot write
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            read_only.execute("CREATE TABLE doctor_wrote_this (a integer)")
        read_only.close()
    finally:
        postgres_server.drop_database(url)
    unreachable = url.replace(f":{postgres_server.port}/", f":{free_port()}/")
    monkeypatch.setenv("SHORTLINK_STORAGE_URL", unreachable)
    result = run_cli("doctor", "--config", str(config), "--json", check=False)
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert any(
        problem.startswith("database: [storage] url postgresql://") and "cannot connect" in problem
        for problem in problems(report)
    )
