"""`shortlink migrate --to postgresql://…`: this SQLite installation copied into PostgreSQL, verified
(move_to_postgresql.py)."""

from __future__ import annotations

import argparse

from shortlink.cli.common import Output, command, config_of
from shortlink.cli.progress import stop_on_interrupt
from shortlink.config import ConfigError
from shortlink.errors import ShortlinkError
from shortlink.storage import is_postgresql, sqlite_path


def register(commands) -> None:
    migrate = command(
        commands, "migrate", run_migrate, "copy this SQLite installation into an empty PostgreSQL database, verified"
    )
    migrate.add_argument("--to", required=True, metavar="URL", help="postgresql://user:password@host:port/database")
    migrate.add_argument(
        "--replace", action="store_true", help="delete what the target database holds first (a previous copy)"
    )


def run_migrate(args: argparse.Namespace) -> Output:
    from shortlink.cli.move_to_postgresql import migrate
    from shortlink.storage.postgresql import describe

    if not is_postgresql(args.to):
        raise ConfigError("--to: must be a postgresql://user:password@host:port/database URL")
    storage = config_of(args).storage
    if is_postgresql(storage.location):
        raise ShortlinkError("migrate copies an SQLite installation: --db (or [storage]) names PostgreSQL")
    with stop_on_interrupt() as stop:
        result = migrate(sqlite_path(storage.location), args.to, replace=args.replace, stop=stop)
    value = {
        "to": describe(args.to),
        "rows": result.counts,
        "seconds": round(result.seconds, 1),
        "verified": {"answers": result.answers, "accounts": result.accounts, "links": result.links},
    }
    return value, (
        f"copied {result.rows:,} rows of {len(result.counts)} tables to {describe(args.to)} in {result.seconds:.1f} s\n"
        f"verified: every table holds as many rows as the source, and {result.answers} analytics answers "
        f"({result.accounts} accounts and {result.links} links over {result.ranges} ranges) are equal\n"
        "next: stop the servers, set [storage] url to the database (SHORTLINK_STORAGE_URL), start them"
    )
