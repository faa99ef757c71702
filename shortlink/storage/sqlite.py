"""SQLite, the default backend: opening and migrating the file, the server's writer and reader
connections, WAL checkpoints, and online backups."""

from __future__ import annotations

import _sqlite3
import asyncio
import ctypes
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from shortlink.storage.base import READER_THREADS, DatabaseUnavailable
from shortlink.storage.schema import migrate_sqlite

T = TypeVar("T")

BUSY_TIMEOUT_MS = 10_000
# A point read runs on the event loop: if the file is busy beyond this (a crashed
# process's WAL being recovered), it fails rather than stall every request.
POINT_READ_BUSY_MS = 200
# Between two tries to switch a new file to WAL mode while another process holds it.
WAL_SWITCH_RETRY_SECONDS = 0.02
# Page cache of the writer. Rollup upserts touch pages all over their tables, more than
# any cache holds on a big catalogue; the operating system's file cache serves those, and a
# larger cache here only held memory (docs/performance.md).
CACHE_KIB = 16 * 1024
# Page cache of each read-only connection. A reader's cache is emptied whenever another
# connection has committed (every click batch, under load), so a large one only holds
# memory; the operating system's file cache keeps the pages warm between queries.
READER_CACHE_KIB = 8 * 1024
# The point reader (read_now) looks up one row at a time: the index's upper pages and a
# leaf or two are all it keeps warm.
POINT_READER_CACHE_KIB = 2 * 1024


# A WAL past this size is started over from the beginning (checkpoint_wal), and a WAL
# file that was started over is cut back to it (journal_size_limit).
WAL_RESTART_BYTES = 64 * 2**20
# How long a restarting checkpoint waits for the writer and readers before trying later.
RESTART_WAIT_MS = 250


# sqlite3.h: the sqlite3_config() option that switches memory statistics on or off.
SQLITE_CONFIG_MEMSTATUS = 9


def stop_memory_statistics() -> None:
    """Switch off SQLite's memory statistics for the whole process. Call it before the
    process opens its first connection: SQLite takes the setting only while it is shut down.

    With statistics on (SQLite's default), every allocation by any connection takes one
    process-wide mutex, and a build without lookaside memory (Debian's) allocates for
    nearly every value a statement handles. The click writer and the event loop's point
    reads then take turns at that mutex thousands of times a second, and the loop, put to
    sleep on it, waits for a core again (docs/performance.md). Nothing here reads them.

    Python's sqlite3 module has no call for sqlite3_config(), so it is reached through the
    module's own binary, whose symbols include the SQLite library it was linked with."""
    try:
        library = ctypes.CDLL(_sqlite3.__file__)
        shutdown, configure, initialize = library.sqlite3_shutdown, library.sqlite3_config, library.sqlite3_initialize
    except (OSError, AttributeError):  # SQLite not reachable this way: statistics stay on
        return
    if shutdown() == 0:
        configure(SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0))
    initialize()


def connect_sqlite(path: str | Path) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database file.

    Autocommit mode: writes that must be atomic use `transaction()`, which takes
    the write lock up front (BEGIN IMMEDIATE) so the busy timeout applies instead
    of a deadlock between two connections upgrading their read locks; or they are
    one statement (a click batch), which takes it up front as well.
    """
    where = f"[storage] path (or --db) {str(path)!r}"
    if Path(path).is_dir():
        raise DatabaseUnavailable(f"{where}: is a directory; name a file such as data/shortlink.db")
    try:
        conn = _open(path)
    except (OSError, sqlite3.Error) as exc:
        raise DatabaseUnavailable(f"{where}: cannot open the database: {exc}") from None
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"PRAGMA journal_size_limit = {WAL_RESTART_BYTES}")
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    conn.execute("PRAGMA foreign_keys = ON")
    # Case-insensitive substring search for every letter, not only ASCII (see storage.links).
    conn.create_function("folded_contains", 4, _folded_contains, deterministic=True)
    conn.create_function("hex64", 1, _hex64, deterministic=True)
    migrate_sqlite(conn)
    return conn


def connect_read_only(path: str | Path) -> sqlite3.Connection:
    """The file as it is, for looking only: nothing created, migrated or written (doctor)."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def integrity_and_version(path: str | Path) -> tuple[list[str], int]:
    """The file's `PRAGMA integrity_check` lines (["ok"] when sound) and its schema version,
    read only."""
    conn = connect_read_only(path)
    try:
        integrity = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        return integrity, conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def connect_reader(path: str | Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """A read-only connection to a file `connect` has already opened and migrated."""
    conn = sqlite3.connect(
        f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA cache_size = -{READER_CACHE_KIB}")
    conn.create_function("folded_contains", 4, _folded_contains, deterministic=True)
    return conn


def _open(path: str | Path) -> sqlite3.Connection:
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        # The first statements are where SQLite finds out it cannot use the file.
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _enter_wal_mode(conn)
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def _enter_wal_mode(conn: sqlite3.Connection) -> None:
    """PRAGMA journal_mode = WAL, tried again for up to the busy timeout while the file is
    locked. Processes opening a new file at the same moment each read it, then want it to
    themselves to switch it to WAL: SQLite answers "locked" at once to all but one, without
    waiting, since waiting could deadlock. A moment later the file is in WAL mode."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(WAL_SWITCH_RETRY_SECONDS)


def _hex64(text: str) -> int:
    """The first 64 bits of a hex visitor hash as a signed integer (migration 0006)."""
    return int.from_bytes(bytes.fromhex(text[:16]), "big", signed=True)


def _folded_contains(needle: str, first: str | None, second: str | None, third: str | None) -> bool:
    """Whether one of three texts contains `needle` (already lower-cased), ignoring case.
    Lower-cased letter by letter, as the FTS5 trigram index folds case, so that short and
    long searches agree ("ß" is not "ss" in either). Three fixed arguments: it runs once
    per row scanned, and is twice as fast so."""
    return (
        (first is not None and needle in first.lower())
        or (second is not None and needle in second.lower())
        or (third is not None and needle in third.lower())
    )


def checkpoint_wal(conn: sqlite3.Connection, restart_after_bytes: int) -> None:
    """Copy committed WAL pages into the main file without blocking the writer (PASSIVE);
    when the WAL has grown past `restart_after_bytes`, also make the next write start it
    over from the beginning (RESTART).

    The WAL only starts over once a checkpoint has copied all of it, and a writer that
    commits while a passive checkpoint runs keeps that from ever happening: under
    sustained clicks the file and its index grew without end, and every read slowed
    down with them. RESTART holds the writer back while it finishes, so it waits only
    briefly for the click writer and readers, and is tried again next round if busy.
    """
    _busy, frames, _copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    if frames * conn.execute("PRAGMA page_size").fetchone()[0] > restart_after_bytes:
        conn.execute(f"PRAGMA busy_timeout = {RESTART_WAIT_MS}")
        try:
            conn.execute("PRAGMA wal_checkpoint(RESTART)")
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


class SqliteDatabase:
    """The server's connections: one writer, and readers that never wait for it.

    `await db.write(fn, *args)` runs `fn(conn, *args)` on the writer's own thread: one
    await per storage operation, however many statements it has, and never two
    operations interleaved inside each other's transactions. Click batches, link and
    key writes go there.

    `await db.read(fn, *args)` runs `fn` on one of a few reader threads, each with its
    own read-only connection. In WAL mode a reader sees the last committed state and
    neither waits for the writer nor makes it wait, so a long analytics query or a
    click batch never holds up a list, a key lookup or another report.

    `db.read_now(fn, *args)` runs a point lookup (a link by code, a key by hash) at
    once on the calling thread, on a read-only connection of its own: cheaper than any
    thread hop, for the one-row reads of the redirect path and the API guard.
    """

    dialect = "sqlite"
    errors: tuple[type[BaseException], ...] = (sqlite3.Error, OSError)

    def __init__(self, path: str | Path, readers: int = READER_THREADS):
        """Cheap: threads and connections open on first use (the writer's on its own
        thread), so an app that is built but never started holds nothing open."""
        self.path = str(path)
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._migrated = threading.Event()
        self._executor = ThreadPoolExecutor(
            max_workers=1,
            thread_name_prefix="sqlite-writer",
            initializer=self._open_thread_connection,
            initargs=(self._connect_writer,),
        )
        self._readers = ThreadPoolExecutor(
            max_workers=readers,
            thread_name_prefix="sqlite-reader",
            initializer=self._open_thread_connection,
            initargs=(self._connect_reader,),
        )
        self._point_reader: sqlite3.Connection | None = None
        self._checkpointer: ThreadPoolExecutor | None = None
        self._checkpoint_conn: sqlite3.Connection | None = None

    def _open_thread_connection(self, opener: Callable[[str], sqlite3.Connection]) -> None:
        self._local.conn = opener(self.path)
        self._opened.append(self._local.conn)

    def _connect_writer(self, path: str) -> sqlite3.Connection:
        conn = connect_sqlite(path)
        self._migrated.set()
        return conn

    def _connect_reader(self, path: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
        # The writer's connection creates and migrates the file; readers open it after.
        if not self._migrated.is_set():
            self._executor.submit(self._migrated.wait).result()
        return connect_reader(path, busy_timeout_ms)

    def _run_with_connection(self, fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
        return fn(self._local.conn, *args, **kwargs)

    def take_over_checkpoints(self) -> None:
        """From now on commits don't checkpoint the WAL (a checkpoint fsyncs and can stall
        a click batch on a busy disk): the owner must call checkpoint() regularly, which
        does it on a thread and connection of its own. Without this call, SQLite
        checkpoints on commit as usual (the CLI and the demo seeder rely on that)."""
        self._executor.submit(
            self._run_with_connection, sqlite3.Connection.execute, ("PRAGMA wal_autocheckpoint = 0",), {}
        ).result()
        self._checkpointer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-checkpoint")
        self._checkpoint_conn = self._checkpointer.submit(connect_sqlite, self.path).result()

    async def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run_with_connection, fn, args, kwargs)

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, self._run_with_connection, fn, args, kwargs)

    def read_now(self, fn: Callable[..., T], *args: Any) -> T:
        if self._point_reader is None:
            self._point_reader = self._connect_reader(self.path, busy_timeout_ms=POINT_READ_BUSY_MS)
            self._point_reader.execute(f"PRAGMA cache_size = -{POINT_READER_CACHE_KIB}")
            self._opened.append(self._point_reader)
        return fn(self._point_reader, *args)

    async def checkpoint(self, restart_after_bytes: int = WAL_RESTART_BYTES) -> None:
        """Copy committed WAL pages into the main file (see `checkpoint_wal`)."""
        assert self._checkpoint_conn is not None, "take_over_checkpoints() first"
        await asyncio.get_running_loop().run_in_executor(
            self._checkpointer, checkpoint_wal, self._checkpoint_conn, restart_after_bytes
        )

    def close(self) -> None:
        if self._checkpointer is not None and self._checkpoint_conn is not None:
            self._checkpointer.submit(self._checkpoint_conn.close).result()
            self._checkpointer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        self._executor.shutdown(wait=True)
        # sqlite3 connections may be closed from any thread (check_same_thread=False).
        for conn in self._opened:
            conn.close()
        self._opened.clear()


BACKUP_STEP_PAGES = 1024


def backup(
    conn: sqlite3.Connection, destination: str | Path, on_step: Callable[[int, int], None] | None = None
) -> None:
    """A consistent copy of the live database, via SQLite's online backup API.

    Safe while the server writes: the copy is one point-in-time snapshot. It is written
    to a temporary file beside `destination` and renamed into place when complete, so
    a failed or interrupted backup (an exception from `on_step(copied, total)` pages,
    called after every step, stops it) leaves nothing at `destination`.
    """
    destination = Path(destination)
    partial = destination.with_name(f".{destination.name}.partial")
    target = sqlite3.connect(partial)

    def step(_status: int, remaining: int, total: int) -> None:
        if on_step is not None:
            on_step(total - remaining, total)

    try:
        try:
            conn.backup(target, pages=BACKUP_STEP_PAGES, progress=step)
            target.execute("PRAGMA journal_mode = WAL")
        finally:
            target.close()
        partial.replace(destination)
    finally:
        partial.unlink(missing_ok=True)
