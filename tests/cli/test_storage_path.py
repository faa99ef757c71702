"""A [storage] path that cannot be a database stops every command with one line naming it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shortlink.config import ConfigError
from shortlink.storage import connect
from shortlink.web.asgi import create_app
from tests.conftest import run_cli

NOT_SQLITE = b"not a database" * 100


def bad_paths(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Each kind of bad path, with what the message says about it."""
    directory = tmp_path / "a-directory"
    directory.mkdir()
    not_sqlite = tmp_path / "notes.db"
    not_sqlite.write_bytes(NOT_SQLITE)
    return {
        "directory": (directory, "is a directory"),
        "not sqlite": (not_sqlite, "file is not a database"),
        "under a file": (not_sqlite / "x.db", "cannot open the database"),
    }


def assert_one_line_naming_the_setting(result: subprocess.CompletedProcess, path: Path, problem: str) -> None:
    assert result.returncode == 1, result  # a configuration problem (2 is "not found")
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("shortlink: ") and result.stderr.count("\n") == 1, result.stderr
    assert "[storage] path" in result.stderr and str(path) in result.stderr and problem in result.stderr


@pytest.mark.parametrize("kind", ["directory", "not sqlite", "under a file"])
def test_connect_refuses_a_bad_path_with_a_configuration_error(tmp_path, kind):
    path, problem = bad_paths(tmp_path)[kind]
    with pytest.raises(ConfigError) as caught:
        connect(path).close()
    message = str(caught.value)
    assert "[storage] path" in message and problem in message and "\n" not in message
    assert (tmp_path / "notes.db").read_bytes() == NOT_SQLITE  # never overwritten or migrated
    assert list((tmp_path / "a-directory").iterdir()) == []


def test_the_app_is_not_built_over_a_bad_path(tmp_path, make_config):
    for path, problem in bad_paths(tmp_path).values():
        with pytest.raises(ConfigError, match=problem):
            create_app(make_config(storage_path=str(path)))


@pytest.mark.parametrize("kind", ["directory", "not sqlite", "under a file"])
def test_cli_commands_over_a_bad_path_fail_in_one_line(tmp_path, kind):
    path, problem = bad_paths(tmp_path)[kind]
    config = tmp_path / "shortlink.toml"
    config.write_text(f"[storage]\npath = {str(path)!r}\n")
    for result in (
        run_cli("key", "create", "--email", "a@b.c", "--db", str(path), check=False),
        run_cli("key", "list", "--email", "a@b.c", "--config", str(config), check=False),
    ):
        assert_one_line_naming_the_setting(result, path, problem)
    assert (tmp_path / "notes.db").read_bytes() == NOT_SQLITE


@pytest.mark.parametrize("kind", ["directory", "not sqlite"])
def test_serve_over_a_bad_path_exits_at_once_in_one_line(tmp_path, kind):
    path, problem = bad_paths(tmp_path)[kind]
    # It must stop before the server starts: a server that started would run until the timeout.
    result = subprocess.run(
        [sys.executable, "-m", "shortlink", "serve", "--port", "18731", "--db", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert_one_line_naming_the_setting(result, path, problem)
    assert "Uvicorn running" not in result.stderr and "Started server" not in result.stderr
