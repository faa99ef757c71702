"""SHORTLINK_<SECTION>_<KEY>_FILE: a secret-bearing setting read from a file (a container's secret)."""

from pathlib import Path

import pytest

from shortlink.config import ConfigError, load_config, load_config_with_origins
from tests.conftest import run_cli

URL = "postgresql://shortlink:s3cret@db:5432/shortlink"


def secret(tmp_path: Path, text: str, name: str = "secret") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("setting", "value", "read"),
    [
        ("SHORTLINK_STORAGE_URL", URL + "\n", lambda config: config.storage.url),
        ("SHORTLINK_REDIS_URL", "redis://:p4ss@cache:6379/0\r\n", lambda config: config.redis.url),
    ],
)
def test_a_secret_bearing_setting_reads_its_file_without_the_trailing_newline(tmp_path, setting, value, read):
    loaded = load_config_with_origins(environ={f"{setting}_FILE": secret(tmp_path, value)})
    assert read(loaded.config) == value.rstrip("\r\n")
    assert loaded.origins[setting.removeprefix("SHORTLINK_").lower().replace("_", ".", 1)] == "environment"


def test_a_secret_file_is_validated_like_the_setting_itself(tmp_path):
    with pytest.raises(ConfigError, match=r"\[storage\] url: must be"):
        load_config(environ={"SHORTLINK_STORAGE_URL_FILE": secret(tmp_path, "mysql://x/y\n")})


def test_a_missing_secret_file_is_one_line_naming_the_variable_and_the_file(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"SHORTLINK_STORAGE_URL_FILE": str(missing)})
    message = str(caught.value)
    assert "\n" not in message
    assert "SHORTLINK_STORAGE_URL_FILE" in message and str(missing) in message and "No such file" in message


def test_both_forms_at_once_is_an_error_naming_both(tmp_path):
    environ = {"SHORTLINK_REDIS_URL": "redis://a:6379/0", "SHORTLINK_REDIS_URL_FILE": secret(tmp_path, "redis://b")}
    with pytest.raises(ConfigError, match="both SHORTLINK_REDIS_URL and SHORTLINK_REDIS_URL_FILE are set"):
        load_config(environ=environ)


def test_settings_holding_no_secret_take_no_file_form(tmp_path):
    with pytest.raises(ConfigError, match="SHORTLINK_SERVER_PORT_FILE is not a setting"):
        load_config(environ={"SHORTLINK_SERVER_PORT_FILE": secret(tmp_path, "9000")})


def test_the_file_form_of_the_key_file_setting_stays_that_setting(tmp_path):
    # [storage] secret_file names a file already: SHORTLINK_STORAGE_SECRET_FILE is its variable.
    key = secret(tmp_path, "k" * 64, "secret.key")
    assert load_config(environ={"SHORTLINK_STORAGE_SECRET_FILE": key}).storage.secret_file == key


def test_a_command_line_value_wins_over_the_file(tmp_path):
    environ = {"SHORTLINK_STORAGE_URL_FILE": secret(tmp_path, URL)}
    assert load_config(environ=environ, storage_url="sqlite:///x.db").storage.url == "sqlite:///x.db"


def test_the_cli_uses_a_database_named_in_a_secret_file(tmp_path, monkeypatch):
    database = tmp_path / "from-secret.db"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHORTLINK_STORAGE_URL_FILE", secret(tmp_path, f"sqlite:///{database}\n"))
    result = run_cli("key", "create", "--email", "file@example.com", "--json", check=False)
    assert result.returncode == 0, result.stderr
    assert database.exists()
