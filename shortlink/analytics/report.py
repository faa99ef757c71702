"""LinkAnalytics and AccountAnalytics, assembled from rollups and raw clicks.

A range is cut into whole UTC days, read from the daily rollups, and the partial
first and last days, read from raw clicks; the two parts are added, so every
figure equals a computation over raw clicks alone. Figures (human clicks only):

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

import sqlite3
from collections import Counter
from datetime import UTC, datetime, timedelta

import msgspec

from shortlink.analytics.ranges import DAY_MS, Range, to_ms
from shortlink.errors import NotFoundError
from shortlink.storage import analytics as store
from shortlink.storage import links as link_store
from shortlink.storage.clicks import DIMENSIONS
from shortlink.times import to_iso

HOUR_MS = 3_600_000
TOP_VALUES = 10
TOP_URLS = 10
RECENT_CLICKS = 20

# Breakdown field name and label field name per dimension, in DIMENSIONS order.
BREAKDOWN_LABELS = {"device": "device", "browser": "browser", "os": "os", "country": "country",
                    "referrer": "referrer", "campaign": "source"}


class RangeOut(msgspec.Struct, rename={"start": "from", "end": "to"}):
    start: str
    end: str


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


ITEM_TYPES = {"device": DeviceItem, "browser": BrowserItem, "os": OsItem, "country": CountryItem,
              "referrer": ReferrerItem, "campaign": CampaignItem}


class DayClicks(msgspec.Struct):
    date: str
    clicks: int


class HourClicks(msgspec.Struct):
    hour: str
    clicks: int


class RecentClick(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    device: str
    browser: str
    os: str
    country: str
    user_agent: str
    created_at: str


class UrlSummary(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    original_url: str
    title: str
    platform: str
    is_active: bool
    created_at: str


class TopUrl(msgspec.Struct, rename="camel"):
    id: str
    short_code: str
    original_url: str
    title: str
    clicks: int
    created_at: str


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


class LinkAnalytics(AnalyticsFigures, kw_only=True):
    url: UrlSummary
    clicks_by_hour: list[HourClicks]
    recent_clicks: list[RecentClick]


class AccountAnalytics(AnalyticsFigures, kw_only=True):
    total_urls: int
    active_urls: int
    top_urls: list[TopUrl]


class LinkAnalyticsResponse(msgspec.Struct):
    data: LinkAnalytics


class AccountAnalyticsResponse(msgspec.Struct):
    data: AccountAnalytics


def day_text(day_number: int) -> str:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=day_number)).strftime("%Y-%m-%d")


def iso_ms(ms: int) -> str:
    return to_iso(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms))


class _Split:
    """A range as whole days [first_whole, end_whole) plus the raw moments around them."""

    def __init__(self, span: Range):
        self.first_whole = -(-span.start_ms // DAY_MS)
        self.end_whole = (span.end_ms + 1) // DAY_MS
        if self.first_whole >= self.end_whole:
            self.first_whole = self.end_whole = 0
            self.raw = [(span.start_ms, span.end_ms)]
        else:
            self.raw = [(a, b) for a, b in ((span.start_ms, self.first_whole * DAY_MS - 1),
                                            (self.end_whole * DAY_MS, span.end_ms)) if a <= b]

    @property
    def whole_days(self) -> tuple[str, str] | None:
        if self.first_whole == self.end_whole:
            return None
        return day_text(self.first_whole), day_text(self.end_whole - 1)


class _Period:
    """The range figures shared by both endpoints."""

    def __init__(self, conn: sqlite3.Connection, scope: store.Scope, owner: int, span: Range):
        split = _Split(span)
        whole = split.whole_days
        self.by_day: Counter = Counter()
        self.link_clicks: Counter = Counter()
        self.values = {name: Counter() for name in DIMENSIONS}
        visitors = 0
        if whole is not None:
            for day, clicks, day_visitors in store.day_rows(conn, scope, owner, *whole):
                self.by_day[day] += clicks
                visitors += day_visitors
            for code, name in enumerate(DIMENSIONS, start=1):
                self.values[name].update(dict(store.dimension_totals(conn, scope, owner, code, *whole)))
            if scope is store.ACCOUNT:
                self.link_clicks.update(dict(store.link_totals(conn, owner, *whole)))
        partial_visitors: set[tuple[str, str]] = set()
        dimension_columns = [(name, store.RAW_FIELDS.index(name)) for name in DIMENSIONS]
        for start_ms, end_ms in split.raw:
            for row in store.raw_clicks(conn, scope, owner, start_ms, end_ms):
                day = day_text(row[0] // DAY_MS)
                self.by_day[day] += 1
                self.link_clicks[row[1]] += 1
                partial_visitors.add((day, row[2]))
                for name, column in dimension_columns:
                    self.values[name][row[column]] += 1
        self.unique_visitors = visitors + len(partial_visitors)
        self.clicks = sum(self.by_day.values())
        self.series = [DayClicks(day_text(number), self.by_day[day_text(number)])
                       for number in range(span.start_ms // DAY_MS, span.end_ms // DAY_MS + 1)]

    def breakdown(self, name: str) -> list:
        item, label = ITEM_TYPES[name], BREAKDOWN_LABELS[name]
        top = sorted((entry for entry in self.values[name].items() if entry[1] > 0),
                     key=lambda entry: (-entry[1], entry[0]))[:TOP_VALUES]
        return [item(**{label: value, "clicks": clicks, "percentage": percentage(clicks, self.clicks)})
                for value, clicks in top]


def percentage(clicks: int, total: int) -> float:
    return round(100 * clicks / total, 2) if total else 0.0


def _fixed_windows(conn: sqlite3.Connection, scope: store.Scope, owner: int,
                   now: datetime) -> tuple[int, int, int, int]:
    today = now.astimezone(UTC).date()
    monday = today - timedelta(days=today.weekday())
    return (store.clicks_since(conn, scope, owner, ""),
            store.clicks_since(conn, scope, owner, today.isoformat()),
            store.clicks_since(conn, scope, owner, monday.isoformat()),
            store.clicks_since(conn, scope, owner, today.replace(day=1).isoformat()))


def _recent(conn: sqlite3.Connection, scope: store.Scope, owner: int, span: Range) -> list[RecentClick]:
    return [RecentClick(id=f"clk_{row['id']}", short_code=row["short_code"], device=row["device"],
                        browser=row["browser"], os=row["os"], country=row["country"],
                        user_agent=row["user_agent"], created_at=iso_ms(row["ts"]))
            for row in store.recent_clicks(conn, scope, owner, span.start_ms, span.end_ms, RECENT_CLICKS)]


def link_analytics(conn: sqlite3.Connection, account_id: int, public_id: str, span: Range,
                   now: datetime) -> LinkAnalytics:
    with store.snapshot(conn):
        link = link_store.link_of_account(conn, account_id, public_id)
        if link is None:
            raise NotFoundError("no link with this id in the account")
        owner = link["id"]
        total, today, week, month = _fixed_windows(conn, store.LINK, owner, now)
        period = _Period(conn, store.LINK, owner, span)
        current_hour = to_ms(now) // HOUR_MS
        hourly = dict(store.hourly_clicks(conn, store.LINK, owner, (current_hour - 23) * HOUR_MS,
                                          (current_hour + 1) * HOUR_MS - 1))
        return LinkAnalytics(
            url=UrlSummary(id=link["public_id"], short_code=link["short_code"],
                           original_url=link["original_url"], title=link["title"] or "",
                           platform=link["platform"], is_active=bool(link["is_active"]),
                           created_at=link["created_at"]),
            range=RangeOut(iso_ms(span.start_ms), iso_ms(span.end_ms)),
            total_clicks=total, clicks_today=today, clicks_this_week=week, clicks_this_month=month,
            clicks_in_period=period.clicks, unique_visitors=period.unique_visitors,
            **{f"{name}_breakdown": period.breakdown(name) for name in DIMENSIONS},
            clicks_by_day=period.series,
            clicks_by_hour=[HourClicks(iso_ms(hour * HOUR_MS), hourly.get(hour, 0))
                            for hour in range(current_hour - 23, current_hour + 1)],
            recent_clicks=_recent(conn, store.LINK, owner, span),
        )


def _top_urls(conn: sqlite3.Connection, link_clicks: Counter) -> list[TopUrl]:
    ranked = sorted((clicks for clicks in link_clicks.values() if clicks > 0), reverse=True)
    if not ranked:
        return []
    # Every link tied with the last place is a candidate: ties are broken by short code.
    threshold = ranked[min(TOP_URLS, len(ranked)) - 1]
    links = store.links_by_id(conn, [link_id for link_id, clicks in link_clicks.items() if clicks >= threshold])
    urls = [TopUrl(id=row["public_id"], short_code=row["short_code"], original_url=row["original_url"],
                   title=row["title"] or "", clicks=link_clicks[link_id], created_at=row["created_at"])
            for link_id, row in links.items()]
    return sorted(urls, key=lambda url: (-url.clicks, url.short_code))[:TOP_URLS]


def account_analytics(conn: sqlite3.Connection, account_id: int, span: Range,
                      now: datetime) -> AccountAnalytics:
    with store.snapshot(conn):
        total, today, week, month = _fixed_windows(conn, store.ACCOUNT, account_id, now)
        period = _Period(conn, store.ACCOUNT, account_id, span)
        urls, active = store.link_counts(conn, account_id, to_iso(now))
        top_urls = _top_urls(conn, period.link_clicks)
        return AccountAnalytics(
            range=RangeOut(iso_ms(span.start_ms), iso_ms(span.end_ms)),
            total_clicks=total, clicks_today=today, clicks_this_week=week, clicks_this_month=month,
            clicks_in_period=period.clicks, unique_visitors=period.unique_visitors,
            **{f"{name}_breakdown": period.breakdown(name) for name in DIMENSIONS},
            clicks_by_day=period.series, total_urls=urls, active_urls=active, top_urls=top_urls,
        )
