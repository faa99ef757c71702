"""Database files as an older version of shortlink left them: the shipped migrations up to a
number, applied as that version applied them, without the migration record later versions keep."""

from __future__ import annotations

import sqlite3

from shortlink.storage.schema import sqlite_migrations, statements


def sqlite_file_as_of(path: str, version: int) -> None:
    """Migrations 1 to `version` on a new file, and `PRAGMA user_version` set to it."""
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        # Migration 0006's function; the tables it reads are empty here, so it is never called.
        raw.create_function("hex64", 1, lambda text: int(text[:16], 16), deterministic=True)
        for number, _name, sql in sqlite_migrations():
            if number <= version:
                for statement in statements(sql):
                    raw.execute(statement)
        raw.execute(f"PRAGMA user_version = {version}")
    finally:
        raw.close()
