"""Schema migrations: the numbered SQL files of both backends and the runner that applies them.

SQLite's are `migrations/NNNN_*.sql`, PostgreSQL's `migrations/postgresql/NNNN_*.sql`: the first
PostgreSQL one (0006) reaches the schema SQLite has after its 0001-0006, and each later SQLite
migration has a PostgreSQL twin with the same number. Each runs in its own transaction, so
processes starting together apply it exactly once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from functools import cache
from importlib import resources
from importlib.abc import Traversable
from typing import Any, Protocol

from shortlink.storage.base import transaction

# pg_advisory_lock key of the migrations: any constant shared by every process.
MIGRATION_LOCK = 0x5EED_0001


class ScriptConnection(Protocol):
    """A PostgreSQL connection as the runner uses it: statements, whole scripts, transactions."""

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def execute_script(self, sql: str) -> None: ...

    def transaction(self) -> AbstractContextManager: ...


def _numbered(folder: Traversable) -> tuple[tuple[int, str, str], ...]:
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            found.append((int(entry.name.split("_", 1)[0]), entry.name, entry.read_text(encoding="utf-8")))
    return tuple(sorted(found))


# The shipped files are read once a process: every connection checks for pending migrations.
@cache
def sqlite_migrations() -> tuple[tuple[int, str, str], ...]:
    """(number, file name, SQL) of SQLite's migrations, in order."""
    return _numbered(resources.files("shortlink.storage.migrations"))


@cache
def postgresql_migrations() -> tuple[tuple[int, str, str], ...]:
    """(number, file name, SQL) of PostgreSQL's migrations, in order."""
    return _numbered(resources.files("shortlink.storage.migrations") / "postgresql")


def pending_migrations(shipped: list[int], version: int, applied: set[int]) -> list[int]:
    """The shipped migration numbers still to apply, in order, for both backends.

    `version` is the highest number applied (PRAGMA user_version, PostgreSQL's
    schema_version), `applied` the numbers recorded one by one in schema_migrations. Numbers
    are claimed by branches that merge in any order: a migration numbered below one already
    applied (0010 arriving after 0011) is still applied, as it is not in `applied`."""
    return [number for number in shipped if number > version or number not in applied]


def recorded_migrations(shipped: list[int], version: int, found: set[int]) -> set[int]:
    """What schema_migrations should hold: `found` in it, or, when it is new and empty (a
    database from before it existed, migrated strictly in order), every shipped number up to
    `version`."""
    return found or {number for number in shipped if number <= version}


def migrate_sqlite(conn: sqlite3.Connection) -> int:
    """Apply the migrations the file has not seen yet; returns the schema version.

    PRAGMA user_version records the highest applied migration and schema_migrations each
    one (see `pending_migrations`). Each migration runs in its own write transaction, so a
    server and a CLI starting together apply it exactly once.
    """
    shipped = sqlite_migrations()
    numbers = [number for number, _name, _sql in shipped]
    # Checked before taking the write lock: a file already migrated is only read.
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'schema_migrations'").fetchone() is None:
        with transaction(conn):
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY)")
            found = {row[0] for row in conn.execute("SELECT number FROM schema_migrations")}
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for number in sorted(recorded_migrations(numbers, version, found) - found):
                conn.execute("INSERT INTO schema_migrations VALUES (?)", (number,))
    for number, _name, sql in shipped:
        if not _sqlite_pending(conn, numbers, number):
            continue
        with transaction(conn):
            # Re-read under the write lock: another process may have just migrated.
            if not _sqlite_pending(conn, numbers, number):
                continue
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute("INSERT OR IGNORE INTO schema_migrations VALUES (?)", (number,))
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute(f"PRAGMA user_version = {max(version, number)}")
    return conn.execute("PRAGMA user_version").fetchone()[0]


def _sqlite_pending(conn: sqlite3.Connection, numbers: list[int], number: int) -> bool:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    applied = {row[0] for row in conn.execute("SELECT number FROM schema_migrations")}
    return number in pending_migrations(numbers, version, applied)


def statements(sql: str) -> Iterator[str]:
    # executescript would COMMIT our transaction; complete_statement splits safely
    # (triggers contain semicolons).
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip() and not buffer.strip().startswith("--"):
        raise ValueError(f"incomplete SQL statement in migration: {buffer[:80]!r}")


def value(conn: ScriptConnection, sql: str, params: Sequence[Any] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    assert row is not None, "a one-row query answered no row"
    return row[0]


def postgresql_version(conn: ScriptConnection) -> int:
    if not value(conn, "SELECT to_regclass('schema_version') IS NOT NULL"):
        return 0
    return value(conn, "SELECT version FROM schema_version")


def migrate_postgresql(conn: ScriptConnection) -> int:
    """Apply the migrations the database has not seen yet; returns the schema version.

    A session advisory lock makes processes starting together take turns: the first applies
    each migration (in its own transaction, with the version it reaches), the others then find
    nothing left to do. schema_migrations records each applied number, so that one numbered
    below the version still runs (`pending_migrations`).
    """
    conn.execute("SELECT pg_advisory_lock(?)", (MIGRATION_LOCK,))
    try:
        shipped = postgresql_migrations()
        numbers = [number for number, _name, _sql in shipped]
        with conn.transaction():
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (number integer PRIMARY KEY)")
            found = {row[0] for row in conn.execute("SELECT number FROM schema_migrations")}
            for number in sorted(recorded_migrations(numbers, postgresql_version(conn), found) - found):
                conn.execute("INSERT INTO schema_migrations VALUES (?)", (number,))
        for number, _name, sql in shipped:
            applied = {row[0] for row in conn.execute("SELECT number FROM schema_migrations")}
            if number not in pending_migrations(numbers, postgresql_version(conn), applied):
                continue
            with conn.transaction():
                conn.execute_script(sql)
                conn.execute("INSERT INTO schema_migrations VALUES (?) ON CONFLICT DO NOTHING", (number,))
                conn.execute("UPDATE schema_version SET version = greatest(version, ?)", (number,))
        return postgresql_version(conn)
    finally:
        conn.execute("SELECT pg_advisory_unlock(?)", (MIGRATION_LOCK,))
