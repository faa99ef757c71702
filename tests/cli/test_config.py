from pathlib import Path

import msgspec
import pytest

from shortlink.config import Config, ConfigError, load_config
from tests.conftest import run_cli
from tests.support import paths


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "shortlink.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file_match_the_contract(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(environ={})
    assert (config.server.host, config.server.port) == ("127.0.0.1", 8000)
    assert config.storage.path == "data/shortlink.db"
    assert config.limits.requests_per_minute == 60 and config.limits.links_per_day == 1000
    assert config.network.trusted_proxies == []
    assert config.fetcher.enabled is True and config.fetcher.allow_private_addresses is False
    assert config.short_host == "http://127.0.0.1:8000"


def test_the_shipped_shortlink_toml_loads_and_equals_the_defaults(monkeypatch):
    repo = paths.REPO
    monkeypatch.chdir(repo)
    assert load_config(repo / "shortlink.toml", environ={}) == load_config(
        environ={},
    )


def test_file_values_and_environment_overrides(tmp_path):
    path = write(tmp_path, '[server]\nport = 9001\n[links]\nshort_host = "https://sho.rt/"\n')
    config = load_config(
        path,
        environ={
            "SHORTLINK_STORAGE_PATH": "/srv/x.db",
            "SHORTLINK_LIMITS_REQUESTS_PER_MINUTE": "5",
            "SHORTLINK_NETWORK_TRUSTED_PROXIES": "127.0.0.0/8, 10.0.0.0/8",
            "SHORTLINK_FETCHER_ENABLED": "false",
            "SHORTLINK_FETCHER_TIMEOUT_SECONDS": "2.5",
        },
    )
    assert config.server.port == 9001
    assert config.short_host == "https://sho.rt"
    assert config.storage.path == "/srv/x.db"
    assert config.limits.requests_per_minute == 5
    assert config.network.trusted_proxies == ["127.0.0.0/8", "10.0.0.0/8"]
    assert config.fetcher.enabled is False and config.fetcher.timeout_seconds == 2.5


@pytest.mark.parametrize(
    ("text", "env", "names"),
    [
        ("[server]\nport = 'eighty'\n", {}, "[server] port"),
        ("[server]\nportt = 80\n", {}, "portt"),
        ("[nosuch]\nkey = 1\n", {}, "nosuch"),
        ('[network]\ntrusted_proxies = ["10.0.0.0/33"]\n', {}, "trusted_proxies"),
        ("", {"SHORTLINK_LIMITS_LINKS_PER_DAY": "many"}, "links_per_day"),
        ("", {"SHORTLINK_SERVER_PORT": "0"}, "port"),
        ("[server\n", {}, "not valid TOML"),
        ("", {"SHORTLINK_SERVER_PROT": "9000"}, "SHORTLINK_SERVER_PROT"),
        ("", {"SHORTLINK_REDIS_URL": "127.0.0.1:6379"}, "[redis] url"),
    ],
)
def test_bad_configuration_is_one_line_naming_the_key(tmp_path, text, env, names):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text), environ=env)
    message = str(caught.value)
    assert names in message and "\n" not in message


def test_bad_configuration_stops_the_cli_without_a_traceback(tmp_path):
    path = write(tmp_path, "[server]\nport = 'x'\n")
    result = run_cli("key", "list", "--email", "a@b.c", "--config", str(path), check=False)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "[server] port" in result.stderr


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("SHORTLINK_SERVER_PROT", "[server] has host, port"),  # a misspelled key
        ("SHORTLINK_LIMITS_LINKS_PER_MINUTE", "[limits] has requests_per_minute, links_per_day"),
    ],
)
def test_an_unknown_key_of_a_known_section_stops_loading_with_a_hint(tmp_path, name, hint):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, ""), environ={name: "9000", "SHORTLINK_SERVER_PORT": "9001"})
    message = str(caught.value)
    assert f"environment variable {name} is not a setting" in message and hint in message
    assert "\n" not in message


@pytest.mark.parametrize("name", ["SHORTLINK_NOPE", "SHORTLINK_API_KEY", "SHORTLINK_BASE_URL", "SHORTLINK_"])
def test_other_shortlink_variables_are_only_warned_about(tmp_path, caplog, name):
    # Not of a section of ours: perhaps the operator's own tools (a client's key, a URL).
    config = load_config(write(tmp_path, ""), environ={name: "x", "SHORTLINK_SERVER_PORT": "9001"})
    assert config.server.port == 9001
    assert [record.getMessage() for record in caplog.records] == [
        f"environment variable {name} is not a setting and is ignored (settings are "
        f"SHORTLINK_<SECTION>_<KEY>; sections are {', '.join(field.name for field in msgspec.structs.fields(Config))})"
    ]


def test_other_environment_variables_and_known_settings_are_fine(tmp_path):
    config = load_config(
        write(tmp_path, ""),
        environ={
            "SHORTLINK_SERVER_PORT": "9001",
            "SHORTLINK_LINKS_DOMAINS": "go.brand.example, links.example",
            "SHORTLINKS_NOPE": "1",
            "MY_SHORTLINK_NOPE": "1",
            "shortlink_nope": "1",
            "PATH": "/usr/bin",
        },
    )
    assert config.server.port == 9001 and config.links.domains == ["go.brand.example", "links.example"]


def test_an_unknown_environment_variable_stops_the_cli_in_one_line(tmp_path, monkeypatch):
    path = write(tmp_path, "")
    monkeypatch.setenv("SHORTLINK_SERVER_PROT", "9000")
    result = run_cli(
        "key", "list", "--email", "a@b.c", "--config", str(path), "--db", str(tmp_path / "x.db"), check=False
    )
    assert result.returncode == 1 and result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("shortlink: ") and result.stderr.count("\n") == 1, result.stderr
    assert "SHORTLINK_SERVER_PROT" in result.stderr and "port" in result.stderr
    assert not (tmp_path / "x.db").exists()  # stopped before the database was touched


@pytest.mark.parametrize(("days", "accepted"), [(0, True), (367, True), (3650, True), (1, False), (366, False)])
def test_raw_retention_is_all_or_longer_than_any_analytics_range(tmp_path, days, accepted):
    path = write(tmp_path, f"[clicks]\nraw_retention_days = {days}\n")
    if accepted:
        assert load_config(path, environ={}).clicks.raw_retention_days == days
    else:
        with pytest.raises(ConfigError, match=r"\[clicks\] raw_retention_days: must be 0 .* at least 367"):
            load_config(path, environ={})


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("mysql://db/shortlink", "must be sqlite:///PATH or postgresql://"),
        ("sqlite://relative.db", "sqlite:///relative/path.db"),
        ("sqlite:///", "sqlite:///relative/path.db"),
        ("postgresql://user:s3cret@host:port/db", "not a valid URL"),
        ("postgresql://user@host:5432", "name the database"),
    ],
)
def test_a_bad_storage_url_stops_start_up_in_one_line_without_its_password(tmp_path, url, problem):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, ""), environ={"SHORTLINK_STORAGE_URL": url})
    message = str(caught.value)
    assert message.startswith("invalid configuration: [storage] url: ") and problem in message and "\n" not in message
    assert "s3cret" not in message
    result = run_cli("key", "list", "--email", "a@b.c", "--db", url, check=False)
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and problem in result.stderr


def test_a_storage_url_wins_over_the_path_and_db_names_either(tmp_path):
    config = load_config(write(tmp_path, '[storage]\npath = "a.db"\nurl = "sqlite:///b.db"\n'), environ={})
    assert config.storage.location == "sqlite:///b.db"
    database = tmp_path / "c.db"
    for db in (str(database), f"sqlite:///{database}"):  # a path, and the URL of an absolute path
        created = run_cli("key", "create", "--email", "a@b.c", "--db", db, "--config", str(tmp_path / "shortlink.toml"))
        assert created.returncode == 0
    listed = run_cli("key", "list", "--email", "a@b.c", "--db", str(database)).stdout
    assert listed.count("active") == 2  # both keys went to the one file
    assert not (tmp_path / "b.db").exists()
