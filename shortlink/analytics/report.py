"""LinkAnalytics and AccountAnalytics, assembled from rollups and raw clicks.

A range is cut into whole UTC days, read from the daily rollups, and the partial
first and last days (read from their daily rollup when nothing of that day lies
outside the range). An account's partial day is read from its hourly rollups for the
whole hours and from raw clicks for at most two partial hours; a link's, which holds
few clicks, from raw clicks. The parts are added, so every figure equals a
computation over raw clicks alone. Figures (human clicks only):

- totalClicks: all time; clicksToday / clicksThisWeek / clicksThisMonth: since
  00:00 UTC of today / of this week's Monday / of the 1st of this month.
- clicksInPeriod, breakdowns, clicksByDay, uniqueVisitors, recentClicks, topUrls: the range.
- Breakdowns: the top 10 values by clicks, ties broken by label; percentage =
  100 × clicks / clicksInPeriod rounded to 2 decimals (0 when there are no clicks).
- uniqueVisitors: distinct visitor hashes per UTC day, summed over the range's days.
- clicksByHour: the 24 hours ending with the current one, zero-filled.
- recentClicks: the newest RECENT_CLICKS human clicks of the range.
- topUrls: the TOP_URLS links with the most clicks in the range (links without
  clicks in the range are not listed), ties broken by short code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any, NamedTuple

import msgspec

from shortlink.analytics.ranges import DAY_MS, Range, to_ms
from shortlink.errors import NotFoundError
from shortlink.storage import Connection
from shortlink.storage import analytics as store
from shortlink.storage import links as link_store
from shortlink.storage.clicks import DIMENSIONS
from shortlink.storage.labels import UNKNOWN
from shortlink.times import Day, Timestamp, to_iso

HOUR_MS = 3_600_000
TOP_VALUES = 10
TOP_URLS = 10
# Links tried by all-time clicks before summing every link's range instead.
TOP_LINK_PROBES = 200
PROBE_BATCH = 16  # links counted by the first query of the probes
RECENT_CLICKS = 20

# Breakdown field name and label field name per dimension, in DIMENSIONS order.
BREAKDOWN_LABELS = {
    "device": "device",
    "browser": "browser",
    "os": "os",
    "country": "country",
    "referrer": "referrer",
    "campaign": "source",
}


class RangeOut(msgspec.Struct, rename={"start": "from", "end": "to"}):
    start: Timestamp
    end: Timestamp


class DeviceItem(msgspec.Struct):
    device: str
    clicks: int
    percentage: float


class BrowserItem(msgspec.Struct):
    browser: str
    clicks: int
    percentage: float


class OsItem(msgspec.Struct):
    os: str
    clicks: int
    percentage: float


class CountryItem(msgspec.Struct):
    country: str
    clicks: int
    percentage: float


class ReferrerItem(msgspec.Struct):
    referrer: str
    clicks: int
    percentage: float


class CampaignItem(msgspec.Struct):
    source: str
    clicks: int
    percentage: float


ITEM_TYPES: dict[str, type[Any]] = {
    "device": DeviceItem,
    "browser": BrowserItem,
    "os": OsItem,
    "country": CountryItem,
    "referrer": ReferrerItem,
    "campaign": CampaignItem,
}


class DayClicks(msgspec.Struct):
    date: Day
    clicks: int


class HourClicks(msgspec.Struct):
    hour: Timestamp
    clicks: int


class RecentClick(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    device: str
    browser: str
    os: str
    country: str
    user_agent: str
    created_at: Timestamp


class UrlSummary(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    original_url: str
    title: str
    platform: str
    is_active: bool
    created_at: Timestamp


class TopUrl(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    original_url: str
    title: str
    clicks: int
    created_at: Timestamp


class AnalyticsFigures(msgspec.Struct, rename="camel", kw_only=True):
    """The figures both analytics responses share."""

    range: RangeOut
    total_clicks: int
    clicks_today: int
    clicks_this_week: int
    clicks_this_month: int
    clicks_in_period: int
    unique_visitors: int
    device_breakdown: list[DeviceItem]
    browser_breakdown: list[BrowserItem]
    os_breakdown: list[OsItem]
    country_breakdown: list[CountryItem]
    referrer_breakdown: list[ReferrerItem]
    campaign_breakdown: list[CampaignItem]
    clicks_by_day: list[DayClicks]
    recent_clicks: list[RecentClick]


class LinkAnalytics(AnalyticsFigures, kw_only=True):
    url: UrlSummary
    clicks_by_hour: list[HourClicks]


class AccountAnalytics(AnalyticsFigures, kw_only=True):
    total_urls: int
    active_urls: int
    top_urls: list[TopUrl]


class LinkAnalyticsResponse(msgspec.Struct):
    data: LinkAnalytics


class AccountAnalyticsResponse(msgspec.Struct):
    data: AccountAnalytics


EPOCH_DAY = date(1970, 1, 1)


def day_text(day_number: int) -> str:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=day_number)).strftime("%Y-%m-%d")


def iso_ms(ms: int) -> str:
    return to_iso(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms))


class DayPart(NamedTuple):
    """A partial day read in hours: its whole hours from the hourly rollups (`hours`, since the
    epoch, both included; None when there are none) and at most two partial hours (`pieces`)
    from raw clicks."""

    day: int
    hours: tuple[int, int] | None
    pieces: list[tuple[int, int]]


class _Split:
    """A range as whole days read from the daily rollups plus the partial first and last days.

    A partial first or last day is read from its daily rollup when the part of that
    day outside the range holds no click at all (the usual case for the last day:
    the range ends now), so the rollup's figures are exactly the range's. Otherwise an
    account's partial day is read in hours (`parts`, with the same shortcut for its partial
    hours), and a link's from raw clicks (`raw`): a link's day holds few clicks. Without
    rollups, the whole range is raw: the same answer computed from raw clicks alone (what
    the benchmark compares against, and the tests check)."""

    def __init__(self, span: Range, has_clicks: Callable[[int, int], bool] | None, hours: bool = False):
        self.raw: list[tuple[int, int]] = []
        self.parts: list[DayPart] = []
        self.whole_days: tuple[str, str] | None = None
        if has_clicks is None:
            self.raw = [(span.start_ms, span.end_ms)]
            return
        first_day, last_day = span.start_ms // DAY_MS, span.end_ms // DAY_MS
        whole_from, whole_to = first_day, last_day
        for day in sorted({first_day, last_day}):
            low, high = max(span.start_ms, day * DAY_MS), min(span.end_ms, (day + 1) * DAY_MS - 1)
            if not _outside_has_clicks(day * DAY_MS, low, high, (day + 1) * DAY_MS - 1, has_clicks):
                continue
            if hours:
                self.parts.append(_in_hours(day, low, high, has_clicks))
            else:
                self.raw.append((low, high))
            if day == first_day:
                whole_from = day + 1
            if day == last_day:
                whole_to = day - 1
        if whole_from <= whole_to:
            self.whole_days = (day_text(whole_from), day_text(whole_to))

    @property
    def hour_spans(self) -> list[tuple[int, int]]:
        return [part.hours for part in self.parts if part.hours is not None]


def _outside_has_clicks(first: int, low: int, high: int, last: int, has_clicks: Callable[[int, int], bool]) -> bool:
    """Whether [first, last] holds a click outside [low, high]."""
    return any(has_clicks(a, b) for a, b in ((first, low - 1), (high + 1, last)) if a <= b)


def _in_hours(day: int, low: int, high: int, has_clicks: Callable[[int, int], bool]) -> DayPart:
    """The part [low, high] of a day as whole hours and at most two partial hours."""
    first_hour, last_hour = low // HOUR_MS, high // HOUR_MS
    hour_from, hour_to = first_hour, last_hour
    pieces = []
    for hour in sorted({first_hour, last_hour}):
        a, b = max(low, hour * HOUR_MS), min(high, (hour + 1) * HOUR_MS - 1)
        if _outside_has_clicks(hour * HOUR_MS, a, b, (hour + 1) * HOUR_MS - 1, has_clicks):
            pieces.append((a, b))
            if hour == first_hour:
                hour_from = hour + 1
            if hour == last_hour:
                hour_to = hour - 1
    return DayPart(day, (hour_from, hour_to) if hour_from <= hour_to else None, pieces)


class _Period:
    """The range figures shared by both endpoints."""

    def __init__(self, conn: Connection, scope: store.Scope, owner: int, span: Range, rollups: bool = True):
        has_clicks = (lambda a, b: store.has_clicks(conn, scope, owner, a, b)) if rollups else None
        self.split = split = _Split(span, has_clicks, hours=scope == store.ACCOUNT)
        self.whole = whole = split.whole_days
        self.by_day: Counter = Counter()
        self.link_clicks: Counter = Counter()  # raw parts only; see _clicks_of_top_links
        self.values: dict[str, Counter] = {name: Counter() for name in DIMENSIONS}
        self.unique_visitors = 0
        if whole is not None:
            for day, clicks, day_visitors in store.day_rows(conn, scope, owner, *whole):
                self.by_day[day] += clicks
                self.unique_visitors += day_visitors
            stored = [store.dimension_totals(conn, scope, owner, code, *whole) for code in range(1, 7)]
            self._add_stored(sum(self.by_day.values()), stored)
        for part in split.parts:
            self._add_hours(conn, owner, part)
        # The raw parts never share a day with each other or with the whole days,
        # so their per-day distinct visitors simply add up.
        for start_ms, end_ms in split.raw:
            self._add_raw(conn, scope, owner, start_ms, end_ms, count_visitors=True)
        self.clicks = sum(self.by_day.values())
        self.series = [
            DayClicks(day_text(number), self.by_day[day_text(number)])
            for number in range(span.start_ms // DAY_MS, span.end_ms // DAY_MS + 1)
        ]

    def _add_stored(self, clicks: int, stored: list[list[tuple[str, int]]]) -> None:
        """Add rollup rows of `clicks` human clicks, one list of (value, clicks) per dimension."""
        for name, rows in zip(DIMENSIONS, stored, strict=True):
            values = dict(rows)
            # The unknown label's rows are not stored: it has every click the others lack.
            values[UNKNOWN[name]] = clicks - sum(values.values())
            self.values[name].update(values)

    def _add_hours(self, conn: Connection, account_id: int, part: DayPart) -> None:
        """An account's partial day: its whole hours from the hourly rollups, its partial hours
        raw, and its distinct visitors over both at once (a visitor counts once a day)."""
        if part.hours is not None:
            clicks = sum(hour_clicks for _, hour_clicks in store.hour_rows(conn, account_id, *part.hours))
            self.by_day[day_text(part.day)] += clicks
            stored = [store.hour_dimension_totals(conn, account_id, code, *part.hours) for code in range(1, 7)]
            self._add_stored(clicks, stored)
        for start_ms, end_ms in part.pieces:
            self._add_raw(conn, store.ACCOUNT, account_id, start_ms, end_ms, count_visitors=False)
        hours_of_day = (part.hours[0] % 24, part.hours[1] % 24) if part.hours else None
        self.unique_visitors += store.visitors_in_day_part(
            conn, account_id, day_text(part.day), hours_of_day, part.pieces
        )

    def _add_raw(
        self, conn: Connection, scope: store.Scope, owner: int, start_ms: int, end_ms: int, count_visitors: bool
    ) -> None:
        for kind, value, clicks in store.raw_counts(conn, scope, owner, start_ms, end_ms):
            if kind == "day":
                self.by_day[day_text(value)] += clicks
            elif kind == "link":
                self.link_clicks[value] += clicks
            elif kind == "visitors":
                self.unique_visitors += clicks if count_visitors else 0
            else:
                self.values[kind][value] += clicks

    def breakdown(self, name: str) -> list:
        item, label = ITEM_TYPES[name], BREAKDOWN_LABELS[name]
        top = sorted(
            (entry for entry in self.values[name].items() if entry[1] > 0), key=lambda entry: (-entry[1], entry[0])
        )[:TOP_VALUES]
        return [
            item(**{label: value, "clicks": clicks, "percentage": percentage(clicks, self.clicks)})
            for value, clicks in top
        ]


def percentage(clicks: int, total: int) -> float:
    return round(100 * clicks / total, 2) if total else 0.0


def _fixed_windows(conn: Connection, scope: store.Scope, owner: int, now: datetime, rollups: bool) -> tuple[int, ...]:
    """All time, today, this week (from Monday) and this month, each from 00:00 UTC."""
    today = now.astimezone(UTC).date()
    starts = (None, today, today - timedelta(days=today.weekday()), today.replace(day=1))
    if rollups:
        return tuple(store.clicks_since(conn, scope, owner, start.isoformat() if start else "") for start in starts)
    return tuple(
        store.raw_clicks_since(conn, scope, owner, (start - EPOCH_DAY).days * DAY_MS if start else 0)
        for start in starts
    )


def _recent(conn: Connection, scope: store.Scope, owner: int, span: Range) -> list[RecentClick]:
    return [
        RecentClick(
            id=f"clk_{row['id']}",
            short_code=row["short_code"],
            device=row["device"],
            browser=row["browser"],
            os=row["os"],
            country=row["country"],
            user_agent=row["user_agent"],
            created_at=iso_ms(row["ts"]),
        )
        for row in store.recent_clicks(conn, scope, owner, span.start_ms, span.end_ms, RECENT_CLICKS)
    ]


def _figures(
    conn: Connection, scope: store.Scope, owner: int, span: Range, now: datetime, rollups: bool
) -> tuple[dict[str, Any], _Period]:
    """The AnalyticsFigures fields of one link or account, and its period's counts (an account's
    report ranks its top links by them)."""
    total, today, week, month = _fixed_windows(conn, scope, owner, now, rollups)
    period = _Period(conn, scope, owner, span, rollups)
    figures = {
        "range": RangeOut(iso_ms(span.start_ms), iso_ms(span.end_ms)),
        "total_clicks": total,
        "clicks_today": today,
        "clicks_this_week": week,
        "clicks_this_month": month,
        "clicks_in_period": period.clicks,
        "unique_visitors": period.unique_visitors,
        **{f"{name}_breakdown": period.breakdown(name) for name in DIMENSIONS},
        "clicks_by_day": period.series,
        "recent_clicks": _recent(conn, scope, owner, span),
    }
    return figures, period


def link_analytics(
    conn: Connection, account_id: int, public_id: str, span: Range, now: datetime, rollups: bool = True
) -> LinkAnalytics:
    with store.snapshot(conn):
        link = link_store.link_of_account(conn, account_id, public_id)
        if link is None:
            raise NotFoundError("no link with this id in the account")
        owner = link["id"]
        figures, _ = _figures(conn, store.LINK, owner, span, now, rollups)
        current_hour = to_ms(now) // HOUR_MS
        hourly = dict(
            store.hourly_clicks(
                conn, store.LINK, owner, (current_hour - 23) * HOUR_MS, (current_hour + 1) * HOUR_MS - 1
            )
        )
        return LinkAnalytics(
            url=UrlSummary(
                id=link["public_id"],
                short_code=link["short_code"],
                original_url=link["original_url"],
                title=link["title"] or "",
                platform=link["platform"],
                is_active=bool(link["is_active"]),
                created_at=link["created_at"],
            ),
            clicks_by_hour=[
                HourClicks(iso_ms(hour * HOUR_MS), hourly.get(hour, 0))
                for hour in range(current_hour - 23, current_hour + 1)
            ],
            **figures,
        )


def _clicks_of_top_links(conn: Connection, account_id: int, period: _Period) -> Counter:
    """Range clicks of every link that can be among the top URLs (ties included).

    Summing the daily rollups of every link over a long range reads links × days rows
    (3.6 million for 10k links over a year). Instead, links are tried in order of
    their all-time click count, an upper bound of their clicks in any range, until no
    remaining link can reach the current last place. If that takes too many tries
    (a range where the all-time leaders were quiet), every link is summed after all.
    """
    whole, hour_spans = period.whole, period.split.hour_spans
    if whole is None and not hour_spans:
        return period.link_clicks
    exact: Counter = Counter()
    candidates = store.links_by_all_time_clicks(conn, account_id, TOP_LINK_PROBES + 1)
    counted: dict[int, int] = {}
    for position, (link_pk, bound) in enumerate(candidates):
        ranked = sorted(exact.values(), reverse=True)
        if len(ranked) >= TOP_URLS and bound < ranked[TOP_URLS - 1]:
            return exact
        if position == TOP_LINK_PROBES:
            break
        if link_pk not in counted:
            # The next links in one query, twice as many each time: a statement per link cost
            # PostgreSQL a round trip each (docs/performance.md, "Analytics at scale").
            batch = [pk for pk, _ in candidates[position : min(2 * position + PROBE_BATCH, TOP_LINK_PROBES)]]
            counted = dict.fromkeys(batch, 0) | _range_clicks(conn, batch, whole, hour_spans)
        exact[link_pk] = counted[link_pk] + period.link_clicks[link_pk]
    else:
        return exact  # every link of the account was tried
    totals = Counter(dict(store.link_totals(conn, account_id, *whole))) if whole else Counter()
    for hours in hour_spans:
        totals.update(dict(store.raw_link_clicks(conn, account_id, *_moments(hours))))
    totals.update(period.link_clicks)
    return totals


def _range_clicks(
    conn: Connection, link_pks: list[int], whole: tuple[str, str] | None, hour_spans: list[tuple[int, int]]
) -> Counter:
    """Clicks of these links over the range's whole days and whole hours."""
    clicks: Counter = Counter(dict(store.links_clicks_between(conn, link_pks, *whole))) if whole else Counter()
    for hours in hour_spans:
        clicks.update(dict(store.links_clicks_in_hours(conn, link_pks, *hours)))
    return clicks


def _moments(hours: tuple[int, int]) -> tuple[int, int]:
    """The first and last millisecond of a span of whole hours."""
    return hours[0] * HOUR_MS, (hours[1] + 1) * HOUR_MS - 1


def _top_urls(conn: Connection, link_clicks: Counter) -> list[TopUrl]:
    ranked = sorted((clicks for clicks in link_clicks.values() if clicks > 0), reverse=True)
    if not ranked:
        return []
    # Every link tied with the last place is a candidate: ties are broken by short code.
    threshold = ranked[min(TOP_URLS, len(ranked)) - 1]
    links = store.links_by_pk(conn, [link_pk for link_pk, clicks in link_clicks.items() if clicks >= threshold])
    urls = [
        TopUrl(
            id=row["public_id"],
            short_code=row["short_code"],
            original_url=row["original_url"],
            title=row["title"] or "",
            clicks=link_clicks[link_pk],
            created_at=row["created_at"],
        )
        for link_pk, row in links.items()
    ]
    return sorted(urls, key=lambda url: (-url.clicks, url.short_code))[:TOP_URLS]


def account_analytics(
    conn: Connection, account_id: int, span: Range, now: datetime, rollups: bool = True
) -> AccountAnalytics:
    with store.snapshot(conn):
        figures, period = _figures(conn, store.ACCOUNT, account_id, span, now, rollups)
        urls, active = store.link_counts(conn, account_id, to_iso(now))
        top_urls = _top_urls(conn, _clicks_of_top_links(conn, account_id, period))
        return AccountAnalytics(total_urls=urls, active_urls=active, top_urls=top_urls, **figures)
