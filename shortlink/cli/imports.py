"""`shortlink import` and `shortlink export`: links (and their clicks) in and out of an account."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from shortlink.accounts import service as accounts
from shortlink.cli.common import Output, Unhealthy, command, config_of, printable, with_db
from shortlink.cli.progress import progress, stop_on_interrupt
from shortlink.errors import ShortlinkError, ValidationError
from shortlink.imports import PARSERS, POLICIES
from shortlink.stopping import Interrupted
from shortlink.storage import Connection

if TYPE_CHECKING:
    from shortlink.application.imports import RowOutcome


def register(commands) -> None:
    importing = command(
        commands,
        "import",
        run_import_file,
        "import links (and their click history) from another service's export file;"
        " the operator's import is not held to the daily link limit (the dashboard's is)",
    )
    importing.add_argument("source", choices=sorted(PARSERS), metavar="SOURCE", help=", ".join(sorted(PARSERS)))
    importing.add_argument("file", metavar="FILE", help="the export file (- for standard input)")
    importing.add_argument("--email", required=True, help="the account (created with Pro if new)")
    importing.add_argument("--dry-run", action="store_true", help="print what would happen, row by row; change nothing")
    importing.add_argument(
        "--on-conflict",
        choices=POLICIES,
        default="skip",
        help="a code taken or reserved here: skip the row, suffix the code (-2, -3...), or fail: import nothing",
    )
    importing.add_argument(
        "--clicks",
        metavar="CLICKS",
        help="the raw clicks of `export --clicks` (JSON lines): history of each code's link",
    )
    exporting = command(
        commands, "export", run_export, "write every link of an account to stdout (the import's CSV)", json_output=False
    )
    exporting.add_argument("--email", required=True)
    exporting.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    exporting.add_argument(
        "--clicks", action="store_true", help="write the raw clicks instead, as JSON lines (no visitor identity)"
    )
    exporting.add_argument("--from", dest="start", metavar="DATE", help="with --clicks: from this day (UTC) on")
    exporting.add_argument("--to", dest="end", metavar="DATE", help="with --clicks: up to this day (UTC), included")


def _outcome_line(outcome: RowOutcome) -> str:
    where = f"line {outcome.line}" + (f", row {outcome.row} of its INSERT" if outcome.row else "")
    parts = [f"{where}: {outcome.action}"]
    if outcome.code:
        parts.append(outcome.code)
    if outcome.url:
        parts.append(f"-> {outcome.url}")
    if outcome.visits:
        parts.append(f"with {outcome.visits} clicks")
    text = " ".join(parts) + (f" ({outcome.reason})" if outcome.reason else "")
    return printable(text)


def run_import_file(args: argparse.Namespace) -> Output:
    from shortlink.application.imports import run_import
    from shortlink.imports import generic, yourls
    from shortlink.imports.rows import FileError

    history = None
    try:
        if args.source == "yourls" and args.file != "-" and yourls.is_dump(Path(args.file)):
            # A dump is read a statement at a time: its click log can be far bigger than memory.
            rows, history = yourls.stream(Path(args.file))
        elif args.source == "csv" and args.file != "-":
            rows = generic.read(Path(args.file))  # a record at a time, never the whole file
        else:
            data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
            rows = PARSERS[args.source](data)
    except OSError as exc:
        raise ShortlinkError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    except FileError as exc:
        raise ShortlinkError(printable(f"{args.file} is not a {args.source} export: {exc}")) from None
    if args.clicks:
        from shortlink.imports import clicks

        try:
            rows = clicks.attach(rows, clicks.parse(Path(args.clicks).read_bytes()))
        except OSError as exc:
            raise ShortlinkError(f"cannot read {args.clicks}: {exc.strerror or exc}") from None
        except FileError as exc:
            raise ShortlinkError(printable(f"{args.clicks}: {exc}")) from None
    config = config_of(args)
    with (
        stop_on_interrupt() as stop,
        progress("import", 0 if args.dry_run else len(rows), "rows") as done,
        # The click pass's count on a terminal (its total is known only once the log is read).
        progress("import: clicks", 0, "clicks", tty_only=True) as clicks_done,
    ):
        report = asyncio.run(
            run_import(
                config,
                args.email,
                args.source,
                rows,
                policy=args.on_conflict,
                dry_run=args.dry_run,
                on_rows=done.advance,
                stop=stop,
                history=history,
                on_clicks=(lambda _count: None) if args.json else clicks_done.advance,
            )
        )
    lines = [_outcome_line(outcome) for outcome in report.rows]
    verb = "would create" if report.dry_run else "created"
    summary = (
        f"{verb} {report.created} links with {report.visits} clicks; {report.unchanged} unchanged, "
        f"{report.skipped} skipped, {report.errors} refused"
    )
    if not report.dry_run and not report.applied:
        summary = f"nothing imported: a code conflicts and --on-conflict is fail; {summary.split('; ', 1)[1]}"
    text = "\n".join([*lines, summary])
    if report.interrupted:
        raise Interrupted(f"interrupted: {summary}; the rows not reached were not imported")
    if report.errors or (not report.dry_run and not report.applied):
        raise Unhealthy(report, text)
    return report, text


def run_export(args: argparse.Namespace) -> None:
    from shortlink.analytics import rawclicks
    from shortlink.application.imports import csv_lines, export_records

    if (args.start or args.end) and not args.clicks:
        raise ValidationError("--from", "goes with --clicks")
    start_ms, end_ms = rawclicks.click_range(args.start, args.end)

    def write(conn: Connection) -> None:
        account_id = accounts.account_for(conn, args.email)["id"]
        if args.clicks:
            sys.stdout.writelines(rawclicks.lines(conn, account_id, start_ms, end_ms))
            return
        records = export_records(conn, account_id)
        if args.format == "csv":
            sys.stdout.writelines(csv_lines(records))
        else:
            sys.stdout.writelines(msgspec.json.encode(record).decode() + "\n" for record in records)

    try:
        with_db(args, write)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`| head`): nothing is wrong, and nothing more to say.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
