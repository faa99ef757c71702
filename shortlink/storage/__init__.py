"""The storage layer: every SQL statement of the project lives in this package.

Each storage function is a plain synchronous function taking a `Connection` first (`base`).
The CLI and tests call them directly; the server runs them through a `Database`'s `write`,
`read` or `read_now`, one whole function at a time on one connection, so a function is an
atomic unit without any locking.

The backend is chosen by the location: an SQLite path or `sqlite:///` URL (`sqlite`), or a
`postgresql://` URL (`postgresql`, imported only then).
"""

from __future__ import annotations

from pathlib import Path

from shortlink.storage.base import Connection, Database, DatabaseUnavailable, Row, transaction
from shortlink.storage.sqlite import SqliteDatabase, connect_sqlite

__all__ = [
    "Connection",
    "Database",
    "DatabaseUnavailable",
    "Row",
    "connect",
    "is_postgresql",
    "open_database",
    "sqlite_path",
    "transaction",
]


def is_postgresql(location: str | Path) -> bool:
    return str(location).startswith(("postgresql://", "postgres://"))


def sqlite_path(location: str | Path) -> str | Path:
    """The file of a path or of an sqlite:/// URL (three slashes and a relative path, or
    four and an absolute one, as SQLAlchemy writes them)."""
    text = str(location)
    return text.removeprefix("sqlite:///") if text.startswith("sqlite:///") else location


def connect(location: str | Path) -> Connection:
    """Open (creating if needed) and migrate the database at `location`: one connection, the
    CLI's or a test's."""
    if is_postgresql(location):
        from shortlink.storage import postgresql

        return postgresql.connect(str(location))
    return connect_sqlite(sqlite_path(location))


def open_database(location: str | Path) -> Database:
    """The server's connections to the database at `location` (see `connect`)."""
    if is_postgresql(location):
        from shortlink.storage import postgresql

        return postgresql.PostgresDatabase(str(location))
    return SqliteDatabase(sqlite_path(location))
