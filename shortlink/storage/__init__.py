"""The storage layer: every SQL statement of the project lives in this package.

Each storage function is a plain synchronous function taking a
`sqlite3.Connection` first. The CLI and tests call them directly; the server runs
them through `Database.write`, `read` or `read_now`, one whole function at a time on
one connection, so a function is an atomic unit without any locking.
"""

from shortlink.storage.database import Database, connect, open_database, transaction

__all__ = ["Database", "connect", "open_database", "transaction"]
