"""What every command shares: its `--db`/`--config`/`--json` options, its configuration and one
connection, what it returns, the yes a removal asks for, and how a result or a failure is printed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import msgspec

from shortlink.application.hosts import Hosts
from shortlink.config import Config, load_config
from shortlink.controls import terminal_safe
from shortlink.errors import ShortlinkError
from shortlink.storage import Connection, connect
from shortlink.visits.invalidation import changes_told

EXIT_OK, EXIT_USAGE, EXIT_NOT_FOUND = 0, 1, 2

# What a command returns: its JSON value and the text a person reads.
Output = tuple[Any, str]


class Unhealthy(Exception):
    """`doctor` found a problem, `import` refused rows, or `domain verify` found no record: the
    full report is printed all the same, with exit code 1."""

    def __init__(self, value: Any, text: str):
        super().__init__(text)
        self.output: Output = (value, text)


class Parser(argparse.ArgumentParser):
    """argparse exits 2 on a usage error; here 2 means "not found", so usage is 1."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_common_options(parser: argparse.ArgumentParser, json_output: bool = True) -> None:
    parser.add_argument(
        "--db", help="SQLite file, or a sqlite:/// or postgresql:// URL (default: [storage] url, else [storage] path)"
    )
    parser.add_argument("--config", help="configuration file (default: ./shortlink.toml)")
    if json_output:
        parser.add_argument("--json", action="store_true", help="print exactly one JSON document on stdout")


def command(group, name: str, run: Callable, help: str, json_output: bool = True) -> argparse.ArgumentParser:
    parser = group.add_parser(name, help=help)
    parser.set_defaults(run=run)
    add_common_options(parser, json_output)
    return parser


def command_group(commands, name: str, help: str):
    return commands.add_parser(name, help=help, description=help).add_subparsers(
        dest="action", required=True, metavar="ACTION", parser_class=Parser
    )


def storage_overrides(args: argparse.Namespace) -> dict[str, Any]:
    # --db names the database whatever the file says: a URL, or a path (and then no URL).
    given_url = args.db is not None and "://" in args.db
    return {
        "storage_url": args.db if given_url else ("" if args.db is not None else None),
        "storage_path": None if given_url else args.db,
    }


def config_of(args: argparse.Namespace) -> Config:
    return load_config(
        args.config,
        **storage_overrides(args),
        server_host=getattr(args, "host", None),
        server_port=getattr(args, "port", None),
    )


def with_db(args: argparse.Namespace, action: Callable):
    config = config_of(args)
    conn = connect(config.storage.location)
    try:
        if not config.redis.url:
            return action(conn)
        with changes_told(conn, config.redis.url):
            return action(conn)
    finally:
        conn.close()


def hosts_of(conn: Connection, config: Config) -> Hosts:
    return Hosts.load(conn, config.short_host, config.links.domains)


def printable(text: str) -> str:
    """Text from a file, safe on a terminal: control and format characters escaped."""
    return "".join(char if char.isprintable() else f"\\u{ord(char):04x}" for char in text)


def print_json(value: Any) -> None:
    sys.stdout.write(msgspec.json.encode(value).decode() + "\n")


def confirmed(question: str, verb: str) -> bool:
    """The person's yes to `question` on a terminal; off one, or at the end of input, a refusal
    naming --yes."""
    if not sys.stdin.isatty():
        raise ShortlinkError(f"not on a terminal: add --yes to {verb} without being asked")
    try:
        return input(f"{terminal_safe(question)} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        raise ShortlinkError(f"no answer (end of input): add --yes to {verb} without being asked") from None


def fail(args: argparse.Namespace, code: str, message: str, exit_code: int) -> int:
    print(f"shortlink: {terminal_safe(message)}", file=sys.stderr)
    if getattr(args, "json", False):
        print_json({"error": {"code": code, "message": message}})
    return exit_code
