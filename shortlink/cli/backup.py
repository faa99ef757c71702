"""`shortlink backup`: a consistent copy of the live SQLite database."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from shortlink.cli.common import Output, command, config_of, with_db
from shortlink.cli.progress import progress, stop_on_interrupt
from shortlink.errors import ShortlinkError
from shortlink.stopping import Interrupted
from shortlink.storage import sqlite_path
from shortlink.storage.sqlite import backup


def register(commands) -> None:
    command(commands, "backup", run_backup, "write a consistent copy of the live database").add_argument("path")


def run_backup(args: argparse.Namespace) -> Output:
    destination = Path(args.path)
    if destination.exists():
        raise ShortlinkError(f"{args.path} exists; choose a new file")
    storage = config_of(args).storage
    if storage.url and not storage.url.startswith("sqlite:"):
        raise ShortlinkError("backup copies an SQLite database; back PostgreSQL up with pg_dump")
    source = sqlite_path(storage.location)
    if not Path(source).is_file():  # opening it would create an empty database to copy
        raise ShortlinkError(f"no database at {source}")

    def copy(conn: sqlite3.Connection) -> int:
        with stop_on_interrupt() as stop, progress("backup", 0, "pages") as copied:

            def step(done: int, total: int) -> None:
                copied.set_total(total)
                copied.advance(done - copied.done)
                stop.check()  # between two steps: the unfinished copy is removed

            backup(conn, destination, step)
            return copied.total

    try:
        pages = with_db(args, copy)
    except Interrupted:
        raise Interrupted(f"interrupted: no backup written to {args.path}") from None
    except (sqlite3.Error, OSError) as exc:
        raise ShortlinkError(f"backup to {args.path} failed: {exc}") from None
    size = destination.stat().st_size
    return {"path": str(destination), "pages": pages, "bytes": size}, f"backed up to {args.path}"
