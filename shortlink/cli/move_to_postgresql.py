"""Moving an installation from SQLite to PostgreSQL: `shortlink migrate --to postgresql://...`.

1. Snapshot: an online backup of the live SQLite file (storage.sqlite.backup) beside it,
   one consistent point in time, while the servers keep running.
2. Copy: every table of the snapshot into the PostgreSQL database, in one transaction
   streamed in batches (storage.copy). The target must be empty (a failed run leaves it
   so), or hold what `--replace` may delete.
3. Verify: every table has as many rows as the snapshot, and the analytics answers, for
   every account and link over several ranges, are equal on both.

Clicks that arrive after the snapshot are not in the copy: stop the servers first, or
run it again with --replace just before switching them over.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from shortlink.analytics.ranges import parse_range
from shortlink.analytics.report import account_analytics, link_analytics
from shortlink.cli.progress import progress
from shortlink.errors import ShortlinkError
from shortlink.stopping import Interrupted, StopRequest
from shortlink.storage import Connection, connect
from shortlink.storage import copy as store
from shortlink.storage.postgresql import PostgresConnection, describe
from shortlink.storage.sqlite import backup, connect_sqlite
from shortlink.times import utcnow

BATCH_ROWS = 10_000
# Links whose per-link answers are compared, the most clicked first.
LINKS_VERIFIED = 200


@dataclass
class Migrated:
    rows: int
    seconds: float
    counts: dict[str, int]
    answers: int  # analytics answers found equal
    accounts: int
    links: int
    ranges: int


def ranges(now: datetime) -> list[tuple[str, str | None, str | None]]:
    """(days, from, to) as the API takes them: the fixed windows and a range of past days."""
    past = (now - timedelta(days=20)).date().isoformat(), (now - timedelta(days=3)).date().isoformat()
    return [("1", None, None), ("7", None, None), ("30", None, None), ("366", None, None), ("30", *past)]


def migrate(source_path: str | Path, url: str, *, replace: bool = False, stop: StopRequest | None = None) -> Migrated:
    """Progress on stderr (cli/progress.py); Ctrl-C (`stop`) ends the copy between two
    batches, rolled back: the target is left as it was."""
    if not Path(source_path).is_file():
        raise ShortlinkError(f"no SQLite database at {source_path}")
    target = connect(url)
    assert isinstance(target, PostgresConnection)
    try:
        if not replace and not store.is_empty(target):
            raise ShortlinkError(
                f"{describe(url)} already holds data: migrate copies into an empty database "
                "(--replace deletes what it holds first)"
            )
        with _snapshot(source_path) as source:
            started = time.monotonic()
            counts = {table: store.row_count(source, table) for table in store.TABLES}
            with progress("migrate: copying", sum(counts.values()), "rows") as copying:

                def copied(_table: str, rows: int) -> None:
                    copying.advance(rows)
                    if stop is not None:
                        stop.check()

                try:
                    store.copy_all(source, target, BATCH_ROWS, copied, replace=replace)
                except Interrupted:
                    raise Interrupted(f"interrupted: nothing copied, {describe(url)} is as it was") from None
            seconds = time.monotonic() - started
            return _verify(source, target, counts, seconds)
    finally:
        target.close()


@contextlib.contextmanager
def _snapshot(source_path: str | Path):
    """A consistent copy of the live file beside it, deleted afterwards."""
    live = connect_sqlite(source_path)
    handle, name = tempfile.mkstemp(prefix=".migrate-snapshot-", suffix=".db", dir=Path(source_path).parent)
    os.close(handle)
    try:
        with progress("migrate: snapshot", 0, "pages") as copying:

            def step(done: int, total: int) -> None:
                copying.set_total(total)
                copying.advance(done - copying.done)

            backup(live, name, step)
        snapshot = connect_sqlite(name)
        try:
            yield snapshot
        finally:
            snapshot.close()
    finally:
        live.close()
        for suffix in ("", "-wal", "-shm"):
            Path(name + suffix).unlink(missing_ok=True)


def _verify(source: Connection, target: PostgresConnection, counts: dict[str, int], seconds: float) -> Migrated:
    copied = {table: store.row_count(target, table) for table in store.TABLES}
    differing = [
        f"{table}: {counts[table]:,} in SQLite, {copied[table]:,} copied"
        for table in counts
        if counts[table] != copied[table]
    ]
    if differing:
        raise ShortlinkError("the copy differs: " + "; ".join(differing))
    now = utcnow()
    answers = 0
    accounts, links = store.verified_answers(source, LINKS_VERIFIED)
    for days, start, end in ranges(now):
        span = parse_range(days, start, end, now)
        for account_id in accounts:
            _same(
                f"account {account_id}, days={days} from={start} to={end}",
                account_analytics(source, account_id, span, now),
                account_analytics(target, account_id, span, now),
            )
            answers += 1
        for account_id, public_id in links:
            _same(
                f"link {public_id}, days={days} from={start} to={end}",
                link_analytics(source, account_id, public_id, span, now),
                link_analytics(target, account_id, public_id, span, now),
            )
            answers += 1
    return Migrated(sum(counts.values()), seconds, counts, answers, len(accounts), len(links), len(ranges(now)))


def _same(what: str, before: object, after: object) -> None:
    if before != after:
        raise ShortlinkError(f"the copy answers differently: analytics of {what}")
