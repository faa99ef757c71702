"""The command line: every command's --json document, exit codes, confirmation, progress, Ctrl-C."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing

import pytest

from shortlink.accounts import service as accounts
from shortlink.cli import progress
from shortlink.links import service
from shortlink.links.schema import CreateLink
from shortlink.stopping import Interrupted
from shortlink.storage.sqlite import backup
from shortlink.times import utcnow
from tests.conftest import SHORT_HOST, run_cli
from tests.support.helpers import cli_here, wait_for
from tests.support.terminal import on_terminal

EMAIL = "cli@example.com"


def cli_json(*args: str, code: int = 0) -> dict:
    """Run a command with --json (its entry point, in this process): exactly one JSON document on
    stdout, and the exit code. The tests of what a process shows (terminals, Ctrl-C, pipes) start
    the real command."""
    exit_code, output = cli_here(*args, "--json")
    assert exit_code == code, output
    document = json.loads(output)  # one document, nothing else around it
    assert output.count("\n") == 1
    return document


def add_link(conn, account_id: int, url: str, source, code: str) -> str:
    link = service.create_link(
        conn,
        account_id,
        CreateLink(original_url=url, custom_code=code),
        is_ours=lambda host: False,
        base=SHORT_HOST,
        daily_limit=100,
        now=utcnow(),
        fetch_title=False,
        source=source,
    )
    return link.id


@pytest.fixture
def seeded(db_path, conn):
    created = accounts.create_key(conn, EMAIL, "laptop")
    account_id = accounts.account_for(conn, EMAIL)["id"]
    ids = {
        "api": add_link(conn, account_id, "https://www.youtube.com/watch?v=1", "API", "from-api"),
        "dashboard": add_link(conn, account_id, "https://example.com/a", "DASHBOARD", "from-dash"),
        "mcp": add_link(conn, account_id, "https://example.com/b", "MCP", "from-mcp"),
    }
    return created, ids, ["--db", str(db_path)]


def test_key_commands_print_one_json_document(seeded):
    _, _, db = seeded
    created = cli_json("key", "create", "--email", "new@example.com", "--name", "ci", *db)
    assert set(created) == {"key", "keyId", "userId", "email"}  # exactly the contract's shape
    assert created["key"].startswith("sl_live_") and created["email"] == "new@example.com"
    keys = cli_json("key", "list", "--email", "new@example.com", *db)["data"]
    assert [(key["id"], key["name"], key["revokedAt"]) for key in keys] == [(created["keyId"], "ci", None)]
    assert cli_json("key", "revoke", created["keyId"], *db) == {"revoked": created["keyId"]}
    assert cli_json("key", "list", "--email", "new@example.com", *db)["data"][0]["revokedAt"]
    # Not found is exit code 2, with the API's error envelope as the one document.
    missing = cli_json("key", "revoke", created["keyId"], *db, code=2)
    assert missing["error"]["code"] == "NOT_FOUND"


def test_account_subscription_and_domain_commands(seeded):
    _, _, db = seeded
    listed = cli_json("accounts", "list", *db)["data"]
    assert [(a["email"], a["subscriptionActive"], a["activeKeys"], a["links"]) for a in listed] == [(EMAIL, True, 1, 3)]
    assert cli_json("subscription", "set", "--email", EMAIL, "--inactive", *db) == {
        "email": EMAIL,
        "subscriptionActive": False,
    }
    assert cli_json("accounts", "list", *db)["data"][0]["subscriptionActive"] is False
    assert cli_json("domain", "add", "--email", EMAIL, "Links.Example.COM", *db) == {
        "host": "links.example.com",
        "email": EMAIL,
    }
    assert cli_json("subscription", "set", "--email", "nobody@example.com", "--active", *db, code=2)["error"]
    refused = cli_json("domain", "add", "--email", EMAIL, "not a host", *db, code=1)
    assert refused["error"]["code"] == "VALIDATION_ERROR"
    human = run_cli("accounts", "list", *db).stdout
    assert EMAIL in human and "3 links" in human and not human.startswith("{")


@pytest.mark.slow
def test_links_list_filters_like_the_api_and_by_source(seeded):
    _, ids, db = seeded
    everything = cli_json("links", "list", "--email", EMAIL, *db)
    assert {link["id"] for link in everything["data"]} == set(ids.values())
    assert everything["pagination"] == {"page": 1, "limit": 20, "total": 3, "pages": 1}
    for source, key in (("API", "api"), ("DASHBOARD", "dashboard"), ("MCP", "mcp")):
        found = cli_json("links", "list", "--email", EMAIL, "--source", source, *db)["data"]
        assert [link["id"] for link in found] == [ids[key]] and found[0]["source"] == source
    assert cli_json("links", "list", "--email", EMAIL, "--source", "BIO", *db)["data"] == []
    youtube = cli_json("links", "list", "--email", EMAIL, "--platform", "YOUTUBE", *db)["data"]
    assert [link["id"] for link in youtube] == [ids["api"]]
    assert [link["id"] for link in cli_json("links", "list", "--email", EMAIL, "--search", "dash", *db)["data"]] == [
        ids["dashboard"]
    ]
    by_code = cli_json("links", "list", "--email", EMAIL, "--short-code", "from-mcp", *db)["data"]
    assert [link["id"] for link in by_code] == [ids["mcp"]]
    assert cli_json("links", "list", "--email", EMAIL, "--inactive", *db)["data"] == []
    assert len(cli_json("links", "list", "--email", EMAIL, "--active", *db)["data"]) == 3
    paged = cli_json("links", "list", "--email", EMAIL, "--limit", "2", "--page", "2", *db)
    assert len(paged["data"]) == 1 and paged["pagination"]["pages"] == 2
    assert cli_json("links", "list", "--email", EMAIL, "--limit", "500", *db, code=1)["error"]["code"] == (
        "VALIDATION_ERROR"
    )
    assert cli_json("links", "list", "--email", "nobody@example.com", *db, code=2)["error"]["code"] == "NOT_FOUND"
    # A usage error is exit code 1 (argparse's own would be 2, which means "not found" here).
    usage = run_cli("links", "list", "--source", "FAX", *db, check=False)
    assert usage.returncode == 1 and "invalid choice" in usage.stderr and usage.stdout == ""


def test_links_show_and_delete(seeded, conn):
    _, ids, db = seeded
    shown = cli_json("links", "show", ids["api"], *db)
    # The short URL on the configured short host (the default one here).
    assert shown["id"] == ids["api"] and shown["shortUrl"] == "http://127.0.0.1:8000/l/from-api"
    assert "originalUrl" in run_cli("links", "show", ids["api"], *db).stdout
    # Not on a terminal and no --yes: refused, nothing deleted.
    refused = run_cli("links", "delete", ids["api"], *db, check=False)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 3
    assert cli_json("links", "delete", ids["api"], "--yes", *db) == {
        "deleted": ids["api"],
        "shortUrl": "http://127.0.0.1:8000/l/from-api",
    }
    assert cli_json("links", "show", ids["api"], *db, code=2)["error"]["code"] == "NOT_FOUND"
    assert cli_json("links", "delete", ids["api"], "--yes", *db, code=2)["error"]["code"] == "NOT_FOUND"


def test_delete_asks_on_a_terminal(seeded, conn):
    _, ids, db = seeded
    code, output = on_terminal("links", "delete", ids["mcp"], *db, answer=b"n\n")
    assert code == 1 and "[y/N]" in output and "not deleted" in output
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 3
    code, output = on_terminal("links", "delete", ids["mcp"], *db, answer=b"y\n")
    assert code == 0 and f"deleted {ids['mcp']}" in output
    assert conn.execute("SELECT count(*) FROM links").fetchone()[0] == 2


@pytest.mark.slow
def test_demo_seed_shows_a_progress_bar_on_a_terminal_and_none_in_json(db_path):
    db = ["--db", str(db_path)]
    # tqdm redraws at most every 0.1 s, and a fast machine seeds 30,000 clicks in less:
    # tqdm's own setting (TQDM_MININTERVAL) makes it redraw on every batch.
    code, output = on_terminal(
        "demo", "seed", "--email", EMAIL, "--links", "3", "--clicks", "30000", *db, env={"TQDM_MININTERVAL": "0"}
    )
    assert code == 0 and "seeded 3 links and 30000 clicks" in output
    # tqdm's bar: a percentage, the count, the rate and the time left.
    assert re.search(r"demo seed:\s+\d+%\|.*\| [\d.]+k?/30\.0k \[\d\d:\d\d<\d\d:\d\d, +[\d.]+k? clicks/s\]", output)
    result = run_cli("demo", "seed", "--email", EMAIL, "--links", "2", "--clicks", "500", "--json", *db)
    assert json.loads(result.stdout) == {
        "links": 2,
        "clicks": 500,
        "bots": json.loads(result.stdout)["bots"],
        "interrupted": False,
        "email": EMAIL,
        "days": 30,
    }
    assert "%|" not in result.stderr  # not a terminal: no bar


def test_progress_writes_plain_lines_when_not_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "PLAIN_INTERVAL_SECONDS", 0.0)
    stream = io.StringIO()
    with progress.progress("backup", 1000, "pages", stream) as reporter:
        reporter.advance(250)
        reporter.advance(250)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[-1].startswith("backup: 500/1,000 pages (50%), ")
    assert "pages/s" in lines[-1] and "left" in lines[-1]


def count_clicks(path) -> int:
    with closing(sqlite3.connect(path)) as db:
        try:
            return db.execute("SELECT count(*) FROM clicks").fetchone()[0]
        except sqlite3.OperationalError:  # the command has not migrated the new file yet
            return 0


@pytest.mark.slow
def test_ctrl_c_stops_demo_seed_between_batches_keeping_what_was_written(db_path, tmp_path):
    command = [sys.executable, "-m", "shortlink", "demo", "seed", "--email", EMAIL, "--links", "5"]
    process = subprocess.Popen(
        [*command, "--clicks", "5000000", "--db", str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(
        lambda: process.poll() is not None or (db_path.exists() and count_clicks(db_path) > 0),
        240,
        "the first batch to be committed",
    )
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 130 and stdout == ""
    summary = stderr.strip().splitlines()[-1]
    match = re.match(r"shortlink: interrupted: seeded 5 links and (\d+) clicks", summary)
    assert match, stderr
    stored = int(match.group(1))
    assert 0 < stored < 5_000_000 and count_clicks(db_path) == stored  # every counted click, no more


def test_an_interrupted_backup_leaves_nothing_at_the_destination(db_path, conn, tmp_path):
    conn.execute("CREATE TABLE filler (blob BLOB)")
    conn.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(4000),) for _ in range(3000)])
    destination = tmp_path / "copy.db"
    steps = []

    def stop_at_the_second_step(done, total):
        steps.append((done, total))
        if len(steps) == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        backup(conn, destination, stop_at_the_second_step)
    assert not destination.exists() and list(tmp_path.glob("*copy.db*")) == []
    assert steps[0][1] > 1024 and steps[0][0] == 1024  # in steps, counted in pages
    # Uninterrupted, the copy is complete and readable.
    done = cli_json("backup", str(destination), "--db", str(db_path))
    assert done["path"] == str(destination) and done["pages"] == steps[0][1]
    with sqlite3.connect(destination) as copy:
        assert copy.execute("SELECT count(*) FROM filler").fetchone()[0] == 3000
    assert list(tmp_path.glob(".copy.db.partial*")) == []


def test_shell_completion_knows_every_command():
    script = run_cli("completion", "bash").stdout
    for command in ("links", "accounts", "doctor", "backup", "--short-code", "DASHBOARD"):
        assert command in script
    assert run_cli("completion", "klingon", check=False).returncode == 1
