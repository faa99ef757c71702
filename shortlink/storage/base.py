"""What both backends are: the shape of a connection and of the server's database, the one
error for a database that cannot be opened, and transactions.

Storage functions take a `Connection` first and call `conn.execute(sql, params)` with `?`
placeholders, reading rows by name or position: an `sqlite3.Connection` is one as it is, and
`postgresql.PostgresConnection` answers the same calls. The server runs them through a
`Database` (`sqlite.SqliteDatabase` or `postgresql.PostgresDatabase`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol, TypeVar, runtime_checkable

from shortlink.config import ConfigError

T = TypeVar("T")

# Reader threads of a server process: lists, analytics and the like, beside the writer.
READER_THREADS = 3


class DatabaseUnavailable(ConfigError):
    """The configured database cannot be opened or reached: a file that is a directory or not
    writable, a PostgreSQL server that refuses us... A configuration problem, told in one line."""


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Row(Protocol):
    """A result row: by position, by column name, or unpacked."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> list[str]: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...


class Connection(Protocol):
    """The part of sqlite3.Connection that storage functions use."""

    @property
    def in_transaction(self) -> bool: ...

    # DB-API exception classes, as sqlite3 connections carry them.
    @property
    def IntegrityError(self) -> type[Exception]: ...

    def execute(self, sql: str, parameters: Any = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Any, /) -> Any: ...

    def close(self) -> None: ...


@runtime_checkable
class OwnTransactions(Protocol):
    """A connection that opens transactions itself (psycopg's: BEGIN, or a savepoint inside one)."""

    def transaction(self) -> AbstractContextManager: ...


class Database(Protocol):
    """The server's connections: `write` runs a storage function on the one writer thread,
    `read` on a reader thread, `read_now` at once on the calling thread (point reads)."""

    dialect: str
    errors: tuple[type[BaseException], ...]

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T: ...

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T: ...

    def read_now(self, fn: Callable[..., T], *args: Any) -> T: ...

    def close(self) -> None: ...


def on_postgres(conn: Connection) -> bool:
    """Whether a storage function was handed a PostgreSQL connection: the few statements
    that differ between the two dialects ask this; every other one is shared."""
    return not isinstance(conn, sqlite3.Connection)


@contextmanager
def transaction(conn: Connection) -> Iterator[Connection]:
    """A write transaction; inside another one, a savepoint (bulk seeding wraps many
    single-link inserts in one commit).

    On SQLite it takes the write lock up front (BEGIN IMMEDIATE), so the busy timeout applies
    instead of a deadlock between two connections upgrading their read locks."""
    if isinstance(conn, OwnTransactions):
        with conn.transaction():
            yield conn
        return
    if conn.in_transaction:
        conn.execute("SAVEPOINT nested")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK TO nested")
            conn.execute("RELEASE nested")
            raise
        conn.execute("RELEASE nested")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
