"""The raw clicks of a range as JSON lines, with no visitor identity.

One object a line, oldest first:

    {"code": "spring", "time": "2026-11-20T10:00:00.123Z", "device": "mobile",
     "browser": "Mobile Safari", "os": "iOS", "country": "FR", "referrer": "news.example",
     "campaign": "newsletter", "user_agent": "Mozilla/5.0 ...", "visitor": 3, "is_bot": false}

`referrer` is the referring host as analytics count it ("" for none), `campaign` the
short URL's `utm_source` ("" for none), `country` ISO alpha-2 ("" unknown). No IP is ever
stored, and the stored visitor hash is not written either: `visitor` numbers the distinct
visitors of each UTC day (1, 2, ... in order of their first click that day), so unique
visitors can be counted again, and imported (`shortlink import csv --clicks`) with the same
figures, while nothing links a visitor across days or to the hash.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import msgspec

from shortlink.analytics.ranges import DAY_MS
from shortlink.errors import ValidationError
from shortlink.storage import Connection, Row
from shortlink.storage import click_export as store
from shortlink.storage.labels import DIRECT, NO_CAMPAIGN, UNKNOWN_COUNTRY

PAGE = 5000  # clicks per read: a page is a few MB at most, whatever the range


class RawClick(msgspec.Struct):
    code: str
    time: str
    device: str
    browser: str
    os: str
    country: str
    referrer: str
    campaign: str
    user_agent: str
    visitor: int
    is_bot: bool


def click_range(start: str | None, end: str | None) -> tuple[int, int]:
    """[start, end) in Unix ms from `from` / `to` dates (YYYY-MM-DD, UTC, `to` included)
    or ISO 8601 times; either may be left out (all history, up to now)."""
    start_ms = 0 if not start else _moment("from", start, 0)
    end_ms = 2**62 if not end else _moment("to", end, DAY_MS)
    if start_ms >= end_ms:
        raise ValidationError("from", "must be before to")
    return start_ms, end_ms


def _moment(field: str, text: str, day_extra: int) -> int:
    try:
        if len(text) == 10:
            return int(datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC).timestamp() * 1000) + (
                day_extra
            )
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError(field, "must be a date (YYYY-MM-DD) or an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


class VisitorNumbers:
    """Each day's visitor hashes as 1, 2, ...; forgets a day once the (ts-ordered) rows leave it."""

    def __init__(self) -> None:
        self.day = -1
        self.numbers: dict[int, int] = {}

    def number(self, ts: int, visitor_hash: int) -> int:
        day = ts // DAY_MS
        if day != self.day:
            self.day, self.numbers = day, {}
        return self.numbers.setdefault(visitor_hash, len(self.numbers) + 1)


def raw_clicks(rows: list[Row], visitors: VisitorNumbers) -> Iterator[RawClick]:
    for row in rows:
        yield RawClick(
            code=row["short_code"],
            time=_iso_ms(row["ts"]),
            device=row["device"],
            browser=row["browser"],
            os=row["os"],
            country="" if row["country"] == UNKNOWN_COUNTRY else row["country"],
            referrer="" if row["referrer"] == DIRECT else row["referrer"],
            campaign="" if row["campaign"] == NO_CAMPAIGN else row["campaign"],
            user_agent=row["user_agent"],
            visitor=visitors.number(row["ts"], row["visitor"]),
            is_bot=bool(row["is_bot"]),
        )


def _iso_ms(ts: int) -> str:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ts)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def jsonl(clicks: Iterator[RawClick]) -> str:
    return "".join(msgspec.json.encode(click).decode() + "\n" for click in clicks)


class Cursor(msgspec.Struct):
    """Where an export stands: the last (ts, id) written and the day's visitor numbers."""

    account_id: int
    start_ms: int
    end_ms: int
    after: tuple[int, int] = (-1, 0)
    visitors: VisitorNumbers | None = None
    done: bool = False


def next_page(conn: Connection, cursor: Cursor) -> str:
    """The next page of the export as JSON lines ("" once done): one read per page, so a
    server streams it between other work and never holds the range."""
    if cursor.visitors is None:
        cursor.visitors = VisitorNumbers()
    rows = store.clicks_page(conn, cursor.account_id, cursor.start_ms, cursor.end_ms, cursor.after, PAGE)
    if len(rows) < PAGE:
        cursor.done = True
    if not rows:
        return ""
    cursor.after = (rows[-1]["ts"], rows[-1]["id"])
    return jsonl(raw_clicks(rows, cursor.visitors))


def lines(conn: Connection, account_id: int, start_ms: int, end_ms: int) -> Iterator[str]:
    """Every page of the range, for the CLI."""
    cursor = Cursor(account_id, start_ms, end_ms)
    while not cursor.done:
        page = next_page(conn, cursor)
        if page:
            yield page
