import asyncio
import multiprocessing
import sqlite3
import threading
from datetime import UTC, datetime

import pytest
import sqlite_utils

from shortlink.analytics import report
from shortlink.analytics.ranges import Range, to_ms
from shortlink.storage import connect, transaction
from shortlink.storage.schema import pending_migrations, recorded_migrations, statements
from shortlink.storage.schema import sqlite_migrations as migrations
from shortlink.storage.sqlite import SqliteDatabase
from tests.support.old_files import sqlite_file_as_of


def test_migrations_create_every_table_on_an_empty_file(db_path):
    conn = connect(db_path)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert version == migrations()[-1][0]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    conn.close()
    database = sqlite_utils.Database(db_path)
    tables = set(database.table_names())
    assert {
        "accounts",
        "subscriptions",
        "api_keys",
        "links",
        "click_rows",
        "user_agents",
        "domains",
        "pending_fetches",
    } <= tables
    assert "clicks" in database.view_names()  # raw clicks with their user agent's labels
    assert "visitor_keys" not in tables  # the keys live in memory only


def test_migrating_an_existing_file_keeps_its_data_and_applies_only_new_migrations(db_path):
    # A file as a version with only the first migration left it, with a link and a click.
    raw = sqlite3.connect(db_path, isolation_level=None)
    for statement in statements(migrations()[0][2]):
        raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    raw.execute("INSERT INTO accounts (public_id, email, created_at) VALUES ('usr_x', 'a@b.c', 'now')")
    raw.execute(
        "INSERT INTO links (public_id, account_id, short_code, original_url, platform, title,"
        " created_at, updated_at) VALUES ('lnk_x', 1, 'old', 'https://example.com/kept', 'OTHER',"
        " 'Kept title', 'now', 'now')"
    )
    raw.execute(
        "INSERT INTO clicks (link_id, account_id, ts, device, browser, os, country, referrer, campaign,"
        " user_agent, visitor_hash, is_bot) VALUES (1, 1, 5, 'mobile', 'Mobile Safari', 'iOS', 'DE', 'Direct',"
        " 'None', 'Mozilla/5.0 (iPhone)', '00000000000000ff0123456789abcdef', 0)"
    )
    raw.close()
    conn = connect(db_path)
    assert conn.execute("SELECT email FROM accounts").fetchone()[0] == "a@b.c"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == migrations()[-1][0]
    # Later migrations fill what they add from the data already there (the search index).
    assert conn.execute("SELECT rowid FROM link_search WHERE link_search MATCH '\"kept tit\"'").fetchone()[0] == 1
    # ... and the link ids already used (never to be handed out again).
    assert conn.execute("SELECT last_id FROM link_id_high_water").fetchone()[0] == 1
    # Raw clicks keep every field, with the user agent stored once and the hash as 64 bits.
    click = conn.execute("SELECT device, browser, os, country, user_agent, visitor, ts FROM clicks").fetchone()
    assert tuple(click) == ("mobile", "Mobile Safari", "iOS", "DE", "Mozilla/5.0 (iPhone)", 255, 5)
    conn.close()
    # Connecting again applies nothing and changes nothing.
    conn = connect(db_path)
    assert conn.execute("SELECT count(*) FROM accounts").fetchone()[0] == 1
    conn.close()


async def test_database_runs_functions_on_its_own_connection(db_path):
    db = SqliteDatabase(db_path)
    try:

        def insert_and_count(conn, email):
            conn.execute(
                "INSERT INTO accounts (public_id, email, created_at) VALUES (?, ?, 'now')", (f"usr_{email}", email)
            )
            return conn.execute("SELECT count(*) FROM accounts").fetchone()[0]

        assert await db.write(insert_and_count, "a@b.c") == 1
        assert await db.write(insert_and_count, "d@e.f") == 2
    finally:
        db.close()


async def test_commits_checkpoint_the_wal_unless_the_owner_takes_checkpoints_over(tmp_path):
    # Another open connection keeps SQLite from checkpointing when the Database closes,
    # so the WAL's size shows whether commits checkpointed along the way.
    sizes = {}
    for take_over in (False, True):
        path = tmp_path / f"take-over-{take_over}.db"
        watcher = connect(path)
        db = SqliteDatabase(path)
        if take_over:
            db.take_over_checkpoints()
        for number in range(3000):  # ~12 MiB written, one commit each
            await db.write(
                lambda conn, n=number: conn.execute(
                    "INSERT INTO settings (name, value) VALUES (?, ?)", (f"s{n}", "x" * 4000)
                )
            )
        db.close()
        sizes[take_over] = (tmp_path / f"take-over-{take_over}.db-wal").stat().st_size
        watcher.close()
    assert sizes[False] < 8 * 1024 * 1024 < sizes[True]


async def test_readers_never_wait_for_the_writer(db_path):
    """A write transaction held open on the writer (a long click batch) blocks neither the
    reader pool nor point reads, and they see the last committed state."""
    db = SqliteDatabase(db_path)
    started, release = threading.Event(), threading.Event()

    def long_write(conn):
        with transaction(conn):
            conn.execute("INSERT INTO accounts (public_id, email, created_at) VALUES ('usr_w', 'w@x.y', 'now')")
            started.set()
            release.wait(10)

    def count(conn):
        return conn.execute("SELECT count(*) FROM accounts").fetchone()[0]

    try:
        writing = asyncio.ensure_future(db.write(long_write))
        await asyncio.to_thread(started.wait, 10)
        assert await asyncio.wait_for(db.read(count), 2) == 0  # the uncommitted row is not seen
        assert db.read_now(count) == 0
        release.set()
        await writing
        assert await db.read(count) == 1 and db.read_now(count) == 1
    finally:
        release.set()
        db.close()


async def test_reader_connections_cannot_write(db_path):
    db = SqliteDatabase(db_path)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            await db.read(lambda conn: conn.execute("DELETE FROM accounts"))
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db.read_now(lambda conn: conn.execute("DELETE FROM accounts"))
    finally:
        db.close()


def test_upgrading_removes_the_stored_visitor_keys_from_every_byte_of_the_file(db_path):
    # A file as the versions before migration 5 left it: the last days' keys stored.
    raw = sqlite3.connect(db_path, isolation_level=None)
    raw.execute("PRAGMA journal_mode = wal")
    for number, _, sql in migrations():
        if number < 5:
            for statement in statements(sql):
                raw.execute(statement)
    raw.execute("PRAGMA user_version = 4")
    key = bytes.fromhex("5ec7e7" * 10 + "0123")
    for day in ("2026-11-21", "2026-11-22", "2026-11-23"):
        raw.execute("INSERT INTO visitor_keys (day, key) VALUES (?, ?)", (day, key))
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    assert key in db_path.read_bytes()
    connect(db_path).close()
    data = b"".join(path.read_bytes() for path in db_path.parent.glob(db_path.name + "*"))
    assert key not in data


def test_upgrading_drops_the_rows_of_unknown_labels_and_every_breakdown_stays(db_path):
    # A file as the versions before migration 9 left it: a row for every label, unknown ones too.
    sqlite_file_as_of(db_path, 8)
    raw = sqlite3.connect(db_path, isolation_level=None)
    raw.execute("INSERT INTO accounts (public_id, email, created_at) VALUES ('usr_x', 'a@b.c', 'now')")
    raw.execute(
        "INSERT INTO links (public_id, account_id, short_code, original_url, platform, created_at, updated_at)"
        " VALUES ('lnk_x', 1, 'old', 'https://example.com/', 'OTHER', '2026-11-01T00:00:00Z', 'now')"
    )
    raw.execute("INSERT INTO link_days VALUES (1, '2026-11-20', 1, 3, 2)")
    raw.execute("INSERT INTO account_days VALUES (1, '2026-11-20', 3, 2)")
    labels = [(1, "mobile", 2), (1, "other", 1), (2, "Mobile Safari", 3), (3, "iOS", 3)]
    labels += [(4, "DE", 1), (4, "Unknown", 2), (5, "Direct", 3), (6, "None", 2), (6, "news", 1)]
    for dimension, value, clicks in labels:
        raw.execute("INSERT INTO link_dimensions VALUES (1, '2026-11-20', ?, ?, 1, ?)", (dimension, value, clicks))
        raw.execute("INSERT INTO account_dimensions VALUES (1, '2026-11-20', ?, ?, ?)", (dimension, value, clicks))
    raw.close()
    conn = connect(db_path)
    for table in ("link_dimensions", "account_dimensions"):
        values = {row[0] for row in conn.execute(f"SELECT value FROM {table}")}
        assert values == {"mobile", "Mobile Safari", "iOS", "DE", "news"}, table
    span = Range(to_ms(datetime(2026, 11, 20, tzinfo=UTC)), to_ms(datetime(2026, 11, 21, tzinfo=UTC)) - 1)
    now = datetime(2026, 11, 24, tzinfo=UTC)
    for answer in (report.link_analytics(conn, 1, "lnk_x", span, now), report.account_analytics(conn, 1, span, now)):
        assert answer.clicks_in_period == 3
        assert [(item.device, item.clicks) for item in answer.device_breakdown] == [("mobile", 2), ("other", 1)]
        assert [(item.country, item.clicks) for item in answer.country_breakdown] == [("Unknown", 2), ("DE", 1)]
        assert [(item.referrer, item.clicks) for item in answer.referrer_breakdown] == [("Direct", 3)]
        assert [(item.source, item.clicks) for item in answer.campaign_breakdown] == [("None", 2), ("news", 1)]
        assert [(item.os, item.clicks) for item in answer.os_breakdown] == [("iOS", 3)]
    # Deleting the link still takes its clicks out of the account's figures, stored or not.
    with transaction(conn):
        conn.execute("DELETE FROM links")
    assert conn.execute("SELECT count(*) FROM account_dimensions").fetchone()[0] == 0
    assert conn.execute("SELECT clicks FROM account_days").fetchone()[0] == 0


async def test_the_wal_starts_over_while_the_writer_keeps_committing(tmp_path):
    # Commits land while checkpoints run, as click batches do under load: passive checkpoints
    # alone never finish copying the WAL, so it would only ever grow.
    path = tmp_path / "busy.db"
    db = SqliteDatabase(path)
    db.take_over_checkpoints()
    page = "x" * 4000
    try:
        wal_sizes = []
        for round_number in range(20):
            writes = [
                db.write(
                    lambda conn, n=n: conn.execute(
                        "INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", (f"s{n % 500}", page)
                    )
                )
                for n in range(round_number * 200, round_number * 200 + 200)
            ]
            await asyncio.gather(db.checkpoint(restart_after_bytes=256 * 1024), *writes)
            wal_sizes.append((tmp_path / "busy.db-wal").stat().st_size)
        # 20 rounds wrote ~90 MiB of pages: without starting over, the WAL holds them all.
        assert max(wal_sizes) < 24 * 1024 * 1024
    finally:
        db.close()


def _open_at_the_barrier(path: str, barrier, errors) -> None:
    barrier.wait()
    try:
        connect(path).close()
    except Exception as exc:  # DatabaseUnavailable, naming the file and SQLite's reason
        errors.put(str(exc))


@pytest.mark.slow
def test_processes_opening_a_new_file_at_the_same_moment_all_get_it(tmp_path):
    """Several processes starting together on a file that does not exist yet (the first start
    of a multi-process setup): SQLite refuses all but one at once when they switch it to WAL
    mode, and each must try again rather than fail to start. Without the retry this failed
    within the first few rounds."""
    context = multiprocessing.get_context("fork")
    errors = context.Queue()
    for round_number in range(30):
        barrier = context.Barrier(6)
        path = str(tmp_path / f"new-{round_number}.db")
        processes = [context.Process(target=_open_at_the_barrier, args=(path, barrier, errors)) for _ in range(6)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
            assert process.exitcode == 0
        assert errors.empty(), errors.get()
        conn = connect(path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()


def test_a_migration_numbered_below_the_version_is_still_applied():
    # Branches claim numbers and merge in any order: 0010 may arrive after 0011 was applied.
    assert pending_migrations([9, 10, 11], 11, {9, 11}) == [10]
    assert pending_migrations([9, 10, 11], 9, {9}) == [10, 11]
    assert pending_migrations([9, 10, 11], 11, {9, 10, 11}) == []
    # A database from before schema_migrations was migrated strictly in order.
    assert recorded_migrations([8, 9, 11], 9, set()) == {8, 9}
    assert recorded_migrations([8, 9, 11], 11, {8, 11}) == {8, 11}


@pytest.mark.both_backends
def test_a_late_migration_runs_once_on_a_database_past_its_number(storage, conn):
    # As if 0011 had landed after a later number: the version is past it, the record is not.
    with transaction(conn):
        conn.execute("DROP TABLE link_tags")
        conn.execute("DELETE FROM schema_migrations WHERE number = 11")
    connect(storage).close()  # applies it
    again = connect(storage)  # and this finds nothing left to do
    try:
        assert again.execute("SELECT count(*) FROM link_tags").fetchone()[0] == 0  # created again
        assert 11 in {row[0] for row in again.execute("SELECT number FROM schema_migrations")}
    finally:
        again.close()


def test_a_file_from_before_the_migration_record_gets_one_and_only_new_migrations(db_path):
    sqlite_file_as_of(db_path, 9)
    conn = connect(db_path)
    recorded = [row[0] for row in conn.execute("SELECT number FROM schema_migrations ORDER BY number")]
    assert recorded == [number for number, _, _ in migrations()]
    assert conn.execute("SELECT count(*) FROM link_tags").fetchone()[0] == 0
    conn.close()
