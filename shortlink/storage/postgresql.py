"""PostgreSQL: the same storage functions, on psycopg 3 connections from a pool.

A `[storage] url` of `postgresql://user:password@host:port/database` selects it. The
storage functions are shared with SQLite: they take a connection and call
`conn.execute(sql, params)` with `?` placeholders and read rows by name or position.
`PostgresConnection` gives a psycopg connection exactly that much of sqlite3's
interface (`base.Connection`; the statement text is translated once and cached); the few
statements that differ between the dialects ask `base.on_postgres(conn)`. The SQLite path
has no layer of this kind: its functions call sqlite3 directly. Migrations: `schema`.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any, TypeVar
from urllib.parse import urlsplit

import psycopg
from psycopg import postgres
from psycopg.adapt import Dumper
from psycopg.conninfo import make_conninfo
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from shortlink.storage.base import READER_THREADS, DatabaseUnavailable
from shortlink.storage.schema import migrate_postgresql

T = TypeVar("T")
# Connections a server process holds at most: the writer, the readers, the point reads
# of the event loop, and one to spare for the external-change watcher.
POOL_SIZE = READER_THREADS + 3
CONNECT_TIMEOUT_SECONDS = 10


def describe(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    where = parts.hostname or "localhost"
    if parts.port:
        where += f":{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return f"postgresql://{user}{where}{parts.path}"


class Row(tuple):
    """A result row read like an sqlite3.Row: by position, by column name, or unpacked."""

    __slots__ = ()
    _index: dict[str, int] = {}

    def __getitem__(self, key):
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


_row_classes: dict[tuple[str, ...], type[Row]] = {}


def _row_factory(cursor: psycopg.Cursor) -> Callable[[Sequence[Any]], Row]:
    names = tuple(column.name for column in cursor.description or ())
    row_class = _row_classes.get(names)
    if row_class is None:
        index = {name: position for position, name in enumerate(names)}
        row_class = _row_classes[names] = type("Row", (Row,), {"__slots__": (), "_index": index})
    return row_class


class _BoolAsInteger(Dumper):
    """True and False as 1 and 0, as sqlite3 stores them: flags are integer columns in both."""

    oid = postgres.types["int4"].oid

    def dump(self, obj: bool) -> bytes:
        return b"1" if obj else b"0"


_statements: dict[tuple[str, bool], str] = {}
_NAMED = re.compile(r"(?<!:):([A-Za-z_][A-Za-z0-9_]*)")


def _translated(sql: str, named: bool = False) -> str:
    """sqlite3's placeholders as psycopg's: `?` as `%s`, or with a dict of parameters `:name`
    as `%(name)s` (a literal `%` doubled; PostgreSQL's `::` casts left alone)."""
    text = _statements.get((sql, named))
    if text is None:
        text = sql.replace("%", "%%")
        text = _NAMED.sub(r"%(\1)s", text) if named else text.replace("?", "%s")
        _statements[(sql, named)] = text
    return text


def _without_nul(params: Sequence[Any]) -> Sequence[Any]:
    """PostgreSQL text cannot hold a NUL, which a visitor can put in a path (/l/abc%00) or
    an API query: it is sent as U+FFFD instead. No code, id or key contains either, so such a
    lookup finds nothing, as on SQLite; writes never carry one (validation refuses control
    characters; click batches are cleaned in storage.clicks)."""
    if not any(type(param) is str and "\x00" in param for param in params):
        return params
    return [param.replace("\x00", "\ufffd") if type(param) is str else param for param in params]


class PostgresConnection:
    """A psycopg connection answering the part of sqlite3.Connection the storage
    functions use. Autocommit, like the SQLite connections: `storage.transaction`
    opens explicit transactions (psycopg's, with savepoints when nested)."""

    # DB-API exception classes as connection attributes, as sqlite3 has them.
    Error = psycopg.Error
    IntegrityError = psycopg.IntegrityError
    OperationalError = psycopg.OperationalError

    def __init__(self, raw: psycopg.Connection):
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> psycopg.Cursor:
        if isinstance(params, Mapping):
            return self.raw.execute(
                _translated(sql, named=True), dict(zip(params, _without_nul(list(params.values())), strict=True))
            )
        return self.raw.execute(_translated(sql), _without_nul(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> psycopg.Cursor:
        cursor = self.raw.cursor()
        cursor.executemany(_translated(sql), rows)
        return cursor

    def transaction(self) -> AbstractContextManager:
        return self.raw.transaction()

    def execute_script(self, sql: str) -> None:
        """Several statements in one go (a migration): sent as they are, with no parameters."""
        self.raw.execute(sql.encode())

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def close(self) -> None:
        self.raw.close()


def _configure(raw: psycopg.Connection) -> None:
    raw.row_factory = _row_factory
    raw.adapters.register_dumper(bool, _BoolAsInteger)


def _open(url: str, options: str = "") -> psycopg.Connection:
    """`options`: server settings for the session, as libpq's `options` ("-c name=value")."""
    conninfo = make_conninfo(url, options=options) if options else url
    try:
        raw = psycopg.connect(conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DatabaseUnavailable(f"[storage] url {describe(url)}: cannot connect: {reason}") from None
    _configure(raw)
    return raw


def connect(url: str) -> PostgresConnection:
    """One migrated connection (the CLI's, a test's)."""
    conn = PostgresConnection(_open(url))
    migrate_postgresql(conn)
    return conn


def connect_read_only(url: str) -> PostgresConnection:
    """One connection in a read-only session, not migrated (`shortlink doctor`'s: it writes nothing)."""
    return PostgresConnection(_open(url, "-c default_transaction_read_only=on"))


class PostgresDatabase:
    """The server's connections on PostgreSQL, with the interface of `storage.Database`.

    `write` runs on one writer thread (storage functions are units of work, never two
    interleaved, as on SQLite), `read` on a few reader threads, `read_now` on the calling
    thread; each takes a connection from one psycopg pool for the call. Several server
    processes write to the same database: what makes that safe lives in the statements
    (row locks of upserts, the daily-limit counter taken first, an advisory lock around
    click batches), not here.
    """

    dialect = "postgresql"
    errors: tuple[type[BaseException], ...] = (psycopg.Error, OSError)

    def __init__(self, url: str, readers: int = READER_THREADS):
        self.url = url
        self._pool: ConnectionPool | None = None
        self._opening = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-writer")
        self._readers = ThreadPoolExecutor(max_workers=readers, thread_name_prefix="pg-reader")

    def _connections(self) -> ConnectionPool:
        """Opened on first use, after migrating, so that an app that is built but never
        started holds nothing open."""
        if self._pool is not None:
            return self._pool
        with self._opening:  # the writer and the readers may ask first at the same time
            if self._pool is None:
                connect(self.url).close()
                self._pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=POOL_SIZE,
                    kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_SECONDS},
                    configure=_configure,
                    name="shortlink",
                    open=True,
                )
            return self._pool

    def _run(self, fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
        with self._connections().connection() as raw:
            return fn(PostgresConnection(raw), *args, **kwargs)

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._run, fn, args, kwargs)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._readers, self._run, fn, args, kwargs)

    def read_now(self, fn: Callable[..., T], *args: Any) -> T:
        return self._run(fn, args, {})

    def close(self) -> None:
        self._readers.shutdown(wait=True)
        self._executor.shutdown(wait=True)
        if self._pool is not None:
            self._pool.close()
            self._pool = None
