"""The `shortlink` command: serve, keys, subscriptions, domains, demo data, MCP, backups.

Every command opens the same SQLite file (migrating it if needed) and calls the
same functions the API uses, so it works while the server is running.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

from shortlink import accounts, signin
from shortlink.config import Config, ConfigError, load_config
from shortlink.errors import ShortlinkError, ValidationError
from shortlink.storage import connect
from shortlink.storage.database import backup


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", help="SQLite database file (default: [storage] path)")
    parser.add_argument("--config", help="configuration file (default: ./shortlink.toml)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shortlink", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the server")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument(
        "--workers", type=int, default=1, help="server processes on this port (more than 1 needs [redis] url)"
    )
    _common(serve)
    serve.set_defaults(run=cmd_serve)

    key = commands.add_parser("key", help="API keys").add_subparsers(dest="action", required=True)
    create = key.add_parser("create", help="create a key (and the account, with Pro, if new)")
    create.add_argument("--email", required=True)
    create.add_argument("--name")
    create.add_argument("--json", action="store_true", help="print one JSON object")
    _common(create)
    create.set_defaults(run=cmd_key_create)
    revoke = key.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("key_id")
    _common(revoke)
    revoke.set_defaults(run=cmd_key_revoke)
    listing = key.add_parser("list", help="list an account's keys")
    listing.add_argument("--email", required=True)
    _common(listing)
    listing.set_defaults(run=cmd_key_list)

    account = commands.add_parser("account", help="dashboard accounts").add_subparsers(dest="action", required=True)
    password = account.add_parser(
        "password", help="set an account's dashboard password (and create the account, with Pro, if new)"
    )
    password.add_argument("--email", required=True)
    password.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    _common(password)
    password.set_defaults(run=cmd_account_password)

    subscription = commands.add_parser("subscription", help="Pro subscriptions").add_subparsers(
        dest="action", required=True
    )
    set_sub = subscription.add_parser("set", help="activate or deactivate an account's subscription")
    set_sub.add_argument("--email", required=True)
    state = set_sub.add_mutually_exclusive_group(required=True)
    state.add_argument("--active", dest="active", action="store_true")
    state.add_argument("--inactive", dest="active", action="store_false")
    _common(set_sub)
    set_sub.set_defaults(run=cmd_subscription_set)

    domain = commands.add_parser("domain", help="custom domains").add_subparsers(dest="action", required=True)
    add = domain.add_parser("add", help="connect a custom domain to an account")
    add.add_argument("--email", required=True)
    add.add_argument("host")
    _common(add)
    add.set_defaults(run=cmd_domain_add)

    demo = commands.add_parser("demo", help="demo data").add_subparsers(dest="action", required=True)
    seed = demo.add_parser("seed", help="create demo links and record realistic clicks on them")
    seed.add_argument("--email", required=True, help="account (created with Pro if new)")
    seed.add_argument("--links", type=int, required=True)
    seed.add_argument("--clicks", type=int, required=True)
    seed.add_argument("--days", type=int, default=30, help="spread the clicks over this many days (default 30)")
    _common(seed)
    seed.set_defaults(run=cmd_demo_seed)

    mcp = commands.add_parser("mcp", help="the MCP tools over stdio for local assistants; key from SHORTLINK_API_KEY")
    mcp.add_argument("--url", help="relay to this running instance (its base URL) instead of using the database")
    _common(mcp)
    mcp.set_defaults(run=cmd_mcp)

    backup = commands.add_parser("backup", help="write a consistent copy of the live database")
    backup.add_argument("path")
    _common(backup)
    backup.set_defaults(run=cmd_backup)
    return parser


def _config(args: argparse.Namespace) -> Config:
    return load_config(
        args.config,
        storage_path=args.db,
        server_host=getattr(args, "host", None),
        server_port=getattr(args, "port", None),
    )


def _with_db(args: argparse.Namespace, action: Callable):
    conn = connect(_config(args).storage.path)
    try:
        return action(conn)
    finally:
        conn.close()


def cmd_serve(args: argparse.Namespace) -> None:
    from shortlink.server import serve

    serve(_config(args), workers=args.workers)


def cmd_key_create(args: argparse.Namespace) -> None:
    created = _with_db(args, lambda conn: accounts.create_key(conn, args.email, args.name))
    if args.json:
        print(
            json.dumps({"key": created.key, "keyId": created.key_id, "userId": created.user_id, "email": created.email})
        )
    else:
        print(f"API key for {created.email} (shown once, store it now):\n  {created.key}\nkey id: {created.key_id}")


def cmd_key_revoke(args: argparse.Namespace) -> None:
    _with_db(args, lambda conn: accounts.revoke_key(conn, args.key_id))
    print(f"revoked {args.key_id}")


def cmd_key_list(args: argparse.Namespace) -> None:
    for row in _with_db(args, lambda conn: accounts.list_keys(conn, args.email)):
        status = f"revoked {row['revoked_at']}" if row["revoked_at"] else "active"
        print(f"{row['public_id']}  {row['prefix']}…  {row['name'] or '-'}  created {row['created_at']}  {status}")


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("New password: ")
    if getpass.getpass("Again: ") != first:
        raise ValidationError("password", "the two passwords do not match")
    return first


def cmd_account_password(args: argparse.Namespace) -> None:
    """Ends every dashboard session of the account, as a password change there does."""
    password_hash = signin.hash_password(_read_password(args.password_stdin))
    account = _with_db(args, lambda conn: signin.set_password(conn, args.email, password_hash))
    print(f"password set for {account['email']}; its dashboard sessions have been signed out")


def cmd_subscription_set(args: argparse.Namespace) -> None:
    _with_db(args, lambda conn: accounts.set_subscription(conn, args.email, args.active))
    print(f"subscription of {args.email}: {'active' if args.active else 'inactive'}")


def cmd_domain_add(args: argparse.Namespace) -> None:
    host = _with_db(args, lambda conn: accounts.add_domain(conn, args.email, args.host))
    print(f"connected {host} to {args.email}")


def cmd_demo_seed(args: argparse.Namespace) -> None:
    from shortlink.demo import seed

    result = asyncio.run(seed(_config(args), args.email, args.links, args.clicks, args.days))
    print(
        f"seeded {result.links} links and {result.clicks} clicks "
        f"({result.bots} from bots) for {args.email} over {args.days} days"
    )


def cmd_mcp(args: argparse.Namespace) -> None:
    from shortlink.mcp import take_api_key

    key = take_api_key()  # before the SDK loads: a missing key stops at once
    from shortlink.mcp import stdio

    if args.url:
        asyncio.run(stdio.serve_remote(args.url, key))
    else:
        asyncio.run(stdio.serve_local(_config(args), key))


def cmd_backup(args: argparse.Namespace) -> None:
    destination = Path(args.path)
    if destination.exists():
        raise ShortlinkError(f"{args.path} exists; choose a new file")
    source = _config(args).storage.path
    if not Path(source).is_file():  # opening it would create an empty database to copy
        raise ShortlinkError(f"no database at {source}")
    try:
        _with_db(args, lambda conn: backup(conn, destination))
    except (sqlite3.Error, OSError) as exc:
        destination.unlink(missing_ok=True)  # nothing half-written to be mistaken for a backup
        raise ShortlinkError(f"backup to {args.path} failed: {exc}") from None
    print(f"backed up to {args.path}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except ConfigError as exc:
        print(f"shortlink: {exc}", file=sys.stderr)
        return 2
    except ShortlinkError as exc:
        print(f"shortlink: {exc.message}", file=sys.stderr)
        return 1
    return 0
