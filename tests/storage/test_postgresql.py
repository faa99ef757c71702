"""What is particular to PostgreSQL: migrations when processes start together, an unreachable
server, and search's literal LIKE characters (checked on both backends)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shortlink.storage import connect
from shortlink.storage.schema import postgresql_migrations as migrations
from tests.conftest import run_cli


def test_processes_starting_together_on_an_empty_database_migrate_it_once(postgres_server):
    url = postgres_server.empty_database()
    commands = [
        subprocess.Popen(
            [sys.executable, "-m", "shortlink", "key", "create", "--email", f"p{n}@example.com", "--db", url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    for command in commands:
        _, stderr = command.communicate(timeout=120)
        assert command.returncode == 0, stderr
    conn = connect(url)
    try:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(migrations()[-1][0],)]
        assert conn.execute("SELECT count(*) FROM accounts").fetchone()[0] == 4
    finally:
        conn.close()


def test_an_unreachable_server_is_one_line_without_the_password(tmp_path):
    url = "postgresql://shortlink:s3cret@127.0.0.1:1/shortlink"
    for command in (["key", "list", "--email", "a@b.c"], ["serve", "--port", "18732"]):
        result = run_cli(*command, "--db", url, check=False)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.startswith("shortlink: [storage] url postgresql://shortlink@127.0.0.1:1/shortlink")
        assert "cannot connect" in result.stderr and result.stderr.count("\n") == 1
        assert "s3cret" not in result.stderr


@pytest.mark.both_backends
def test_search_takes_like_characters_literally(client, auth):
    titles = ["100% pure", "100 pure", "a_b", "axb", "c\\d", "cd"]
    ids = {}
    for title in titles:
        created = client.post(
            "/api/v1/links", headers=auth, json={"originalUrl": "https://example.com/", "title": title}
        )
        ids[title] = created.json()["data"]["id"]

    def found(search: str) -> set[str]:
        response = client.get("/api/v1/links", params={"search": search}, headers=auth)
        assert response.status_code == 200
        return {link["title"] for link in response.json()["data"]}

    assert found("%") == found("0% p") == {"100% pure"}
    assert found("_") == found("a_b") == {"a_b"}
    assert found("\\") == found("c\\d") == {"c\\d"}
    assert found("%%") == found("_b_") == set()
