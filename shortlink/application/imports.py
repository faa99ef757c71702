"""Importing rows (`shortlink.imports`) into an account, and exporting its links.

An import is planned first, read-only (`shortlink.imports.plan`: what each row becomes). A dry
run stops there and reports the plan; otherwise the planned
links are created through `links.service.create_link`, a chunk of rows per write, and the
source's clicks are stored as the click writer stores visits (raw rows, counters and rollups
together, in SQL, a batch per transaction), labelled once per distinct user agent, referrer
and address (shortlink.imports.history), bots classified by our own rules where the user
agent is known.

Running the same import again changes nothing: a row whose code already belongs to the
account with the same destination is "unchanged" (so are its tags and history), and a row
without a code is the account's link with the same destination and creation time (or,
when the row has no time, the same destination).
"""

from __future__ import annotations

import asyncio
import csv
import io
import logging
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from datetime import datetime
from typing import cast

import msgspec

from shortlink.accounts import service as accounts
from shortlink.analytics import rawclicks
from shortlink.application.hosts import Hosts
from shortlink.applinks.service import attach_imported_app
from shortlink.config import Config
from shortlink.csvcells import safe_record
from shortlink.errors import ShortlinkError, ValidationError
from shortlink.imports import PARSERS, POLICIES, Policy, worker
from shortlink.imports.generic import COLUMNS, join_tags
from shortlink.imports.history import HistoryLabels
from shortlink.imports.plan import Planned, RowOutcome, daily_limit_reached, new_link, plan
from shortlink.imports.rows import BadRow, ImportedClick, ImportRow
from shortlink.links import service
from shortlink.links import tags as tagging
from shortlink.links.public import blocked_hosts
from shortlink.stopping import StopRequest
from shortlink.storage import Connection, Database, open_database, transaction
from shortlink.storage import accounts as account_store
from shortlink.storage import clicks as click_store
from shortlink.storage import links as link_store
from shortlink.storage import tags as tag_store
from shortlink.times import day_of, from_iso, utcnow
from shortlink.visits.countries import open_table
from shortlink.webhooks import outbox

log = logging.getLogger("shortlink.imports")
# Rows per write: large enough to amortise the hop to the writer, small enough that
# visits and other writers never wait long behind an import.
CHUNK_ROWS = 200
# Imported clicks per batch handed to the database: two batches at most are in memory (one
# labelled while the other is staged); and staged clicks per transaction on SQLite, which
# stages them on disk (storage.clicks.write_staged_clicks: fewer, larger rollup passes).
CLICK_BATCH = 100_000
CLICKS_PER_TRANSACTION = 1_000_000
# An operator's import is not an API client's burst: the daily link limit does not apply.
NO_DAILY_LIMIT = 10**12


class ImportReport(msgspec.Struct):
    source: str
    dry_run: bool
    applied: bool  # false for a dry run, and when --on-conflict fail found a conflict
    created: int
    unchanged: int
    skipped: int
    errors: int
    visits: int
    rows: list[RowOutcome]
    interrupted: bool = False  # Ctrl-C: the rows before were imported, the rest were not


def apply_chunk(
    conn: Connection,
    account_id: int,
    planned: list[Planned],
    hosts: Hosts,
    now: datetime,
    daily_limit: int | None = None,
) -> list[tuple[int, Planned]]:
    """Create the chunk's planned links in one transaction, each row in a savepoint of its own
    (a failure refuses that row only): one commit per chunk, not per link. Returns (internal
    link id, its planned row) of each created link. `daily_limit` as in `plan`."""
    with transaction(conn):
        return _apply_rows(conn, account_id, planned, hosts, now, daily_limit)


def _apply_rows(
    conn: Connection,
    account_id: int,
    planned: list[Planned],
    hosts: Hosts,
    now: datetime,
    daily_limit: int | None,
) -> list[tuple[int, Planned]]:
    created = []
    for item in planned:
        if item.outcome.action != "create" or item.row is None:
            continue
        row = item.row
        made_at = from_iso(row.created_at) if row.created_at else now
        try:
            with transaction(conn):
                # create_link counts the link on the day it was made; an import limited per day
                # counts it on today's too (once, when that is the same day).
                limit = NO_DAILY_LIMIT
                if daily_limit is not None and day_of(made_at) == day_of(now):
                    limit = daily_limit
                elif daily_limit is not None:
                    try:
                        link_store.count_creation(conn, account_id, day_of(now), daily_limit)
                    except link_store.DailyLimitReached:
                        raise ShortlinkError(daily_limit_reached(daily_limit)) from None
                link = service.create_link(
                    conn,
                    account_id,
                    msgspec.structs.replace(new_link(row)[0], custom_code=item.outcome.code),
                    is_ours=hosts.is_ours,
                    base=hosts.base_for_account(account_id),
                    daily_limit=limit,
                    now=made_at,
                    password_hash=row.password_hash,
                    fetch_title=False,
                    source=row.source,
                )
                stored = link_store.link_by_code(conn, link.short_code)
                assert stored is not None, "created just now"
                # An expiry is kept even when it has passed: the link stays expired, as it was.
                changes: dict[str, object] = {"expires_at": row.expires_at} if row.expires_at else {}
                if not row.is_active:
                    changes["is_active"] = 0
                if changes:
                    link_store.update_link(conn, stored["id"], changes)
                if item.tags:
                    tagging.store_tags(conn, account_id, stored["id"], item.tags)
                if row.app is not None:  # the app the source's link opened
                    attach_imported_app(conn, account_id, stored["id"], row.app)
                if changes:  # the event shows the link as imported
                    link = service.to_link(
                        link_store.link_by_pk(conn, stored["id"]) or stored, link.short_url.rsplit("/l/", 1)[0]
                    )
                outbox.emit_link(conn, account_id, "link.created", link, now)
        except ShortlinkError as exc:  # e.g. the code was taken since the plan
            item.outcome.action, item.outcome.reason, item.outcome.visits = "error", exc.message, 0
            continue
        item.outcome.code = link.short_code
        created.append((stored["id"], item))
    return created


class _HistoryWriter:
    """Imported clicks to the database, CLICK_BATCH at a time: the next batch is labelled on
    this thread while the previous one is staged on the database's (SQLite's C code, which
    runs without the GIL), and what is staged is stored every CLICKS_PER_TRANSACTION clicks and
    at the end (`finish`). `on_clicks(n)` as clicks are handed over, for a progress bar."""

    def __init__(self, db: Database, labels: HistoryLabels, on_clicks: Callable[[int], None]):
        self.db, self.labels, self.on_clicks = db, labels, on_clicks
        self.batch: list[click_store.StoredClick] = []
        self.staged = 0  # since the last transaction
        self.position = 0
        self._staging: asyncio.Future[None] | None = None

    def add(self, account_id: int, link_pk: int, click: ImportedClick) -> None:
        self.batch.append(self.labels.stored(account_id, link_pk, click))

    @property
    def full(self) -> bool:
        return len(self.batch) >= CLICK_BATCH

    async def send(self) -> None:
        """Hand the batch over once the previous one is staged."""
        await self._staged()
        if self.batch:
            # A link's clicks together, oldest first: its raw rows' index is written in order.
            batch, self.batch = sorted(self.batch, key=_link_and_time), []
            self._staging = asyncio.ensure_future(self._stage(batch, self.position))
            self.position += len(batch)

    async def finish(self) -> None:
        await self.send()
        await self._staged()
        if self.staged:
            await self.db.write(click_store.write_staged_clicks)
            self.staged = 0

    async def _staged(self) -> None:
        if self._staging is not None:
            staging, self._staging = self._staging, None
            await staging
        if self.staged >= CLICKS_PER_TRANSACTION:
            await self.db.write(click_store.write_staged_clicks)
            self.staged = 0

    async def _stage(self, batch: list[click_store.StoredClick], first_position: int) -> None:
        written = await self.db.write(click_store.stage_imported_clicks, batch, first_position)
        if not written:  # staged, to be written with the next transaction
            self.staged += len(batch)
        self.on_clicks(len(batch))


def _link_and_time(click: click_store.StoredClick) -> tuple[int, int]:
    return click.link_id, click.ts


async def run_import(
    config: Config,
    email: str,
    source: str,
    rows: list[ImportRow | BadRow],
    *,
    policy: Policy = "skip",
    dry_run: bool = False,
    on_rows: Callable[[int], None] = lambda _count: None,
    stop: StopRequest | None = None,
    history: History | None = None,
    on_clicks: Callable[[int], None] = lambda _count: None,
) -> ImportReport:
    """Import `rows` into the account of `email` (created, with Pro, if new); `on_rows(n)`
    after every n rows done, and `on_clicks(n)` after every n clicks, for progress bars. When
    `stop` is requested the import ends between two chunks: the rows not reached are reported
    as skipped, every row before is in."""
    if policy not in POLICIES:
        raise ValidationError("--on-conflict", f"must be one of {', '.join(POLICIES)}")
    db = open_database(config.storage.location)
    try:
        if dry_run:  # changes nothing, not even a new account (which has no links: id 0 matches none)
            found = await db.read(account_store.account_by_email, email)
            account_id = 0 if found is None else found["id"]
        else:
            account_id = (await db.write(accounts.ensure_account, email))["id"]
        hosts = await db.read(Hosts.load, config.short_host, config.links.domains)
        return await import_rows(
            db,
            config,
            hosts,
            account_id,
            source,
            rows,
            policy=policy,
            dry_run=dry_run,
            on_rows=on_rows,
            stop=stop,
            history=history,
            on_clicks=on_clicks,
        )
    finally:
        db.close()


async def import_rows(
    db: Database,
    config: Config,
    hosts: Hosts,
    account_id: int,
    source: str,
    rows: list[ImportRow | BadRow],
    *,
    policy: Policy = "skip",
    dry_run: bool = False,
    on_rows: Callable[[int], None] = lambda _count: None,
    stop: StopRequest | None = None,
    changed: Callable[[str], None] = lambda _code: None,
    history: History | None = None,
    on_clicks: Callable[[int], None] = lambda _count: None,
    daily_limit: int | None = None,
) -> ImportReport:
    """`run_import` on an open database and account; `changed(code)` for each link created
    (a server's link cache may hold the code as unknown). `history`, for a source too big to
    hold (a YOURLS dump's log), gives (row code, click) pairs read after the links: each
    click of a row created now is recorded, the rest passed over, never all in memory.
    `daily_limit`: the account's, for an import through the dashboard (`plan`); the
    operator's `shortlink import` has none."""
    if policy not in POLICIES:
        raise ValidationError("on_conflict", f"must be one of {', '.join(POLICIES)}")
    writer = _HistoryWriter(db, HistoryLabels(open_table(config.geoip.path)), on_clicks)
    blocked = blocked_hosts(config.public.blocked_hosts)
    planned = await db.read(plan, account_id, rows, policy, hosts.is_ours, blocked, daily_limit)
    stopped = policy == "fail" and any(item.conflict for item in planned)
    interrupted = False
    created: dict[str, tuple[int, RowOutcome]] = {}  # a row's own code -> (link id, its outcome)
    if not dry_run and not stopped:
        now = utcnow()
        for start in range(0, len(planned), CHUNK_ROWS):
            if stop is not None and stop.requested:
                interrupted = True
                for item in planned[start:]:
                    if item.outcome.action == "create":
                        item.outcome.action, item.outcome.reason, item.outcome.visits = "skip", "not reached", 0
                break
            chunk = planned[start : start + CHUNK_ROWS]
            for link_pk, item in await db.write(apply_chunk, account_id, chunk, hosts, now, daily_limit):
                assert item.row is not None, "only rows are created"
                if item.row.code is not None:
                    created[item.row.code] = (link_pk, item.outcome)
                for click in item.row.clicks:
                    writer.add(account_id, link_pk, click)
                    if writer.full:
                        await writer.send()
                item.row.clicks = []  # recorded: not held for the rest of the import
            for item in chunk:
                if item.outcome.action == "create" and item.outcome.code:
                    changed(item.outcome.code)
            on_rows(len(chunk))
        if history is not None and not interrupted:
            await _record_history(writer, account_id, history, created, _left_out(planned), stop)
        await writer.finish()
    elif history is not None and not stopped:  # a dry run counts the history each row would bring
        wanted = {item.row.code: item.outcome for item in planned if item.outcome.action == "create" and item.row}
        left_out = _left_out(planned)
        for code, _click in history():
            if code in wanted:
                wanted[code].visits += 1
            elif code in left_out:
                left_out[code].clicks_left_out += 1
    report = _report(source, planned, dry_run, applied=not dry_run and not stopped)
    report.interrupted = interrupted
    return report


History = Callable[[], Iterable[tuple[str, ImportedClick]]]


def _left_out(planned: list[Planned]) -> dict[str, RowOutcome]:
    """The rows not created, by their code in the file: the report counts the clicks they leave out."""
    return {item.file_code: item.outcome for item in planned if item.outcome.action != "create" and item.file_code}


async def _record_history(
    writer: _HistoryWriter,
    account_id: int,
    history: History,
    created: dict[str, tuple[int, RowOutcome]],
    left_out: dict[str, RowOutcome],
    stop: StopRequest | None,
) -> None:
    """The clicks of the links created now, in batches of CLICK_BATCH."""
    for code, click in history():
        found = created.get(code)
        if found is None:
            # A link not created now (skipped, refused, or already here) keeps its history.
            if code in left_out:
                left_out[code].clicks_left_out += 1
            continue
        link_pk, outcome = found
        outcome.visits += 1
        writer.add(account_id, link_pk, click)
        if writer.full:
            await writer.send()
            if stop is not None and stop.requested:
                return


def _report(source: str, planned: list[Planned], dry_run: bool, applied: bool) -> ImportReport:
    outcomes = [item.outcome for item in planned]
    for outcome in outcomes:
        if outcome.clicks_left_out:
            why = (
                "the link is already here and keeps its own history"
                if outcome.action == "unchanged"
                else "history comes only with a link imported now"
            )
            left = f"{outcome.clicks_left_out:,} click{'' if outcome.clicks_left_out == 1 else 's'} not imported: {why}"
            outcome.reason = f"{outcome.reason}; {left}" if outcome.reason else left
    count = {
        action: sum(outcome.action == action for outcome in outcomes)
        for action in ("create", "unchanged", "skip", "error")
    }
    return ImportReport(
        source=source,
        dry_run=dry_run,
        applied=applied,
        created=count["create"] if applied or dry_run else 0,
        unchanged=count["unchanged"],
        skipped=count["skip"],
        errors=count["error"],
        visits=sum(outcome.visits for outcome in outcomes if outcome.action == "create") if applied or dry_run else 0,
        rows=outcomes,
    )


# Export: the generic CSV's columns, so that an export imports into another install as it is.
EXPORT_PAGE = 1000


def export_page(conn: Connection, account_id: int, after: int) -> tuple[list[dict[str, str]], int]:
    """Up to EXPORT_PAGE of the account's links after internal id `after`, oldest first, as
    generic CSV records, and the id to continue after (a server streams one page per read)."""
    page = link_store.links_after(conn, account_id, after, EXPORT_PAGE)
    tags = tag_store.tags_of_links(conn, [row["id"] for row in page])
    records = [
        {
            "url": row["original_url"],
            "code": row["short_code"],
            "title": row["title"] or "",
            "description": row["description"] or "",
            "tags": join_tags(tags.get(row["id"], [])),
            "created_at": row["created_at"],
            "expires_at": row["expires_at"] or "",
            "ios_url": row["ios_url"] or "",
            "android_url": row["android_url"] or "",
            "is_active": "true" if row["is_active"] else "false",
            "password_hash": row["password_hash"] or "",
            "source": row["source"] or "",
        }
        for row in page
    ]
    return records, page[-1]["id"] if page else after


def export_records(conn: Connection, account_id: int) -> Iterator[dict[str, str]]:
    """The account's links, oldest first, as generic CSV records, a page at a time."""
    after = 0
    while True:
        records, after = export_page(conn, account_id, after)
        if not records:
            return
        yield from records


def csv_lines(records: Iterator[dict[str, str]]) -> Iterator[str]:
    """The header, then one CSV line per record, its text cells safe for spreadsheets (the
    generic import undoes it: shortlink.csvcells)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow(safe_record(record))
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if buffer.getvalue():
        yield buffer.getvalue()


def csv_text(records: list[dict[str, str]], header: bool) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    if header:
        writer.writeheader()
    writer.writerows(safe_record(record) for record in records)
    return buffer.getvalue()


def jsonl_lines(records: Iterable[dict[str, str]]) -> Iterator[str]:
    return (msgspec.json.encode(record).decode() + "\n" for record in records)


# What the dashboard takes in one upload: a bigger file is for `shortlink import` (no HTTP
# request holds it, and the CLI shows progress).
MAX_UPLOAD_BYTES = 4 * 2**20
# How long the parse of an upload may take (docs/import-export.md): a file of MAX_UPLOAD_BYTES
# takes well under a second; one that takes this long is refused rather than left running.
PARSE_SECONDS = 20.0


async def parse_upload(source: str, data: bytes, seconds: float = PARSE_SECONDS) -> list[ImportRow | BadRow]:
    """`data` parsed as `source`'s export in a process of its own (shortlink.imports.worker):
    the server's interpreter lock and event loop stay free for visitors whatever the file
    holds, and a parse still running after `seconds` is ended. ValidationError names the
    file when it cannot be read."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "shortlink.imports.worker",
        source,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(data), seconds)
    except TimeoutError:
        raise ValidationError(
            "file", f"took longer than {seconds:g} s to read: use `shortlink import` on the server"
        ) from None
    finally:
        if child.returncode is None:  # the deadline, or the request went away
            child.kill()
            await child.wait()
    if child.returncode != 0:
        last = err.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        log.warning("the parse of a %s upload failed: %s", source, last[0])
        raise ValidationError("file", f"is not a {source} export this service can read")
    parsed = worker.DECODER.decode(out)
    if parsed.error is not None:
        raise ValidationError("file", f"is not a {source} export: {parsed.error}")
    return parsed.items()


class Imports:
    """Imports and exports for the dashboard, on the server's own database: the link cache
    (of every process, through `changed`) forgets each code created, as it may hold it as
    unknown. Uploads are parsed in a process of their own (`parse_upload`), within
    `parse_seconds`, and their links count against the account's daily limit."""

    def __init__(
        self,
        *,
        db: Database,
        config: Config,
        hosts: Hosts,
        changed: Callable[[str], None],
        parse_seconds: float = PARSE_SECONDS,
    ):
        self.db, self.config, self.hosts, self._changed = db, config, hosts, changed
        self.parse_seconds = parse_seconds

    async def run(self, account_id: int, source: str, data: bytes, policy: str, dry_run: bool) -> ImportReport:
        """Parse `data` as `source`'s export (off the event loop) and import or plan it."""
        if source not in PARSERS:
            raise ValidationError("source", f"must be one of {', '.join(sorted(PARSERS))}")
        if policy not in POLICIES:
            raise ValidationError("on_conflict", f"must be one of {', '.join(POLICIES)}")
        if not data:
            raise ValidationError("file", "choose a file to import")
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValidationError(
                "file", f"is larger than {MAX_UPLOAD_BYTES // 2**20} MB: use `shortlink import` on the server"
            )
        rows = await parse_upload(source, data, self.parse_seconds)
        return await import_rows(
            self.db,
            self.config,
            self.hosts,
            account_id,
            source,
            rows,
            policy=cast(Policy, policy),
            dry_run=dry_run,
            changed=self._changed,
            daily_limit=self.config.limits.links_per_day,
        )

    async def export_lines(self, account_id: int, format: str) -> AsyncIterator[str]:
        """Every link of the account as the generic CSV's lines (or JSON lines), a page per read."""
        after = 0
        first = True
        while True:
            records, after = await self.db.read(export_page, account_id, after)
            if format == "csv":
                yield csv_text(records, header=first)
            else:
                yield "".join(jsonl_lines(records))
            first = False
            if not records:
                return

    async def export_clicks(self, account_id: int, start: str | None, end: str | None) -> AsyncIterator[str]:
        """The raw clicks of `start`..`end` as JSON lines (shortlink.analytics.rawclicks), one
        page per read: the range is checked before the first byte (a bad date is the
        caller's error, not a broken stream)."""
        start_ms, end_ms = rawclicks.click_range(start, end)
        return self._click_pages(rawclicks.Cursor(account_id, start_ms, end_ms))

    async def _click_pages(self, cursor: rawclicks.Cursor) -> AsyncIterator[str]:
        while not cursor.done:
            page = await self.db.read(rawclicks.next_page, cursor)
            if page:
                yield page
